package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.mesh.manifest.RolloutSpec;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Data of {@code /mesh/rollouts/<module>} (SPEC.md, "Rollouts"; docs/decisions/0013-rollouts.md): the rollout of the
 * module's newest push, written by coordinators alone (SPEC.md, "Identities"): started in the push's transaction with
 * one {@link RolloutHostRecord} child per host, resumed or aborted for an operator, and folded. Each host's agent
 * writes only its own child; {@link #view} derives where the rollout is from this node's control fields
 * ({@link #hosts}, {@link #onFailure}, an abort, {@link #resumedPast}) and the children, and a coordinator writes that
 * view back here ({@link #done}, {@link #applying}, {@link #waiting}, {@link #failed}, {@link #state}), so that
 * {@code zkCli} shows SPEC's fields. The rules are pure functions here, so agents and coordinators apply the same ones.
 *
 * @param module      module name
 * @param push        the push being rolled out
 * @param revision    its revision
 * @param state       where the rollout is ({@code aborted} is written by an operator's abort; the others are folded)
 * @param canary      the hosts that go first
 * @param done        hosts that applied the push and are ready
 * @param applying    hosts applying it now (each holds a slot of {@code /mesh/slots/rollout-<module>})
 * @param waiting     hosts whose wave has not come; they keep the previous revision
 * @param failed      hosts whose apply of the push failed; they keep the previous revision
 * @param since       when the rollout began (the push)
 * @param hosts       the hosts the push targeted when it was taken (for {@code ["*"]}: those with an agent); each has
 *                    a child node
 * @param maxParallel hosts applying at once, resolved from {@code max-parallel}; {@code null} for no limit
 * @param onFailure   what a failure does
 * @param previous    the desired state before the push (what hosts that have not started keep), {@code null} for a
 *                    module that had none
 * @param by          who pushed
 * @param note        why the rollout is where it is (the failure that paused it, who resumed or aborted it)
 * @param resumedAt   when an operator last resumed it, else {@code null}
 * @param resumedPast the hosts that had failed when it was last resumed: their failures no longer pause it and they
 *                    count as settled
 * @param changedAt   when the record last changed
 * @param promote     {@code manual}: the hosts after the canaries wait for an operator's promote; {@code null} (old
 *                    nodes too) for {@code auto}
 * @param promotedAt  when an operator promoted it, else {@code null}
 * @param maxFailed   how many hosts may fail before {@link #onFailure} applies, resolved from {@code max-failed};
 *                    {@code null} (old nodes too) for 0
 * @param soak        {@code rollout.soak} as pushed, such as {@code 5m}: how long the hosts last done stay ready before
 *                    the next begin; {@code null} for no wait
 * @param doneAt      when the host last done became done (its node's {@code since}), derived; {@code null} when none is
 * @param drained     hosts drained while the rollout waited for them (decision 37): passed over, counted settled; they
 *                    keep the previous revision until undrained
 */
@JsonPropertyOrder({"module", "push", "revision", "state", "canary", "done", "applying", "waiting", "failed", "since"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RolloutRecord(String module, String push, String revision, RolloutState state, List<String> canary,
                            List<String> done, List<String> applying, List<String> waiting, List<String> failed,
                            Instant since, List<String> hosts, Integer maxParallel, RolloutSpec.OnFailure onFailure,
                            DesiredRecord previous, String by, String note, Instant resumedAt, List<String> resumedPast,
                            Instant changedAt, RolloutSpec.Promote promote, Instant promotedAt, Integer maxFailed, String soak,
                            Instant doneAt, List<String> drained) {
    /** A record of no drained host (as nodes written before drains read). */
    public RolloutRecord(String module, String push, String revision, RolloutState state, List<String> canary,
                         List<String> done, List<String> applying, List<String> waiting, List<String> failed,
                         Instant since, List<String> hosts, Integer maxParallel, RolloutSpec.OnFailure onFailure,
                         DesiredRecord previous, String by, String note, Instant resumedAt, List<String> resumedPast,
                         Instant changedAt, RolloutSpec.Promote promote, Instant promotedAt, Integer maxFailed, String soak,
                         Instant doneAt) {
        this(module, push, revision, state, canary, done, applying, waiting, failed, since, hosts, maxParallel, onFailure, previous, by,
                note, resumedAt, resumedPast, changedAt, promote, promotedAt, maxFailed, soak, doneAt, null);
    }

    public RolloutRecord {
        canary = sorted(canary);
        done = sorted(done);
        applying = sorted(applying);
        waiting = sorted(waiting);
        failed = sorted(failed);
        hosts = sorted(hosts);
        resumedPast = sorted(resumedPast);
        drained = drained == null || drained.isEmpty() ? null : sorted(drained); // absent when none, as old nodes
        onFailure = onFailure == null ? RolloutSpec.OnFailure.PAUSE : onFailure;
        promote = promote == RolloutSpec.Promote.AUTO ? null : promote; // as old nodes: absent for auto
        maxFailed = maxFailed != null && maxFailed == 0 ? null : maxFailed;
    }

    /** @return the hosts passed over as drained ({@link #drained}), never {@code null} */
    public List<String> drainedHosts() { return drained == null ? List.of() : drained; }

    /** @return {@link #maxFailed}, or 0 */
    public int maxFailedOrNone() { return maxFailed == null ? 0 : maxFailed; }

    /**
     * @return when the hosts that have not begun may begin after the soak of the hosts last done ({@link #doneAt} plus
     *         {@link #soak}); {@code null} without a soak or before any host is done
     */
    public Instant soakUntil() {
        if (soak == null || doneAt == null) return null;
        try {
            return doneAt.plus(io.mesh.manifest.Durations.parse(soak));
        } catch (IllegalArgumentException e) {
            return null; // the parser refused it at the push: a node written by hand soaks for nothing
        }
    }

    /** @return true when the hosts after the canaries wait for an operator's promote that has not come */
    public boolean awaitsPromotion() { return promote == RolloutSpec.Promote.MANUAL && promotedAt == null; }

    private static List<String> sorted(Collection<String> l) {
        if (l == null) return List.of();
        // Every reader derives the rollout at each move of every host (view), from lists already in order: keep them
        // as they are then, instead of sorting each again (B10: docs/benchmark-notes.md).
        if (l instanceof List<String> list && ascending(list)) return List.copyOf(list);
        return List.copyOf(new TreeSet<>(l));
    }

    private static boolean ascending(List<String> l) {
        for (int i = 1; i < l.size(); i++) {
            if (l.get(i - 1).compareTo(l.get(i)) >= 0) return false;
        }
        return true;
    }

    /**
     * The record a push writes.
     *
     * @param desired  the pushed desired state (its spec has a {@code rollout})
     * @param hosts    the hosts it targets now
     * @param online   the hosts with an agent now: canaries are chosen among them first (by name), so that a host
     *                 named in the manifest whose agent is down does not hold every other host back
     * @param previous the desired state it replaces, or {@code null}
     * @param by       who pushed
     * @param at       when
     * @return a {@code rolling} record with every host waiting; {@link #startChildren} are its children
     */
    public static RolloutRecord start(DesiredRecord desired, List<String> hosts, Set<String> online, DesiredRecord previous,
                                      String by, Instant at) {
        RolloutSpec r = desired.spec().rollout();
        List<String> targets = sorted(hosts);
        List<String> byChoice = new ArrayList<>(targets.stream().filter(online::contains).toList());
        targets.stream().filter(h -> !online.contains(h)).forEach(byChoice::add);
        List<String> canary = byChoice.subList(0, Math.min(r.canaryOrNone(), byChoice.size()));
        DesiredRecord prev = previous == null || previous.tombstone() || previous.spec() == null ? null : previous;
        return new RolloutRecord(desired.module(), desired.push(), desired.revision(),
                targets.isEmpty() ? RolloutState.DONE : RolloutState.ROLLING, canary, List.of(), List.of(), targets, List.of(), at,
                targets, r.resolveMaxParallel(targets.size()), r.onFailureOrDefault(), prev, by, null, null, null, at,
                r.promoteOrDefault(), null, r.resolveMaxFailed(targets.size()), r.soak(), null);
    }

    /** @return the children a push writes with this record: one {@code waiting} node per host */
    public List<RolloutHostRecord> startChildren() {
        return hosts.stream().map(h -> RolloutHostRecord.waiting(h, push, since)).toList();
    }

    /** @return this record without the previous spec (for views: it is the desired state a push replaced) */
    public RolloutRecord withoutPrevious() {
        return new RolloutRecord(module, push, revision, state, canary, done, applying, waiting, failed, since, hosts, maxParallel,
                onFailure, null, by, note, resumedAt, resumedPast, changedAt, promote, promotedAt, maxFailed, soak, doneAt, drained);
    }

    /** @return true when this record is the rollout of {@code desired}'s push */
    public boolean of(DesiredRecord desired) {
        return desired != null && push != null && push.equals(desired.push());
    }

    /**
     * @param host a host id
     * @return true when the record names the host, targeted or met since (in {@code hosts} or any of the state lists,
     *         each sorted: a binary search each; asked at each look of each host)
     */
    public boolean names(String host) {
        for (List<String> l : List.of(hosts, done, applying, waiting, failed, drainedHosts())) {
            if (Collections.binarySearch(l, host) >= 0) return true;
        }
        return false;
    }

    /**
     * @return true when every canary is settled: done, or failed where a failure does not stop the rollout
     *         ({@code on-failure: continue}, or resumed past); a drained canary is not (decision 37)
     */
    public boolean canariesDone() {
        // A drained canary has not run the push: the others wait for it (a reviewer: draining the one canary would otherwise
        // roll an untried push everywhere).
        return canary.stream().allMatch(h -> done.contains(h) || (failed.contains(h) && failedSettled(h)));
    }

    /**
     * @return true when {@code host}'s failure counts as settled: under {@code on-failure: continue}, resumed past, or
     *         while the failures are within {@code max-failed}
     */
    private boolean failedSettled(String host) {
        return onFailure == RolloutSpec.OnFailure.CONTINUE || resumedPast.contains(host)
                || failed.stream().filter(h -> !resumedPast.contains(h)).count() <= maxFailedOrNone();
    }

    /**
     * Where the rollout is, derived from this node's control fields and the hosts' children: the one rule agents decide
     * by and coordinators fold by (decision 13). Each host of {@link #hosts} is where its child says, {@code waiting}
     * without one; a child of another push (left by a write that raced a newer push) counts as none. The state:
     * {@code aborted} when an operator aborted it; else {@code reverted} when a host failed under
     * {@code on-failure: revert}; else {@code paused} when a host failed under {@code pause} and was not resumed past;
     * else {@code done} when every host is done, or failed and settled; else {@code rolling}.
     *
     * @param children the nodes under this one (any order; others' pushes are ignored)
     * @return this record with the lists, state and note derived; its control fields unchanged. A rollout with hosts
     *         but no node under it at all was started before hosts had nodes (every push writes them): it is returned
     *         as it is, so that a fold does not wipe its lists
     */
    public RolloutRecord view(Collection<RolloutHostRecord> children) {
        if (children.isEmpty() && !hosts.isEmpty()) return this;
        Map<String, RolloutHostRecord> byHost = new HashMap<>();
        for (RolloutHostRecord c : children) {
            if (c != null && c.host() != null && push != null && push.equals(c.push())) byHost.put(c.host(), c);
        }
        // Every agent derives this at each move of every host: no sorting when the children are the push's hosts (hosts
        // is sorted already), which they are but for a host added by hand.
        Collection<String> all = hosts;
        if (!byHost.keySet().stream().allMatch(h -> Collections.binarySearch(hosts, h) >= 0)) {
            TreeSet<String> more = new TreeSet<>(hosts);
            more.addAll(byHost.keySet());
            all = more;
        }
        List<String> d = new ArrayList<>(), a = new ArrayList<>(), w = new ArrayList<>(), f = new ArrayList<>(), dr = new ArrayList<>();
        Instant changed = changedAt;
        Instant lastDone = null;
        for (String h : all) {
            RolloutHostRecord c = byHost.get(h);
            RolloutHostState s = c == null || c.state() == null ? RolloutHostState.WAITING : c.state();
            if (s == RolloutHostState.DONE && c.since() != null && (lastDone == null || c.since().isAfter(lastDone))) lastDone = c.since();
            switch (s) {
                case DONE -> d.add(h);
                case APPLYING -> a.add(h);
                case FAILED -> f.add(h);
                case DRAINED -> dr.add(h);
                default -> w.add(h);
            }
            if (c != null && c.since() != null && (changed == null || c.since().isAfter(changed))) changed = c.since();
        }
        List<String> unsettled = f.stream().filter(h -> !resumedPast.contains(h)).toList();
        int tolerated = maxFailedOrNone(); // failures on-failure waits for (max-failed)
        RolloutState s;
        String n = note;
        if (state == RolloutState.ABORTED) {
            s = RolloutState.ABORTED;
        } else if (onFailure == RolloutSpec.OnFailure.REVERT && unsettled.size() > tolerated) {
            s = RolloutState.REVERTED;
            n = failureNote(unsettled.get(0), byHost);
        } else if (onFailure == RolloutSpec.OnFailure.PAUSE && unsettled.size() > tolerated) {
            s = RolloutState.PAUSED;
            n = failureNote(unsettled.get(0), byHost);
        } else if (d.size() + f.size() + dr.size() == all.size()) {
            s = RolloutState.DONE; // every failed host is settled here: continue, resumed past, or within max-failed; a drained one passed over
        } else {
            s = RolloutState.ROLLING;
        }
        RolloutRecord v = new RolloutRecord(module, push, revision, s, canary, d, a, w, f, since, hosts, maxParallel, onFailure, previous,
                by, n, resumedAt, resumedPast, changed, promote, promotedAt, maxFailed, soak, lastDone, dr);
        if (s != RolloutState.ROLLING || !awaitsPromotion() || !v.canariesDone()) return v;
        return new RolloutRecord(module, push, revision, s, canary, d, a, w, f, since, hosts, maxParallel, onFailure, previous,
                by, canary.isEmpty() ? PROMOTE_NOTE_NO_CANARY : PROMOTE_NOTE, resumedAt, resumedPast, changed, promote, promotedAt, maxFailed,
                soak, lastDone, dr);
    }

    /**
     * How much of a failed host's {@code error} the note quotes, in characters: a host writes its own node with anything
     * its ACL allows, and the note goes into the rollout node and every waiting host's report, so it must stay far
     * below ZooKeeper's 1 MB node limit whatever a host wrote.
     */
    public static final int NOTE_ERROR_CHARS = 300;

    /** The note of a {@code promote: manual} rollout whose canaries are ready. */
    public static final String PROMOTE_NOTE = "the canaries are ready: the other hosts wait for mesh rollout promote";
    /** The note of a {@code promote: manual} rollout without canaries, which waits for its promote to begin at all. */
    public static final String PROMOTE_NOTE_NO_CANARY = "no host begins before mesh rollout promote (promote: manual, no canary)";

    private static String failureNote(String host, Map<String, RolloutHostRecord> byHost) {
        RolloutHostRecord c = byHost.get(host);
        return host + " failed: " + (c == null || c.error() == null ? "failed" : RolloutHostRecord.cut(c.error(), NOTE_ERROR_CHARS));
    }

    /**
     * @param other another record
     * @return true when both show the same progress: state, the four lists, the note (what a fold writes) and the promote
     */
    public boolean sameProgress(RolloutRecord other) {
        return other != null && state == other.state && done.equals(other.done) && applying.equals(other.applying)
                && waiting.equals(other.waiting) && failed.equals(other.failed) && drainedHosts().equals(other.drainedHosts()) && java.util.Objects.equals(note, other.note)
                && java.util.Objects.equals(promotedAt, other.promotedAt);
    }

    /**
     * A paused rollout goes on: the hosts failed now keep the previous revision and count as settled. Called on the
     * {@link #view}, the result is what the coordinator writes.
     *
     * @param by who resumed it
     * @return the record {@code rolling} again, with {@link #resumedPast} the hosts failed now
     * @throws IllegalStateException when it is not paused
     */
    public RolloutRecord resume(String by, Instant at) {
        if (state != RolloutState.PAUSED) throw new IllegalStateException("the rollout of " + module + " is " + state + ", not paused");
        return new RolloutRecord(module, push, revision, RolloutState.ROLLING, canary, done, applying, waiting, failed, since, hosts,
                maxParallel, onFailure, previous, this.by, "resumed by " + by + " after " + failed + " failed", at, failed, at,
                promote, promotedAt, maxFailed, soak, doneAt, drained);
    }

    /**
     * The hosts after the canaries go ({@code promote: manual}). Called on the {@link #view}, the result is what the
     * coordinator writes. A promote before the canaries are ready lets the others go once they are.
     *
     * @param by who promoted it
     * @throws IllegalStateException when it is not waiting for a promote: {@code promote: auto}, promoted already, or
     *                               not rolling
     */
    public RolloutRecord promote(String by, Instant at) {
        if (promote != RolloutSpec.Promote.MANUAL) {
            throw new IllegalStateException("the rollout of " + module + " is not promote: manual: its hosts go once its canaries are ready");
        }
        if (promotedAt != null) throw new IllegalStateException("the rollout of " + module + " was promoted already, at " + promotedAt);
        if (state != RolloutState.ROLLING) throw new IllegalStateException("the rollout of " + module + " is " + state + ", not rolling");
        return new RolloutRecord(module, push, revision, state, canary, done, applying, waiting, failed, since, hosts, maxParallel,
                onFailure, previous, this.by, "promoted by " + by, resumedAt, resumedPast, at, promote, at, maxFailed, soak, doneAt, drained);
    }

    /**
     * The rollout stops for good: hosts that have not applied the push keep the previous revision. Called on the
     * {@link #view}, the result is what the coordinator writes.
     *
     * @param by who aborted it
     * @throws IllegalStateException when it has ended already
     */
    public RolloutRecord abort(String by, Instant at) {
        if (state.ended()) throw new IllegalStateException("the rollout of " + module + " has ended already (" + state + ")");
        return new RolloutRecord(module, push, revision, RolloutState.ABORTED, canary, done, applying, waiting, failed, since, hosts,
                maxParallel, onFailure, previous, by(), "aborted by " + by, resumedAt, resumedPast, at, promote, promotedAt, maxFailed,
                soak, doneAt, drained);
    }
}
