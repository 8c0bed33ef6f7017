package io.mesh.rollout;

import io.mesh.curator.RolloutNodes;
import io.mesh.gate.Gate;
import io.mesh.manifest.ModuleSpec;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HistoryRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutHostState;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.RolloutState;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Whether a module's rollout lets this host apply its newest push now (SPEC.md, "Rollouts";
 * docs/decisions/0013-rollouts.md): kured's {@code RebootBlocker} for a push. Asked by the apply holding the module
 * lock, before the host fence: {@link #admit} answers with what to apply (the push, or the previous revision the
 * rollout keeps here) and, for a host in a wave, holds one lease of {@code /mesh/slots/rollout-<module>} (Curator's
 * {@code InterProcessSemaphoreV2}, at most {@code maxParallel}) until {@link Admission#finished}: after the readiness
 * wait, so that no more than {@code maxParallel} hosts are ever between a stop and ready. It reads the rollout as
 * {@link RolloutRecord#view} derives it from the rollout node and its hosts' children ({@link RolloutNodes}), and writes
 * only this host's child, at the version read (SPEC.md, "Identities": the rollout node is coordinators'). A module
 * without {@code rollout} costs nothing: no ZooKeeper call.
 */
public final class RolloutGate {
    private static final Logger log = LoggerFactory.getLogger(RolloutGate.class);
    /**
     * How long an apply holding the module lock waits for a slot before it reports {@code waiting} and lets the lock
     * go (a waiting host must not hold up a window of its own module): the next slot freed wakes it (the agent watches
     * {@code /mesh/rollouts}, and this gate the slots' leases: {@link #watchSlots}).
     */
    static final long SLOT_WAIT_MS = 300;
    /** How long after a blocked answer a host asks its rollout's gate again. */
    public static final java.time.Duration GATE_AGAIN = java.time.Duration.ofSeconds(5);
    /** Writes at the version read that lost a race and are read again before giving up. */
    private static final int MAX_ATTEMPTS = 50;

    private final MeshStore store;
    private final String host;
    private final ProcessRef process;
    /** The agent's copy of a module's rollout nodes ({@link #readFrom}); answers nothing until set. */
    private volatile Function<String, RolloutNodes> cached = module -> null;
    /** Told a module whose slots' leases changed after this host found them all taken ({@link #wakeOnSlotLeases}). */
    private volatile Consumer<String> slotLeasesChanged = module -> { };
    /** Told a module whose rollout gate was blocked when this host would have begun ({@link #wakeOnGate}). */
    private volatile Consumer<String> gateBlocked = module -> { };
    /** Modules whose slots' leases this gate watches now, each with the {@code maxParallel} of its newest try. */
    private final Map<String, Integer> watchingSlots = new ConcurrentHashMap<>();

    /**
     * @param store   ZooKeeper access
     * @param host    this host
     * @param process this process, written into its slot lease
     */
    public RolloutGate(MeshStore store, String host, ProcessRef process) {
        this.store = store;
        this.host = host;
        this.process = process;
    }

    /**
     * Lets the first look of a decision be the agent's copy of {@code /mesh/rollouts} (its {@code CuratorCache}): read
     * from ZooKeeper, each look costs a read of every host's node, and every waiting host looks whenever a slot is
     * given back. A move (to applying, done, failed) reads the nodes from ZooKeeper and is written at the versions read
     * there; what the copy lets a host keep without a move (done, or failed, aborted, reverted) does not go back within
     * a push. A copy that lags only makes a host wait until it catches up, which wakes it (decision 13).
     *
     * @param nodes a module's rollout nodes as the copy holds them; {@code null} when it holds none
     */
    public void readFrom(Function<String, RolloutNodes> nodes) { this.cached = nodes; }

    /**
     * Whom to tell when the leases of a module's slots change after this host tried for one and found them all taken:
     * a lease can be held by a host still applying the module's previous push, and giving it back moves nothing of
     * this push's rollout, so no move wakes this host (decision 13; {@code RolloutWakeTest}).
     *
     * @param module called with the module, on ZooKeeper's event thread: hand the work over
     */
    public void wakeOnSlotLeases(Consumer<String> module) { this.slotLeasesChanged = module; }

    /**
     * Whom to tell when a module's rollout gate was blocked as this host would have begun: nothing moves when the gate
     * opens, so this host asks again later (decision 35).
     *
     * @param module called with the module, on the apply's thread
     */
    public void wakeOnGate(Consumer<String> module) { this.gateBlocked = module; }

    /**
     * @return the rollout gate's answer, asked just before this host would take its place in a wave; {@code null}
     *         without {@code rollout.gate}
     * @throws InterruptedException when interrupted while asking
     */
    private Gate.Answer askGate(DesiredRecord desired) throws InterruptedException {
        io.mesh.manifest.GateSpec g = desired.spec().rollout().gate();
        if (g == null) return null;
        return Gate.prometheus(io.mesh.gate.AnswerWithin.client(), g.prometheus()).ask();
    }

    /** What the rollout lets this host do with the newest push. */
    public enum Decision {
        /** Apply the push, no slot needed: there is no rollout of it, it is done, or this host did it already. */
        APPLY,
        /** Apply the push in a wave: take a slot (when {@code maxParallel} is set) and count as applying. */
        APPLY_IN_WAVE,
        /** Keep the previous revision and report {@code waiting}: the wave has not come, or the rollout is paused. */
        WAIT,
        /** Keep the previous revision and report {@code failed}: the rollout was reverted or aborted, or this host failed it. */
        KEEP_PREVIOUS
    }

    /**
     * The rule, without ZooKeeper.
     *
     * @param r    the rollout of the newest push
     * @param host this host
     * @return what this host may do, and why (for the report)
     */
    public static Verdict decide(RolloutRecord r, String host) {
        return decide(r, host, Times.now());
    }

    /**
     * The rule, without ZooKeeper, at {@code now}: a soak ends by the clock of the host that judges it, as the hosts'
     * nodes' {@code since} are written by theirs.
     *
     * @param r    the rollout of the newest push
     * @param host this host
     * @param now  the time the soak is judged at
     * @return what this host may do, and why (for the report)
     */
    public static Verdict decide(RolloutRecord r, String host, java.time.Instant now) {
        String m = r.module();
        // A host that failed keeps the previous revision until a new push, also once the others made the rollout done.
        if (r.failed().contains(host) && r.state() != RolloutState.REVERTED) {
            // The rollout's note is not this host's reason (a resume's, another host's, none under max-failed): the
            // admission adds this host's own error from its node.
            return new Verdict(Decision.KEEP_PREVIOUS, "this host failed the rollout of " + r.push()
                    + " and keeps the previous revision until a new push");
        }
        return switch (r.state()) {
            case DONE -> new Verdict(Decision.APPLY, null);
            case REVERTED -> new Verdict(Decision.KEEP_PREVIOUS, "the rollout of " + r.push() + " was reverted (" + r.note()
                    + "): every host runs the previous revision; push again to try once more");
            default -> {
                if (r.done().contains(host)) yield new Verdict(Decision.APPLY, null);
                if (r.state() == RolloutState.ABORTED) {
                    yield new Verdict(Decision.KEEP_PREVIOUS, "the rollout of " + r.push() + " was " + r.note()
                            + ": this host keeps the previous revision until a new push");
                }
                if (r.state() == RolloutState.PAUSED) {
                    yield new Verdict(Decision.WAIT, "the rollout of " + r.push() + " is paused (" + r.note() + "): mesh rollout resume "
                            + m + " goes on, mesh rollout abort " + m + " stops it");
                }
                if (r.state() != RolloutState.ROLLING) yield new Verdict(Decision.WAIT, "the rollout of " + r.push() + " is " + r.state());
                if (r.drainedHosts().contains(host)) {
                    yield new Verdict(Decision.WAIT, "this host is drained: the rollout of " + r.push() + " passes over it, and it keeps the "
                            + "previous revision until undrained");
                }
                // A host that was not a target when the push was taken has no node of its own to move: it comes after.
                if (!r.names(host)) {
                    yield new Verdict(Decision.WAIT, "this host was not among the hosts of the rollout of " + r.push()
                            + " when it was pushed: it applies the push once the rollout is done");
                }
                if (!r.canary().contains(host) && !r.canariesDone()) {
                    List<String> drainedCanaries = r.canary().stream().filter(r.drainedHosts()::contains).toList();
                    yield new Verdict(Decision.WAIT, "waiting for the canaries " + r.canary() + " to be ready (done: " + r.done() + ")"
                            + (drainedCanaries.isEmpty() ? "" : "; drained: " + drainedCanaries + ", which go once undrained (mesh undrain)"));
                }
                if (!r.canary().contains(host) && r.awaitsPromotion()) {
                    yield new Verdict(Decision.WAIT, (r.canary().isEmpty() ? "the rollout of " + r.push() + " waits for an operator"
                            : "the canaries " + r.canary() + " are ready; the other hosts wait for an operator") + " (promote: manual): mesh rollout promote "
                            + m + " lets them go, mesh rollout abort " + m + " stops it");
                }
                java.time.Instant soakUntil = r.soakUntil();
                if (soakUntil != null && !r.applying().contains(host) && now.isBefore(soakUntil)) {
                    yield new Verdict(Decision.WAIT, "the hosts done last stay ready until " + soakUntil + " (soak " + r.soak()
                            + ") before the next begin");
                }
                yield new Verdict(Decision.APPLY_IN_WAVE, null);
            }
        };
    }

    /**
     * @param decision what to do
     * @param why      for {@link Decision#WAIT} and {@link Decision#KEEP_PREVIOUS}, the report's {@code rollout}
     */
    public record Verdict(Decision decision, String why) {}

    /**
     * Before the no-op reconcile (decision 4), which may skip the lock only when the rollout lets this host keep
     * what it applied: one read of the rollout node for a module with {@code rollout}, none without.
     *
     * @param desired the newest desired state
     * @return true when the rollout lets this host apply the push without a slot (or there is none)
     * @throws Exception from ZooKeeper
     */
    public boolean settled(DesiredRecord desired) throws Exception {
        if (!hasRollout(desired)) return true;
        RolloutRecord c = view(cached.apply(desired.module()));
        if (c != null && c.of(desired)) return decide(c, host).decision() == Decision.APPLY; // false: admit decides, locked
        RolloutRecord r = view(read(desired.module()));
        if (r == null || !r.of(desired)) return !newer(r, desired) || (r == null && Objects.equals(store.desiredPushNow(desired.module()), desired.push()));
        return decide(r, host).decision() == Decision.APPLY;
    }

    /**
     * @return true when the rollout node is of a newer push than {@code desired}, or is gone (a newer push without
     *         {@code rollout} deleted it): the desired node read is behind the rollout node (the daemon's desired cache
     *         has not seen the newer push yet), since both are written in one transaction
     */
    private static boolean newer(RolloutRecord r, DesiredRecord desired) {
        if (r == null) return true;
        return r.push() != null && ZkPaths.pushSeq(r.push()) > ZkPaths.pushSeq(desired.push());
    }

    private static boolean hasRollout(DesiredRecord d) {
        return d != null && !d.tombstone() && d.spec() != null && d.spec().rollout() != null;
    }

    /**
     * Decides, holding the module lock: takes a slot and counts this host {@code applying}, or counts it
     * {@code waiting}. The caller closes the admission (it gives a slot back).
     *
     * @param desired the newest desired state
     * @return what to apply, and how to report it
     * @throws Exception from ZooKeeper
     */
    public Admission admit(DesiredRecord desired) throws Exception {
        return admit(desired, false);
    }

    /**
     * As {@link #admit(DesiredRecord)}, on a host that may be drained (decision 37): a drained host whose wave has not
     * come moves its own node to {@code drained}, which the rollout counts settled and passes over; undrained, it moves
     * it back to {@code waiting} and decides as any host.
     *
     * @param drained true while this host's drain is in force, as read under the lock
     */
    public Admission admit(DesiredRecord desired, boolean drained) throws Exception {
        if (!hasRollout(desired)) return Admission.push(this, desired, null);
        String module = desired.module();
        RolloutRecord c = view(cached.apply(module));
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            // The first look may be the agent's copy: a move it lets this host make is read and checked again in
            // ZooKeeper (move), and what it lets a host keep (done, failed, aborted, reverted) does not go back
            // within a push. A look after a lost move reads ZooKeeper.
            RolloutRecord r = attempt == 0 && c != null && c.of(desired) ? c : view(read(module));
            if (r == null || !r.of(desired)) {
                // Behind a newer push: apply nothing of this one (it could be the very push a rollout paused).
                // A node gone with the desired node unchanged in ZooKeeper is one deleted by hand: no rollout then.
                if (newer(r, desired) && (r != null || !Objects.equals(store.desiredPushNow(module), desired.push()))) {
                    return Admission.stale(this, desired);
                }
                return Admission.push(this, desired, null); // a node not of this push, older: no rollout
            }
            if (drained != r.drainedHosts().contains(host) && (r.state() == RolloutState.ROLLING || r.state() == RolloutState.PAUSED)) {
                // Passed over while drained, back in the waves once undrained; one that began, or ended, stays where it is.
                RolloutRecord moved = move(desired, (x, mine) -> drained && mine == RolloutHostState.WAITING ? RolloutHostState.DRAINED
                        : !drained && mine == RolloutHostState.DRAINED ? RolloutHostState.WAITING : mine, null, false);
                if (moved != null && drained && moved.drainedHosts().contains(host)) {
                    return keep(desired, moved, ApplyOutcome.DEFERRED, decide(moved, host).why());
                }
                if (moved != null && !drained) continue;
            }
            Verdict v = decide(r, host);
            switch (v.decision()) {
                case APPLY:
                    return Admission.push(this, desired, null);
                case WAIT:
                    // Nothing to write: this host's node says waiting since the push (or where its last apply left it).
                    return keep(desired, r, ApplyOutcome.DEFERRED, v.why());
                case KEEP_PREVIOUS:
                    return keep(desired, r, ApplyOutcome.FAILED, r.failed().contains(host) ? v.why() + ownFailure(module, r) : v.why());
                case APPLY_IN_WAVE:
                    if (full(r, host)) return keep(desired, r, ApplyOutcome.DEFERRED, waitingForSlot(r));
                    if (!r.applying().contains(host)) { // one that began goes on: its gate was asked as it began
                        Gate.Answer gate = askGate(desired);
                        if (gate != null && gate.blocked()) {
                            gateBlocked.accept(module);
                            return keep(desired, r, ApplyOutcome.DEFERRED, "the rollout's gate is " + gate.said() + "; asked again in "
                                    + GATE_AGAIN.toSeconds() + " s");
                        }
                    }
                    Lease lease = null;
                    if (r.maxParallel() != null) {
                        lease = slots(desired, r.maxParallel()).acquire(SLOT_WAIT_MS, TimeUnit.MILLISECONDS);
                        if (lease == null) {
                            watchSlots(module, r.maxParallel());
                            return keep(desired, r, ApplyOutcome.DEFERRED, waitingForSlot(r));
                        }
                    }
                    // Counted applying only if the rollout still admits this host (a resume, an abort, a failure elsewhere
                    // may have moved it since the read): the write checks that the rollout node and every other host's
                    // node are as read, else it decides again. A lease is never left behind by a throw.
                    Lease held = lease;
                    RolloutRecord moved;
                    try {
                        moved = move(desired, (x, mine) -> decide(x, host).decision() == Decision.APPLY_IN_WAVE && !full(x, host)
                                ? RolloutHostState.APPLYING : mine, null, true);
                    } catch (Exception | Error e) {
                        returnLease(held);
                        throw e;
                    }
                    if (moved != null && moved.applying().contains(host)) return Admission.push(this, desired, held);
                    returnLease(held);
                    if (moved != null && full(moved, host)) return keep(desired, moved, ApplyOutcome.DEFERRED, waitingForSlot(moved));
                    continue;
                default:
                    throw new IllegalStateException(v.decision().name());
            }
        }
        throw new IllegalStateException("the rollout node of " + module + " changed under each of " + MAX_ATTEMPTS + " reads");
    }

    /**
     * @return true when {@code maxParallel} other hosts are counted {@code applying}: a host whose agent died
     *         mid-recreate keeps its place although its lease went with its session (its container may be down until
     *         it comes back), so the semaphore alone would let one more host stop its containers
     */
    static boolean full(RolloutRecord r, String host) {
        return r.maxParallel() != null && !r.applying().contains(host) && r.applying().size() >= r.maxParallel();
    }

    /** How much later each waiting host past the free places looks at a freed slot ({@link #turnDelayMs}), in milliseconds. */
    public static final long TURN_STEP_MS = 100;
    /** The longest {@link #turnDelayMs}: past it every waiting host looks, whoever is before it. */
    public static final long TURN_MAX_MS = 2_000;

    /**
     * When a move of the rollout may have freed a place in a wave, how long this host waits before it tries for it:
     * none when it is among the first waiting hosts (by name; before every canary is done, the first waiting canaries)
     * that fit the free places, {@link #TURN_STEP_MS} more for each such host before it past them, at most
     * {@link #TURN_MAX_MS}; then it tries only if no other host began applying meanwhile (the agent checks:
     * {@link RolloutWakes#look}), since the host that began makes a move of its own, at which every host looks
     * again. Without it every waiting host tried the slots' semaphore at each freed place, and all but one lost (a
     * lock, a semaphore try and a report: about 7 ZooKeeper writes a host, each time; docs/benchmark-notes.md, B10); with
     * it one or two try, and a host before it that is down or slow delays it by a step (at most {@link #TURN_MAX_MS}).
     *
     * @param r    the rollout, as last seen
     * @param host this host
     * @return the delay in milliseconds; 0 when there is no {@code max-parallel} or this host is not waiting in a wave
     */
    public static long turnDelayMs(RolloutRecord r, String host) {
        if (r.maxParallel() == null || decide(r, host).decision() != Decision.APPLY_IN_WAVE) return 0;
        // In line only the hosts that may take a place now: before every canary is done, the waiting canaries.
        List<String> line = r.canariesDone() ? r.waiting() : r.waiting().stream().filter(r.canary()::contains).toList();
        int rank = line.indexOf(host);
        int free = r.maxParallel() - r.applying().size();
        if (rank < 0 || rank < free) return 0;
        return Math.min(TURN_MAX_MS, (rank - Math.max(free, 0) + 1) * TURN_STEP_MS);
    }

    private static String waitingForSlot(RolloutRecord r) {
        return "waiting for a slot: max-parallel " + r.maxParallel() + ", applying now " + r.applying();
    }

    /**
     * Watches the leases of the module's slots (the children Curator's semaphore keeps under {@code leases}), this host
     * having found them all taken, until fewer than {@code maxParallel} are held: then tells
     * {@link #wakeOnSlotLeases}'s listener once. Other hosts' tries that lose add and remove a lease of their own
     * without freeing a slot: those changes only set the watch again, or every waiting host would wake every other at
     * each try. A watch already set is kept; a failure leaves the wake to the rollout's next move or the reconcile.
     */
    private void watchSlots(String module, int maxParallel) {
        // A newer push may have changed maxParallel: the leases are read again against it (the watch stays one).
        if (!Objects.equals(watchingSlots.put(module, maxParallel), maxParallel)) watchLeases(module);
    }

    /** Reads the leases in the background (it runs again from ZooKeeper's event thread), leaving the watch. */
    private void watchLeases(String module) {
        Integer maxParallel = watchingSlots.get(module);
        if (maxParallel == null) return; // told already: this chain of watches ends
        try {
            store.client().getChildren().usingWatcher(new LeasesWatch(this, module))
                    .inBackground((client, event) -> {
                        if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
                            notWatched(module, KeeperException.Code.get(event.getResultCode()).name());
                        } else if (event.getChildren().size() < maxParallel && watchingSlots.remove(module, maxParallel)) {
                            slotLeasesChanged.accept(module);
                        }
                    })
                    .forPath(ZkPaths.slotLeases(store.paths().rolloutSlots(module)));
        } catch (Exception e) {
            notWatched(module, e.toString());
        }
    }

    /**
     * The watch {@link #watchLeases} sets. Equal for the same gate and module, so that ZooKeeper, which keeps a watcher
     * once per path, keeps one however many reads set it: each connection lost and back tells every watcher (an event
     * of type None) and keeps its watch, and a read for each such event would add one more (RolloutGateSlotWatchTest).
     */
    private record LeasesWatch(RolloutGate gate, String module) implements CuratorWatcher {
        @Override
        public void process(WatchedEvent event) { gate.watchLeases(module); }
    }

    private void notWatched(String module, String why) {
        watchingSlots.remove(module);
        log.warn("slots of module {} not watched ({}): host {} waits for the rollout's next move or its reconcile", module, why, host);
    }

    /** @return the module's slots, a lease carrying this host's JSON */
    private InterProcessSemaphoreV2 slots(DesiredRecord desired, int maxParallel) {
        InterProcessSemaphoreV2 slots = new InterProcessSemaphoreV2(store.client(), store.paths().rolloutSlots(desired.module()), maxParallel);
        slots.setNodeData(Json.bytes(leaseData(desired)));
        return slots;
    }

    private Map<String, Object> leaseData(DesiredRecord desired) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("host", host);
        m.put("module", desired.module());
        m.put("push", desired.push());
        m.put("revision", desired.revision());
        m.put("since", Times.now());
        m.put("by", process);
        return m;
    }

    /**
     * What this host keeps: the revision it last applied (its report's {@code lastApplied}), whose spec is the
     * rollout's {@code previous} or, when the host was behind that (a rollout paused before it, a host that was down), the
     * one its history node kept. A host that never applied the module keeps nothing of it. When that spec cannot be
     * found (its history node trimmed), the host is kept as it is: no Docker call at all.
     */
    private Admission keep(DesiredRecord desired, RolloutRecord r, ApplyOutcome outcome, String why) throws Exception {
        String module = desired.module();
        ApplyReport last = store.report(host, module);
        ApplyReport.Applied applied = last == null ? null : last.lastApplied();
        if (applied == null || applied.push() == null) {
            return Admission.keep(this, desired, null, new DesiredRecord(module, null, null, ModuleSpec.nowhere(module)), outcome, why);
        }
        // A host that applied this push (a done host of a reverted rollout) goes back to the spec the push replaced.
        if (applied.push().equals(r.push())) {
            DesiredRecord prev = r.previous() != null ? r.previous() : new DesiredRecord(module, null, null, ModuleSpec.nowhere(module));
            if (r.maxParallel() == null) return Admission.keep(this, desired, null, prev, outcome, why);
            // Going back is a recreate like going forward: in a slot, so a revert never has more than max-parallel hosts
            // between stop and ready. No slot now: nothing changes here, and the failed outcome's retry asks again soon.
            Lease lease = slots(desired, r.maxParallel()).acquire(SLOT_WAIT_MS, TimeUnit.MILLISECONDS);
            if (lease == null) {
                watchSlots(module, r.maxParallel());
                return Admission.keep(this, desired, null, null, outcome, why + "; waiting for a slot (max-parallel " + r.maxParallel()
                        + ") to go back to the previous revision");
            }
            return Admission.keep(this, desired, lease, prev, outcome, why);
        }
        if (r.previous() != null && applied.push().equals(r.previous().push())) return Admission.keep(this, desired, null, r.previous(), outcome, why);
        DesiredRecord kept = history(module, applied.push());
        return Admission.keep(this, desired, null, kept, outcome, kept == null ? why + "; the spec of " + applied.push()
                + ", which this host last applied, is no longer in the module's history: nothing here is changed" : why);
    }

    /**
     * @return {@code ": <error>"} from this host's own node of the rollout, as its failed apply wrote it (so that the
     *         report that keeps the previous revision still says why this host failed); empty when it says none
     */
    private String ownFailure(String module, RolloutRecord r) throws Exception {
        RolloutNodes nodes = cached.apply(module);
        if (nodes == null) nodes = read(module);
        RolloutNodes.Child mine = nodes == null ? null : nodes.children().get(host);
        RolloutHostRecord h = mine == null ? null : mine.record();
        if (h == null || !r.push().equals(h.push()) || h.error() == null || h.error().equals("failed")) return "";
        return ": " + io.mesh.manifest.Printable.of(h.error(), RolloutRecord.NOTE_ERROR_CHARS);
    }

    /** Specs this process read from history, by module and push: a waiting host asks at each move of the rollout. */
    private final Map<String, DesiredRecord> historyRead = new ConcurrentHashMap<>();

    /** @return the desired state {@code push} wrote for the module, from its history node; null when not kept */
    private DesiredRecord history(String module, String push) throws Exception {
        DesiredRecord known = historyRead.get(module + "/" + push);
        if (known != null) return known;
        List<String> nodes;
        try {
            nodes = new ArrayList<>(store.client().getChildren().forPath(store.paths().history(module)));
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
        nodes.sort(Comparator.comparingLong(ZkPaths::historySeq).reversed());
        for (String n : nodes) {
            HistoryRecord h;
            try {
                h = Json.readOrNull(store.client().getData().forPath(store.paths().history(module, n)), HistoryRecord.class);
            } catch (KeeperException.NoNodeException e) {
                continue;
            }
            if (h == null || !push.equals(h.push())) continue;
            DesiredRecord d = new DesiredRecord(module, h.revision(), h.push(), h.spec() == null ? ModuleSpec.nowhere(module) : h.spec());
            historyRead.put(module + "/" + push, d);
            return d;
        }
        return null;
    }

    /**
     * What the rollout admitted: the desired state to run, and how the apply's report reads.
     */
    public static final class Admission implements AutoCloseable {
        private final RolloutGate gate;
        private final DesiredRecord desired;
        private volatile Lease slot;
        private final DesiredRecord previous;
        private final ApplyOutcome outcome;
        private final String why;
        private final boolean stale;

        private Admission(RolloutGate gate, DesiredRecord desired, Lease slot, DesiredRecord previous, ApplyOutcome outcome, String why,
                          boolean stale) {
            this.gate = gate;
            this.desired = desired;
            this.slot = slot;
            this.previous = previous;
            this.outcome = outcome;
            this.why = why;
            this.stale = stale;
        }

        /** The push is applied: there is no rollout of it, it lets this host apply, or ({@code slot} given) in a wave. */
        static Admission push(RolloutGate gate, DesiredRecord desired, Lease slot) {
            return new Admission(gate, desired, slot, null, null, null, false);
        }

        /**
         * The rollout keeps this host on {@code previous} (or, when {@code null}, as it is), reported {@code outcome}
         * with {@code why}; {@code slot} when going back is a recreate in a slot.
         */
        static Admission keep(RolloutGate gate, DesiredRecord desired, Lease slot, DesiredRecord previous, ApplyOutcome outcome, String why) {
            return new Admission(gate, desired, slot, previous, Objects.requireNonNull(outcome), why, false);
        }

        /** The desired state read is behind the rollout node: nothing is applied now. */
        static Admission stale(RolloutGate gate, DesiredRecord desired) {
            return new Admission(gate, desired, null, null, null, null, true);
        }

        /** @return true when the desired state read is behind the rollout node: the apply does nothing now */
        public boolean stale() { return stale; }

        /**
         * Gives the slot back and counts this host waiting again (it was applying): the apply stops short of Docker to
         * wait for something else (another process's window).
         *
         * @throws Exception from ZooKeeper
         */
        public void abandon() throws Exception {
            boolean counted = slot != null || outcome == null;
            close();
            if (outcome != null || stale || !hasRollout(desired) || !counted) return;
            gate.move(desired, (x, mine) -> mine == RolloutHostState.APPLYING ? RolloutHostState.WAITING : mine, null, false);
        }

        /**
         * @return the desired state the apply runs: the push, or the previous revision the rollout keeps here;
         *         {@code null} when the rollout keeps this host as it is, with no Docker call (its previous spec is
         *         not known)
         */
        public DesiredRecord toApply() { return outcome != null ? previous : desired; }

        /** @return true when the apply runs the previous revision, or nothing ({@link #outcome()} says how it reads) */
        public boolean keepsPrevious() { return outcome != null; }

        /** @return for {@link #keepsPrevious()}: {@code waiting} or {@code failed}; else {@code null} */
        public ApplyOutcome outcome() { return outcome; }

        /** @return for {@link #keepsPrevious()}: why, for the report's {@code rollout} */
        public String why() { return why; }

        /** @return true while this admission holds a slot */
        public boolean holdsSlot() { return slot != null; }

        /**
         * The apply of the push ended (after its readiness wait): gives the slot back, then counts this host done,
         * failed or (deferred by held containers) waiting again. Nothing for an admission that kept the previous
         * revision, or without a rollout.
         *
         * @param result the apply's outcome
         * @param error  its error, for a failure
         * @throws Exception from ZooKeeper
         */
        public void finished(ApplyOutcome result, String error) throws Exception {
            boolean counted = slot != null || outcome == null;
            close();
            if (outcome != null || stale || !hasRollout(desired) || !counted) return;
            BiFunction<RolloutRecord, RolloutHostState, RolloutHostState> move = switch (result) {
                case APPLIED -> (x, mine) -> mine == RolloutHostState.APPLYING || mine == RolloutHostState.WAITING ? RolloutHostState.DONE : mine;
                case FAILED -> (x, mine) -> mine == RolloutHostState.APPLYING ? RolloutHostState.FAILED : mine;
                default -> (x, mine) -> mine == RolloutHostState.APPLYING ? RolloutHostState.WAITING : mine;
            };
            gate.move(desired, move, error == null ? "failed" : error, false);
        }

        /** Gives the slot back, if held. Never throws. */
        @Override
        public void close() {
            Lease s = slot;
            slot = null;
            gate.returnLease(s);
        }
    }

    private void returnLease(Lease s) {
        if (s == null) return;
        try {
            s.close();
        } catch (Exception e) {
            // Its node is ephemeral: it goes with the session at the latest.
            log.warn("rollout slot of host {} not given back cleanly ({}); its lease node goes with the session", host, e.toString());
        }
    }

    /** @return the rollout node of the module and its hosts' children; null when it has none */
    private RolloutNodes read(String module) throws Exception {
        RolloutNodes n = RolloutNodes.read(store.client(), store.paths(), module);
        if (n != null && n.parent() == null) {
            log.warn("{} does not hold a rollout record; the push is applied as without one", store.paths().rollout(module));
        }
        return n;
    }

    /** @return the rollout derived from its nodes; null when none or unreadable */
    private static RolloutRecord view(RolloutNodes n) { return n == null ? null : n.view(); }

    /**
     * Moves this host's node of the rollout of {@code desired}'s push, at the version read (read again after a lost
     * race): the one node of a rollout an agent writes (decision 13).
     *
     * @param next    from the rollout (derived) and this host's state in it, this host's next state
     * @param error   for a move to {@code failed}, why
     * @param guarded when true, the write also checks that the rollout node and (with {@code maxParallel}) every other
     *                host's node are as read (one ZooKeeper multi): a move whose rule reads other hosts ({@link #full})
     *                or the operator's moves must not act on what changed meanwhile
     * @return the rollout as derived after the write (or as found, when {@code next} changed nothing); null when the
     *         node is not the rollout of this push any more
     * @throws IllegalStateException when this host's node is missing (deleted by hand) or changed under each attempt
     */
    private RolloutRecord move(DesiredRecord desired, BiFunction<RolloutRecord, RolloutHostState, RolloutHostState> next, String error,
                               boolean guarded) throws Exception {
        String module = desired.module();
        String path = store.paths().rolloutHost(module, host);
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            RolloutNodes nodes = read(module);
            RolloutRecord r = view(nodes);
            if (r == null || !r.of(desired)) return null;
            RolloutNodes.Child mine = nodes.children().get(host);
            if (mine == null) {
                // A host that was not a target when the push was taken has no node and nothing to move: it applies once
                // the rollout is done (decision 13, Consequences).
                if (!r.hosts().contains(host)) return r;
                throw new IllegalStateException(path + " is missing: the push writes one node per host of the rollout and only a new push"
                        + " removes it; push again, or mesh rollout abort " + module);
            }
            RolloutHostState now = r.push().equals(mine.record().push()) ? mine.record().state() : RolloutHostState.WAITING;
            RolloutHostState to = next.apply(r, now);
            if (to == now) return r;
            RolloutHostRecord written = mine.record().moved(r.push(), to, error, Times.now());
            List<CuratorOp> ops = new ArrayList<>();
            if (guarded) {
                ops.add(store.client().transactionOp().check().withVersion(nodes.parentStat().getVersion()).forPath(store.paths().rollout(module)));
                for (Map.Entry<String, RolloutNodes.Child> c : nodes.children().entrySet()) {
                    if (c.getKey().equals(host) || r.maxParallel() == null) continue; // without max-parallel no rule reads them
                    ops.add(store.client().transactionOp().check().withVersion(c.getValue().stat().getVersion())
                            .forPath(store.paths().rolloutHost(module, c.getKey())));
                }
            }
            ops.add(store.client().transactionOp().setData().withVersion(mine.stat().getVersion()).forPath(path, Json.bytes(written)));
            try {
                store.client().transaction().forOperations(ops);
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
                // another host moved, a coordinator folded, resumed or aborted it, or a push replaced it: read again,
                // after a short random pause so that many hosts moving at once (a wave ending) do not all lose together again
                Thread.sleep(ThreadLocalRandom.current().nextLong(1, 5L + 5L * Math.min(attempt, 20)));
                continue;
            }
            Map<String, RolloutHostRecord> children = new TreeMap<>();
            nodes.children().forEach((h, c) -> children.put(h, c.record()));
            children.put(host, written);
            RolloutRecord after = nodes.parent().view(children.values());
            if (after.state() != r.state()) log.info("rollout module={} push={} state={} by host={}{}", module, r.push(), after.state(), host,
                    after.note() == null ? "" : " (" + after.note() + ")");
            return after;
        }
        throw new IllegalStateException(path + " changed under each of " + MAX_ATTEMPTS + " writes");
    }
}
