package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Data of {@code /mesh/rollouts/<module>} (SPEC.md, "Rollouts"; docs/decisions/0013-rollouts.md): the rollout of the
 * module's newest push, written by the coordinator in the push's transaction, then moved by each agent for its own
 * host ({@link #waiting}, {@link #applying}, {@link #done}, {@link #failed}) and by the coordinator for an operator
 * ({@link #resume}, {@link #abort}), always by a write at the version read. The transitions are pure functions here,
 * so both sides move it by the same rules.
 *
 * @param module      module name
 * @param push        the push being rolled out
 * @param revision    its revision
 * @param state       where the rollout is
 * @param canary      the hosts that go first
 * @param done        hosts that applied the push and are ready
 * @param applying    hosts applying it now (each holds a slot of {@code /mesh/slots/rollout-<module>})
 * @param waiting     hosts whose wave has not come; they keep the previous revision
 * @param failed      hosts whose apply of the push failed; they keep the previous revision
 * @param since       when the rollout began (the push)
 * @param hosts       the hosts the push targeted when it was taken (for {@code ["*"]}: those with an agent)
 * @param maxParallel hosts applying at once, resolved from {@code max-parallel}; {@code null} for no limit
 * @param onFailure   what a failure does
 * @param previous    the desired state before the push (what hosts that have not started keep), {@code null} for a
 *                    module that had none
 * @param by          who pushed
 * @param note        why the rollout is where it is (the failure that paused it, who resumed or aborted it)
 * @param resumedAt   when an operator last resumed it, else {@code null}: the hosts that failed before it count as
 *                    settled
 * @param changedAt   when the record last changed
 */
@JsonPropertyOrder({"module", "push", "revision", "state", "canary", "done", "applying", "waiting", "failed", "since"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RolloutRecord(String module, String push, String revision, RolloutState state, List<String> canary,
                            List<String> done, List<String> applying, List<String> waiting, List<String> failed,
                            Instant since, List<String> hosts, Integer maxParallel, RolloutSpec.OnFailure onFailure,
                            DesiredRecord previous, String by, String note, Instant resumedAt, Instant changedAt) {
    public RolloutRecord {
        canary = sorted(canary);
        done = sorted(done);
        applying = sorted(applying);
        waiting = sorted(waiting);
        failed = sorted(failed);
        hosts = sorted(hosts);
        onFailure = onFailure == null ? RolloutSpec.OnFailure.PAUSE : onFailure;
    }

    private static List<String> sorted(List<String> l) { return l == null ? List.of() : List.copyOf(new TreeSet<>(l)); }

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
     * @return a {@code rolling} record with every host waiting
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
                targets, r.resolveMaxParallel(targets.size()), r.onFailureOrDefault(), prev, by, null, null, at);
    }

    /** @return this record without the previous spec (for views: it is the desired state a push replaced) */
    public RolloutRecord withoutPrevious() {
        return new RolloutRecord(module, push, revision, state, canary, done, applying, waiting, failed, since, hosts, maxParallel,
                onFailure, null, by, note, resumedAt, changedAt);
    }

    /** @return true when this record is the rollout of {@code desired}'s push */
    public boolean of(DesiredRecord desired) {
        return desired != null && push != null && push.equals(desired.push());
    }

    /** @return every host the record names, targeted or met since */
    public List<String> allHosts() {
        TreeSet<String> all = new TreeSet<>(hosts);
        all.addAll(done);
        all.addAll(applying);
        all.addAll(waiting);
        all.addAll(failed);
        return List.copyOf(all);
    }

    /**
     * @return true when every canary is settled: done, or failed where a failure does not stop the rollout
     *         ({@code on-failure: continue}, or before a resume)
     */
    public boolean canariesDone() {
        return canary.stream().allMatch(h -> done.contains(h) || (failedSettled() && failed.contains(h)));
    }

    /** @return true when a failed host counts as settled: under {@code on-failure: continue}, or after a resume */
    private boolean failedSettled() { return onFailure == RolloutSpec.OnFailure.CONTINUE || resumedAt != null; }

    /** @return this record with {@code host} waiting (a host not named yet; one already named is left where it is) */
    public RolloutRecord waiting(String host, Instant at) {
        if (done.contains(host) || applying.contains(host) || waiting.contains(host) || failed.contains(host)) return this;
        return with(state, done, applying, plus(waiting, host), failed, note, at);
    }

    /** @return this record with {@code host} applying (it took a slot) */
    public RolloutRecord applying(String host, Instant at) {
        return with(state, minus(done, host), plus(applying, host), minus(waiting, host), minus(failed, host), note, at);
    }

    /** @return this record with {@code host} done; {@code done} when every host is settled */
    public RolloutRecord done(String host, Instant at) {
        return with(state, plus(done, host), minus(applying, host), minus(waiting, host), minus(failed, host), note, at).settle();
    }

    /**
     * @param why what failed, for {@link #note}
     * @return this record with {@code host} failed, and the state {@code on-failure} says
     */
    public RolloutRecord failed(String host, String why, Instant at) {
        RolloutState next = switch (onFailure) {
            case PAUSE -> state == RolloutState.ROLLING ? RolloutState.PAUSED : state;
            case REVERT -> state == RolloutState.ROLLING || state == RolloutState.PAUSED ? RolloutState.REVERTED : state;
            case CONTINUE -> state;
        };
        String n = next == state ? note : host + " failed: " + why;
        return with(next, minus(done, host), minus(applying, host), minus(waiting, host), plus(failed, host), n, at).settle();
    }

    /** @return this record with {@code host} back among the waiting (its apply was deferred by a window) */
    public RolloutRecord backToWaiting(String host, Instant at) {
        return with(state, done, minus(applying, host), plus(waiting, host), failed, note, at);
    }

    /**
     * A paused rollout goes on: the hosts that failed keep the previous revision and count as settled.
     *
     * @param by who resumed it
     * @return the record {@code rolling} again (or {@code done})
     * @throws IllegalStateException when it is not paused
     */
    public RolloutRecord resume(String by, Instant at) {
        if (state != RolloutState.PAUSED) throw new IllegalStateException("the rollout of " + module + " is " + state + ", not paused");
        return new RolloutRecord(module, push, revision, RolloutState.ROLLING, canary, done, applying, waiting, failed, since, hosts,
                maxParallel, onFailure, previous, this.by, "resumed by " + by + " after " + failed + " failed", at, at).settle();
    }

    /**
     * The rollout stops for good: hosts that have not applied the push keep the previous revision.
     *
     * @param by who aborted it
     * @throws IllegalStateException when it has ended already
     */
    public RolloutRecord abort(String by, Instant at) {
        if (state.ended()) throw new IllegalStateException("the rollout of " + module + " has ended already (" + state + ")");
        return with(RolloutState.ABORTED, done, applying, waiting, failed, "aborted by " + by, at);
    }

    /** {@code done} once every host is done, or failed where a failure does not stop the rollout. */
    private RolloutRecord settle() {
        boolean failedSettled = failedSettled();
        if (state != RolloutState.ROLLING) return this;
        for (String h : allHosts()) {
            if (!done.contains(h) && !(failedSettled && failed.contains(h))) return this;
        }
        return with(RolloutState.DONE, done, applying, waiting, failed, note, changedAt);
    }

    private RolloutRecord with(RolloutState s, List<String> d, List<String> a, List<String> w, List<String> f, String n, Instant at) {
        return new RolloutRecord(module, push, revision, s, canary, d, a, w, f, since, hosts, maxParallel, onFailure, previous, by, n,
                resumedAt, at);
    }

    private static List<String> plus(List<String> l, String h) {
        List<String> c = new ArrayList<>(l);
        if (!c.contains(h)) c.add(h);
        return c;
    }

    private static List<String> minus(List<String> l, String h) {
        List<String> c = new ArrayList<>(l);
        c.remove(h);
        return c;
    }
}
