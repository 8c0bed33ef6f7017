package io.mesh.apply;

import io.mesh.curator.HeldRegistry;
import io.mesh.curator.PersistentParents;
import io.mesh.curator.RolloutNodes;
import io.mesh.curator.ZkClock;
import io.mesh.docker.ContainerRuntime;
import io.mesh.freeze.FreezeGate;
import io.mesh.hold.HoldConfirmation;
import io.mesh.hold.HoldStops;
import io.mesh.hold.HostDrains;
import io.mesh.ledger.CallCause;
import io.mesh.manifest.ModuleSpec;
import io.mesh.rollout.RolloutGate;
import io.mesh.section.HostFence;
import io.mesh.section.ModuleLock;
import io.mesh.section.ModuleSection;
import io.mesh.window.HostContext;
import io.mesh.window.WindowJournal;
import io.mesh.window.WindowRecovery;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.WindowRecord;
import io.mesh.wire.WindowResult;
import io.mesh.wire.ZkPaths;
import io.mesh.zk.MeshStore;
import io.mesh.zk.SessionGuard;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The apply: brings one module on this host to its newest desired state, inside the module's critical section
 * ({@link ModuleSection}: the ZooKeeper lock, then the host fence) (SPEC.md, "Apply"): {@code deferred} while a
 * window holds the lock; holding it, the newest desired node and the held nodes are read, the fence taken, a
 * journalled window that is not running finished ({@link WindowRecovery}), the plan executed ({@link ApplyExecution}),
 * the fence given back and the report written with the lock's release. The rules: docs/design.md, "Apply".
 */
public final class Applier {
    private static final Logger log = LoggerFactory.getLogger(Applier.class);
    private static final Duration WAIT_SLICE = Duration.ofSeconds(1);
    /** An apply that waits this long for a lock that no window of this host holds logs who holds it. */
    private static final Duration LONG_WAIT = Duration.ofSeconds(30);
    /**
     * How long a ZooKeeper connection blip is waited out before an apply reports it {@code failed} (failure model row 23):
     * Curator's SUSPENDED usually ends in RECONNECTED within a few seconds (a leader election, a server restart).
     */
    static final Duration BLIP = Duration.ofSeconds(20);
    /** How many blips one apply waits out before it reports the outage. */
    static final int MAX_BLIPS = 3;

    private final HostContext context;
    private final MeshStore store;
    private final ContainerRuntime docker;
    private final String host;
    private final Duration applyLockWait;
    private final WindowRecovery recovery;
    private final SessionGuard session;
    private final HostFence fences;
    private final ReportWriter reports;
    private final NoOpReconcile noOp;
    private final RolloutGate rollouts;
    private final FreezeGate freezes;
    /** The failed tries of each module's push, under {@code --state-dir}: their back-off. */
    private final FailedTries tries;
    /** The {@code --stop}s of operators' holds, started again as they were once the hold ends (decision 33). */
    private final HoldStops holdStops;
    /** How long a failed apply waits for ZooKeeper to come back to report its failure. */
    private static final Duration REPORT_WAIT = Duration.ofMinutes(10);

    /**
     * @param context       this host's store, engine, id, process, journal, policy and secrets dir
     * @param applyLockWait how long to wait for the module lock before reporting {@code deferred} (default 2 s)
     */
    public Applier(HostContext context, Duration applyLockWait) {
        this.context = context;
        this.store = context.store();
        this.docker = context.docker();
        this.host = context.host();
        this.applyLockWait = applyLockWait;
        this.recovery = context.recovery();
        this.session = store.session();
        this.fences = context.journal().fences();
        this.reports = new ReportWriter(store, io.mesh.curator.EventOutbox.spoolOf(context.journal().stateDir()));
        this.noOp = new NoOpReconcile(context, reports);
        this.rollouts = new RolloutGate(store, host, context.process());
        this.freezes = new FreezeGate(store, ZkClock.earliestClock(), ZkClock.latestClock()); // judged by ZooKeeper's clock, not this host's
        this.tries = new FailedTries(context.journal().stateDir());
        this.holdStops = new HoldStops(context.journal().stateDir());
    }

    /**
     * @param nodes a module's rollout nodes as the agent's copy holds them, for the decisions that change nothing
     *              ({@link RolloutGate#readFrom})
     */
    public void readRolloutsFrom(Function<String, RolloutNodes> nodes) { rollouts.readFrom(nodes); }

    /** @param module told a module whose rollout slots changed after this host found them taken ({@link RolloutGate#wakeOnSlotLeases}) */
    public void wakeOnRolloutSlotLeases(Consumer<String> module) { rollouts.wakeOnSlotLeases(module); }

    /** @param module told a module whose rollout gate was blocked as this host would have begun ({@link RolloutGate#wakeOnGate}) */
    public void wakeOnRolloutGate(Consumer<String> module) { rollouts.wakeOnGate(module); }

    /**
     * The defaults of {@link HostContext#of}; kept for the benchmarks in {@code io.mesh.bench} until they build a
     * {@link HostContext} themselves.
     */
    public Applier(MeshStore store, ContainerRuntime docker, String host, ProcessRef process, Duration applyLockWait,
                   WindowJournal journal) {
        this(HostContext.of(store, docker, host, process, journal), applyLockWait);
    }

    /**
     * Applies a module's newest desired state; blocks while a window holds the module lock.
     *
     * <p>Holding the lock, it waits for the host fence ({@code deferred} to a journalled window whose process still
     * holds it), then finishes a journalled window of this module ({@link WindowRecovery}) before anything else.
     *
     * @param module   module name
     * @param stopping polled while waiting; true gives up (the process is shutting down)
     * @return the final report written, or {@code null} when there is no desired state for the module or when
     *         {@code stopping} ended the wait
     * @throws InterruptedException when interrupted
     */
    public ApplyReport apply(String module, BooleanSupplier stopping) throws InterruptedException {
        // What it does while it is not done, for the push's status (decision 32): removed once it is done, after its report.
        ProgressNode node = new ProgressNode(store, host, module, Times.now());
        ApplyProgress progress = new ApplyProgress(node, System::nanoTime, true);
        try {
            return apply(module, stopping, progress, node);
        } finally {
            progress.clear();
        }
    }

    private ApplyReport apply(String module, BooleanSupplier stopping, ApplyProgress progress, ProgressNode node) throws InterruptedException {
        Instant started = Times.now();
        DesiredRecord desired = null;
        int blips = 0;
        String deferredElsewhere = null;
        while (true) {
            Attempt a = new Attempt(module, stopping, progress, node, started, desired, deferredElsewhere);
            try {
                Exit exit = a.run();
                if (!exit.again()) return exit.report();
            } catch (InterruptedException e) {
                throw e;
            } catch (MeshStore.InvalidNodeException e) {
                // The report names the invalid node's push when it can be read, so that its push shows it failed.
                return fail(module, e.revision(), e.push(), a.started, e.getMessage(), stopping);
            } catch (WindowJournal.UnreadableException e) {
                // Fail safe (failure model row 22): a journal that cannot be read means a window may be open.
                return fail(module, a.desired, a.started, e.getMessage(), stopping);
            } catch (SessionGuard.SessionLostException e) {
                a.closeSection();
                // Each blip is waited out from when it is met, whenever in the apply that is; a few in a row are
                // an outage, and reported.
                if (blips++ < MAX_BLIPS && !stopping.getAsBoolean()) {
                    log.info("apply host={} module={}: {}; waiting up to {}s for ZooKeeper, then applying again", host, module,
                            e.getMessage(), BLIP.toSeconds());
                    if (session.awaitConnected(BLIP, stopping)) continue;
                }
                return fail(module, a.desired, a.started, e.getMessage(), stopping);
            } catch (Exception e) {
                return fail(module, a.desired, a.started, "apply failed: " + describe(e), stopping);
            } finally {
                started = a.started;
                desired = a.desired;
                deferredElsewhere = a.deferredElsewhere;
                a.close();
            }
        }
    }

    /** How a try of an apply ends: with the apply's answer (a report, or {@code null}), or to be tried again. */
    private record Exit(ApplyReport report, boolean again) {
        /** Nothing to report: no desired state, a module of another host, a stale desired node, or stopping. */
        static final Exit NOTHING = new Exit(null, false);
        /** Tried again at once: the lock lapsed while the fence was awaited, or another process's window runs. */
        static final Exit AGAIN = new Exit(null, true);

        static Exit with(ApplyReport report) { return new Exit(report, false); }
    }

    /**
     * One try of an apply, as named stages in order, as the window is ({@code WindowRunner}): connected, read, locked,
     * admitted, fenced, recovered, executed, reported (docs/design.md, "Apply"). Each stage goes on (answers
     * {@code null}) or ends the try with its {@link Exit}; a stage that throws ends it too, and {@link #close} gives
     * back what it holds (the rollout's slot, the section).
     */
    private final class Attempt implements AutoCloseable {
        private final String module;
        private final BooleanSupplier stopping;
        private final ApplyProgress progress;
        private final ProgressNode node;
        private Instant started;
        private DesiredRecord desired;
        /** The push, revision and window last reported {@code deferred} to another process's window: said once. */
        private String deferredElsewhere;
        private ModuleSection section;
        private ApplyAdmission admission;
        /** The newest desired node, read under the lock. */
        private DesiredRecord newest;
        private LockedRead read;
        private Map<String, HeldRecord> held;
        /** What the recovery of a dead window of the module did, or {@code null} when none ran. */
        private WindowResult recovered;
        /** A freeze that came while the apply ran, which stopped the changes not yet begun. */
        private final AtomicReference<FreezeRecord> frozenSince = new AtomicReference<>();
        private boolean leftThisHost;
        /** A drained host with a window of the module journalled open: its recovery comes before the drain's holds. */
        private boolean drainAfterRecovery;
        /** The execution's containers failed only on the engine (ApplyExecution#failedOnlyForTheEngine): not the revision's failure. */
        private boolean failedForTheEngine;

        Attempt(String module, BooleanSupplier stopping, ApplyProgress progress, ProgressNode node, Instant started,
                DesiredRecord desired, String deferredElsewhere) {
            this.module = module;
            this.stopping = stopping;
            this.progress = progress;
            this.node = node;
            this.started = started;
            this.desired = desired;
            this.deferredElsewhere = deferredElsewhere;
        }

        Exit run() throws Exception {
            Exit e;
            if ((e = connected()) != null || (e = read()) != null || (e = locked()) != null || (e = admitted()) != null
                    || (e = fenced()) != null || (e = recovered()) != null) return e;
            return reported(executed());
        }

        /**
         * A blip is waited out (bounded), not reported (failure model row 23); a longer outage is reported once
         * ZooKeeper answers again ({@link #fail} waits for it), naming the push.
         */
        private Exit connected() throws InterruptedException {
            if (session.connected()) return null;
            if (elsewhereOnly(module)) return Exit.NOTHING; // no report of a module of another host, outage or not
            if (session.awaitConnected(BLIP, stopping)) return null;
            return Exit.with(fail(module, desired, started, "ZooKeeper is not connected (" + session.state() + ") for "
                    + BLIP.toSeconds() + "s; nothing was done", stopping));
        }

        /** Whether there is anything to do, before the lock: no lock, no write when there is not (decision 4). */
        private Exit read() throws Exception {
            desired = store.desired(module);
            node.applying(desired);
            boolean journalled = journalled(module);
            if (desired == null && !journalled && WindowRecovery.open(context.journal(), docker, module).isEmpty()) return noDesiredState();
            // A module of another host, with nothing of it here: no lock, no report. A deleted module's hosts
            // report its delete once, even with nothing of it here, so that the delete's push is done on them.
            if (elsewhereOnly(desired, journalled, module) && !owesDeleteReport(desired, module)) return Exit.NOTHING;
            // Nothing changed since this process's last report of the module (decision 4); unless its rollout may
            // have moved this host since (decision 13).
            if (!journalled && rollouts.settled(desired)) {
                ApplyReport last = noOp.unchangedSinceLastReport(module, desired);
                if (last != null) return Exit.with(last);
            }
            return null;
        }

        /**
         * No desired node at all, and no window of the module to finish: nothing is stopped or removed (only a delete's
         * tombstone removes a module); a module with containers here says so once, in a {@code no-desired-state} report
         * (docs/decisions/0039-backups-and-an-empty-ensemble.md item 5). No lock: the report changes nothing in Docker.
         */
        private Exit noDesiredState() throws Exception {
            if (noOp.nothingHere(module)) return Exit.NOTHING;
            // A host's identity makes no shared parent (MeshZk.asHost): with no /mesh/reports/<host> (an empty tree, before
            // a coordinator or mesh-coordinator credentials makes it again) there is nowhere to say it.
            if (io.mesh.curator.MeshZk.asHost(store.client()) && store.client().checkExists().forPath(store.paths().reports(host)) == null) {
                return Exit.NOTHING;
            }
            ApplyReport r = ApplyReport.noDesiredState(host, module, started, Times.now());
            if (reports.sameAsLast(r) && store.reportIsOurs(host, module)) return Exit.NOTHING;
            reports.write(r);
            return Exit.NOTHING;
        }

        /** The module's lock: {@code deferred} while a window holds it (decision 3). */
        private Exit locked() throws Exception {
            section = new ModuleSection(store, fences, module, host, context.process(), LockHolder.APPLY)
                    .recordTo(context.ledger(), CallCause.push(desired == null ? null : desired.push()));
            if (section.lock(applyLockWait)) return null;
            desired = awaitLock(section, module, desired, started, stopping, progress, node);
            progress.done("lock");
            if (desired == AWAIT_STOPPED) return Exit.NOTHING;
            started = Times.now();
            return null;
        }

        /**
         * Read under the lock, before the fence (a section never waits for ZooKeeper fenced): the newest desired node,
         * so that a push that met a window lands now, and the held nodes, which only a window holding this lock could
         * add; then what the apply may do, asked of its gates ({@link ApplyAdmission}: a freeze, then the rollout),
         * holding the lock, never across a window.
         */
        private Exit admitted() throws Exception {
            newest = store.desired(module);
            if (newest != null) desired = newest;
            node.applying(desired);
            read = LockedRead.read(store, freezes, host, module, ZkClock.earliest());
            // A drained host: each container of the module is held from the drain before anything is planned, also one
            // a push adds, so that it is not made (decision 37); the holds are confirmed below as any operator's. Not while
            // a window of the module is journalled open: its recovery below gives its containers back first (a hold placed
            // before would keep what the dead window stopped stopped), and the next apply or look places them.
            if (read.drain() != null && newest != null && !newest.tombstone() && newest.spec() != null) {
                if (WindowRecovery.open(context.journal(), docker, module).isPresent()) {
                    drainAfterRecovery = true;
                } else if (HostDrains.place(store, host, context.process(), newest.spec(), read.drain(), read.drainVersion(), read.held())) {
                    read = LockedRead.read(store, freezes, host, module, ZkClock.earliest());
                }
            }
            held = read.held();
            admission = ApplyAdmission.admit(newest, read, rollouts);
            // Stale: the newer desired node's event asks again.
            return admission.verdict() == ApplyAdmission.Verdict.STALE ? Exit.NOTHING : null;
        }

        /** The host fence (decision 8); a lock lapsed while it was awaited starts the try again. */
        private Exit fenced() throws Exception {
            boolean fenced = awaitFence(section, module, desired, started, stopping, progress);
            progress.done("fence");
            if (fenced) return null;
            return stopping.getAsBoolean() ? Exit.NOTHING : Exit.AGAIN;
        }

        /**
         * Fenced, a journalled window is not running (its process would hold the fence from before its first stop to
         * after its last start), whoever wrote it: it is finished now ({@link WindowRecovery}). No state defers an
         * apply for ever. A window of a process with another {@code --state-dir} (another fence) is deferred to until
         * it ends or its deadline passes; every mesh process of a host should share {@code --state-dir} (decision 8).
         */
        private Exit recovered() throws Exception {
            Optional<WindowJournal.Entry> open = WindowRecovery.open(context.journal(), docker, module);
            if (open.isEmpty()) return null;
            WindowJournal.Entry j = open.get();
            if (WindowRecovery.mayRunElsewhere(context.journal(), j)) {
                admission.abandon(); // no slot while deferring to another process's window
                closeSection();
                String key = desired == null ? null : desired.push() + "/" + desired.revision() + "/" + j.window();
                if (key != null && !key.equals(deferredElsewhere)) reports.write(deferred(desired, new WindowRecord(host, module, j.schedule(), j.window(), j.since(),
                        j.held().stream().map(WindowJournal.HeldContainer::container).toList(), j.owner()), started));
                deferredElsewhere = key;
                if (stopping.getAsBoolean()) return Exit.NOTHING;
                Thread.sleep(WAIT_SLICE.toMillis());
                return Exit.AGAIN;
            }
            recovered = recovery.recover(j, section, held::get, stopping); // before any confirmation: its give-back is no touch of a hold in force
            if (drainAfterRecovery) {
                // The drained host's holds come now, before any change: the result recorded, this try ends, the next
                // places them under the lock and goes on as any apply of a drained host (decision 37).
                section.unfence();
                WindowRecovery.record(store, host, module, recovered, newest);
                admission.abandon();
                return Exit.AGAIN;
            }
            // Its containers run again: the held nodes read before, of that window, no longer hold them.
            held = new LinkedHashMap<>(held);
            held.values().removeIf(h -> j.window().equals(h.window()));
            return null;
        }

        /**
         * The Docker calls: operator holds read under the lock confirmed first, in force from here (decision 25),
         * frozen or not; then the desired state the admission gave, or repairs only (frozen, or kept waiting by its
         * rollout: what is stopped and not held starts again as it is; SPEC.md "Freezes"). A freeze that comes while
         * the apply runs stops the changes not yet begun ({@link #frozenSince}).
         *
         * @return the containers' results, or {@code null} when there is no desired state
         */
        private List<ContainerResult> executed() throws Exception {
            held = HoldConfirmation.confirm(store, section, host, held);
            ModuleSection fencedSection = section; // fenced: its freeze reads go only while its lock is intact
            // The execution asks before its first change (after the apply's line: the audit judges changes by it,
            // decision 28), then before each container's; only the first may end the apply on a freeze it cannot read.
            AtomicBoolean asked = new AtomicBoolean();
            ApplyExecution execution = new ApplyExecution(section.guarded(docker), context.policy(), host, context.secrets())
                    .fencedBy(section.fenced(docker))
                    .stopChangesWhen(() -> frozenSince(module, frozenSince, fencedSection, !asked.getAndSet(true)))
                    .reportingTo(progress).startingHoldStopsFrom(holdStops).recordingRepairsBy(section::repairing);
            DesiredRecord toApply = admission.toApply();
            // The cause of its calls (decision 28): the push applied, or a repair while frozen or kept waiting.
            if (toApply != null) section.beginApply(CallCause.push(toApply.push()));
            else section.cause(newest != null ? CallCause.REPAIR : CallCause.push(desired == null ? null : desired.push()));
            List<ContainerResult> results;
            // A rollout's silences of the containers its recreates stop, expired once the apply (and its readiness wait) ended
            try (RolloutSilences silences = RolloutSilences.of(toApply, host)) {
                execution.beforeEachStop(silences::before);
                results = switch (admission.verdict()) {
                    case NONE, STALE -> null;
                    case FROZEN, WAITING -> execution.repair(module, held, admission.repairsOnly(), c -> newest.spec() == null ? null : newest.spec().containerOf(c));
                    case APPLY -> execution.run(toApply, held, tries.of(module, toApply).orElse(null));
                };
            }
            if (toApply != null) rememberTries(module, toApply, execution, results);
            failedForTheEngine = results != null && execution.failedOnlyForTheEngine(results);
            section.unfence();
            if (recovered != null) WindowRecovery.record(store, host, module, recovered, newest);
            return results;
        }

        /**
         * The report, written with the lock's release (decision 5): {@code deferred} with the freeze when frozen; as
         * the rollout reads it when it keeps this host on its previous revision, and not again when unchanged.
         */
        private Exit reported(List<ContainerResult> results) throws Exception {
            if (newest == null) return Exit.NOTHING;
            FreezeRecord frozen = admission.freeze() != null ? admission.freeze() : frozenSince.get();
            if (frozen != null) return Exit.with(frozen(newest, started, frozen, results, section));
            // The window node read under the lock stands for the report, unless a recovery ran above (it publishes its
            // window's nodes again and deletes them as it ends).
            WindowRecord window = recovered == null ? read.window() : store.window(host, module);
            ApplyReport own = report(newest, started, results, held, window);
            ApplyReport report = admission.keptAs(own);
            // What the apply itself left down, judged by the spec it ran (a rollout that keeps the previous revision
            // reads failed for its own reasons: not this look's), or, for repairs, by the containers there
            if (own.outcome() == ApplyOutcome.FAILED && results != null) {
                DesiredRecord ran = admission.toApply();
                report = report.withDown(leftDown(module, ran == null ? null : ran.spec(), held));
            }
            admission.finished(report, failedForTheEngine); // the slot back, after the readiness wait
            // A host kept waiting is asked again at each move of the rollout: the same report is not written again.
            if (admission.keepsPrevious() && reports.sameAsLast(report)) return Exit.with(report);
            reports.write(report, section);
            leftThisHost = !newest.spec().runsOn(host) && report.outcome() == ApplyOutcome.APPLIED;
            return Exit.with(report);
        }

        /** Gives the section back now (a lapsed session; deferring to another process's window). */
        void closeSection() {
            if (section != null) section.close();
            section = null;
        }

        /** Gives back the rollout's slot and the section; a module that left this host leaves no lock parent. */
        @Override
        public void close() {
            if (admission != null) admission.close();
            if (section != null) {
                section.close();
                if (leftThisHost) deleteLockParent(section.lockPath());
            }
        }
    }

    /**
     * Records what the apply's tries of {@code d} left ({@link FailedTries#record}): the back-off of a push whose
     * containers did not become ready. A state dir that cannot be written is logged, and the report stands.
     */
    private void rememberTries(String module, DesiredRecord d, ApplyExecution execution, List<ContainerResult> results) {
        Map<String, ContainerResult> notReady = new LinkedHashMap<>();
        java.util.Set<String> failed = execution.notReady();
        for (ContainerResult r : results) if (failed.contains(r.name())) notReady.put(r.name(), r);
        try {
            FailedTries.Memory m = tries.record(module, d, execution.tried(), notReady, Times.now());
            if (!notReady.isEmpty() && m != null) {
                log.info("apply host={} module={} push={}: {} not ready; the next try of it waits until {} ({} failed {} of this push)",
                        host, module, d.push(), notReady.keySet(), m.nextTry(), m.failures(), m.failures() == 1 ? "try" : "tries");
            }
        } catch (RuntimeException e) {
            log.warn("apply host={} module={}: its failed tries are not remembered: {}", host, module, describe(e));
        }
    }

    /**
     * @param module module name
     * @return when the module's containers that did not become ready for its push may be tried again, when that is
     *         still to come (the daemon's retry waits for it: one back-off chain per module); else {@code null}
     */
    public Instant nextTry(String module) {
        Instant next = tries.read(module).map(FailedTries.Memory::nextTry).orElse(null);
        return next != null && next.isAfter(Times.now()) ? next : null;
    }

    /**
     * A thaw or an operator's release ends the module's back-off: its next apply tries at once ({@link FailedTries#tryAgainNow}).
     *
     * @param module module name
     */
    public void tryAgainNow(String module) {
        try {
            tries.tryAgainNow(module);
        } catch (RuntimeException e) {
            log.warn("module {}: its back-off could not be ended: {}", module, describe(e));
        }
    }

    /** Returned by {@link #awaitLock} when {@code stopping} ended the wait. */
    private static final DesiredRecord AWAIT_STOPPED = new DesiredRecord(null, null, null, null);

    /**
     * Waits for the module lock in 1 s slices. While a window of the module holds it, writes a {@code deferred}
     * report naming the window, again for each newer revision.
     *
     * @return the newest desired node seen, or {@link #AWAIT_STOPPED}
     */
    private DesiredRecord awaitLock(ModuleSection section, String module, DesiredRecord desired, Instant started,
                                    BooleanSupplier stopping, ApplyProgress progress, ProgressNode node) throws Exception {
        String deferredFor = null;
        long waitingSince = System.nanoTime();
        boolean said = false;
        do {
            if (Thread.interrupted()) throw new InterruptedException();
            WindowRecord w = store.window(host, module);
            if (w != null) progress.doing("lock", ApplyProgress.lock("window " + w.schedule() + " (" + w.window() + ")"));
            else if (progress.due()) progress.doing("lock", ApplyProgress.lock(lockHolder(module))); // a read only when it is said
            if (w == null && !said && System.nanoTime() - waitingSince > LONG_WAIT.toNanos()) {
                said = true; // once per apply: who holds the lock, when it is no window of this host
                log.warn("apply host={} module={} has waited {}s for the module lock, held by {}", host, module,
                        LONG_WAIT.toSeconds(), ModuleLock.holders(store.client(), store.paths(), module, host));
            }
            DesiredRecord newest = store.desired(module);
            if (newest != null) desired = newest;
            node.applying(desired);
            String key = desired == null ? null : desired.push() + "/" + desired.revision();
            if (w != null && key != null && !key.equals(deferredFor)) {
                reports.write(deferred(desired, w, started));
                deferredFor = key;
            }
            if (stopping.getAsBoolean()) return AWAIT_STOPPED;
        } while (!section.lock(WAIT_SLICE));
        return desired;
    }

    /** @return who holds the module lock on this host, as the progress names it; {@code null} when it cannot be read */
    private String lockHolder(String module) {
        try {
            List<LockHolder> holders = ModuleLock.holders(store.client(), store.paths(), module, host);
            if (holders.isEmpty()) return null;
            LockHolder h = holders.get(0);
            return h.isWindow() ? "window " + h.purpose().substring("window:".length())
                    : h.purpose() + " of " + h.process() + " (pid " + h.pid() + ")";
        } catch (Exception e) {
            return null;
        }
    }

    /**
     * Takes the host fence, holding the lock. It is normally free at once; it is busy when a window of this host
     * whose lock lapsed still runs (it gives its containers back under the fence), or when a process frozen
     * mid-apply still holds it. Meanwhile the apply is {@code deferred} to the journalled window, if one, and says
     * who holds the fence.
     *
     * @return true when fenced; false when the lock lapsed meanwhile, or {@code stopping}
     */
    private boolean awaitFence(ModuleSection section, String module, DesiredRecord desired, Instant started,
                               BooleanSupplier stopping, ApplyProgress progress) throws Exception {
        long waitingSince = System.nanoTime();
        boolean said = false;
        String deferredFor = null;
        while (!section.fence(WAIT_SLICE)) {
            if (!section.lockIntact() || stopping.getAsBoolean()) return false;
            progress.doing("fence", ApplyProgress.fence(section.fenceHolder()));
            if (!said && System.nanoTime() - waitingSince > WAIT_SLICE.toNanos()) {
                said = true;
                log.warn("apply host={} module={} holds the module lock and waits for the host fence, held by {}", host, module,
                        section.fenceHolder());
            }
            Optional<WindowJournal.Entry> e = WindowRecovery.open(context.journal(), docker, module);
            String key = desired == null ? null : desired.push() + "/" + desired.revision();
            if (e.isPresent() && key != null && !key.equals(deferredFor)) {
                WindowJournal.Entry j = e.get();
                reports.write(deferred(desired, new WindowRecord(host, module, j.schedule(), j.window(), j.since(),
                        j.held().stream().map(WindowJournal.HeldContainer::container).toList(), j.owner()), started));
                deferredFor = key;
            }
        }
        return true;
    }

    /**
     * @return true when the desired state this process knows (the daemon's cache: no ZooKeeper call) names other
     *         hosts only and nothing of the module is on this host; false when it cannot tell
     */
    private boolean elsewhereOnly(String module) {
        if (!store.desiredIsCached()) return false; // without the cache, reading desired would wait for ZooKeeper
        try {
            return elsewhereOnly(store.desired(module), journalled(module), module);
        } catch (Exception e) {
            return false;
        }
    }

    /** @return true when {@code desired} names other hosts only, no window of it is journalled and nothing of it is here */
    private boolean elsewhereOnly(DesiredRecord desired, boolean journalled, String module) {
        return desired != null && !desired.spec().runsOn(host) && !journalled && noOp.nothingHere(module);
    }

    /**
     * @return true when {@code desired} is a tombstone naming this host (decision 11) and this host's report of the
     *         module is not yet an {@code applied} one of that delete or a newer push (read from ZooKeeper: once the
     *         delete is reported, even a restarted agent takes no lock for it again)
     */
    private boolean owesDeleteReport(DesiredRecord desired, String module) throws Exception {
        if (!desired.tombstone() || !desired.deleted().named(host)) return false;
        ApplyReport last = store.report(host, module);
        return last == null || last.outcome() != ApplyOutcome.APPLIED || ZkPaths.pushSeq(last.push()) < ZkPaths.pushSeq(desired.push());
    }

    /** @throws WindowJournal.UnreadableException when the module's journal entry exists but cannot be read */
    private boolean journalled(String module) {
        return context.journal().read(module).isPresent();
    }

    /**
     * What a failed apply left down, as Docker says after it: a cause that takes a place of the module's groups' limits
     * (the one disruption budget: docs/decisions/0037-recurring-freezes-drains-and-one-budget.md, item 3). Most failures
     * leave the previous container running (a recreate puts it back); a container the push adds and that could not be
     * made, or one that does not start, is down.
     *
     * @param ran        the spec the apply ran, or {@code null} when it is not known (repairs, an apply that failed
     *                   before its end): then the module's containers there are judged, not the spec's
     * @param heldNodes  the held nodes read under the lock, or {@code null}
     * @return the Docker names of the containers that do not run and that no held node names; empty when Docker cannot
     *         be asked (an engine that does not answer is no apply's doing) or the spec does not run here
     */
    private List<String> leftDown(String module, ModuleSpec ran, Map<String, HeldRecord> heldNodes) {
        if (ran != null && !ran.runsOn(host)) return List.of();
        try {
            java.util.Set<String> running = new java.util.HashSet<>();
            java.util.Set<String> there = new java.util.TreeSet<>();
            for (io.mesh.docker.ObservedContainer o : docker.moduleContainers(module)) {
                if (o.running()) running.add(o.dockerName());
                else if (o.dockerName() != null && !ApplyPlanner.keptAside(o.dockerName())) there.add(o.dockerName());
            }
            java.util.Collection<String> names = ran == null ? there : ran.containers().keySet().stream().map(ran::dockerName).sorted().toList();
            return names.stream().filter(n -> !running.contains(n) && (heldNodes == null || !heldNodes.containsKey(n))).toList();
        } catch (RuntimeException e) {
            log.warn("apply host={} module={} failed, and Docker could not say which containers it left down: {}", host, module, e.toString());
            return List.of();
        }
    }

    /** The report of an apply that ran: {@code applied}, or {@code failed} naming each failed container. */
    private ApplyReport report(DesiredRecord desired, Instant started, List<ContainerResult> results,
                               Map<String, HeldRecord> heldNodes, WindowRecord w) {
        List<String> errors = new ArrayList<>();
        List<String> held = new ArrayList<>();
        for (ContainerResult r : results) {
            if (r.action().failed()) errors.add(r.container() + ": " + String.join("; ", r.reasons()));
            if (r.action() == ContainerAction.HELD) held.add(r.container());
        }
        ApplyReport.WindowRef window = w == null ? null : ApplyReport.WindowRef.of(w);
        if (!errors.isEmpty()) {
            return ApplyReport.failed(host, desired.module(), desired.revision(), desired.push(), started, window, results,
                    String.join("; ", errors));
        }
        if (!held.isEmpty()) {
            // Held nodes met under the lock outlived it (a window whose session lapsed, a node made by hand): the push has
            // not landed on those containers, so the module is deferred to the window the nodes name, and the worker
            // applies again until they go (AgentDaemon).
            // An operator's hold (mesh hold) is no window: the report's window stays null, and each held container's
            // reason names the hold.
            HeldRecord h = window == null ? HeldRegistry.windowHolding(heldNodes, held) : null;
            if (h != null) window = new ApplyReport.WindowRef(h.schedule(), h.window(), h.since(), List.copyOf(held));
            return ApplyReport.deferred(host, desired.module(), desired.revision(), desired.push(), started, window, results);
        }
        return ApplyReport.applied(host, desired.module(), desired.revision(), desired.push(), started, window, results);
    }

    /**
     * Reports a frozen module's apply, which did nothing: {@code deferred} with the freeze, written with the lock's
     * release, unless this process's last report of the module read the same (a reconcile while frozen writes nothing).
     */
    private ApplyReport frozen(DesiredRecord newest, Instant started, FreezeRecord freeze, List<ContainerResult> results,
                               ModuleSection section) throws Exception {
        ApplyReport report = ApplyReport.deferred(host, newest.module(), newest.revision(), newest.push(), started, null, results)
                .withFreeze(freeze);
        if (!reports.sameAsLast(report)) reports.write(report, section);
        return report;
    }

    /**
     * Asked before the apply's first change (its line written) and again before each container's change begins: a
     * freeze of the module that came after the apply read it under the lock stops the changes not yet begun (SPEC.md
     * "Freezes"; decision 14). Read from ZooKeeper, with the lock intact: a freeze cannot be known otherwise.
     *
     * @param seen      set to the freeze found
     * @param beforeAny true for the first question, when no change has begun: a freeze that cannot be read then ends
     *                  the apply as a lapsed session does, and it is tried again (no change begins on a guess); later,
     *                  the apply goes on (it was not frozen when it began, and what it did must be reported)
     * @return why changes stop, or {@code null}
     */
    private String frozenSince(String module, AtomicReference<FreezeRecord> seen, ModuleSection section, boolean beforeAny) {
        FreezeRecord f = seen.get();
        // Fenced, a section never waits for ZooKeeper: with the lock not intact the read is not made (the next guarded
        // call ends the apply anyway), so a lost connection cannot keep the fence through Curator's retries.
        if (f == null && !section.lockIntact()) return null;
        if (f == null) {
            try {
                f = freezes.frozen(module).orElse(null);
            } catch (Exception e) {
                if (!beforeAny) return null;
                throw new SessionGuard.SessionLostException("the freezes of " + module + " could not be read (" + describe(e)
                        + "): no change begun; the apply is tried again");
            }
        }
        if (f == null) return null;
        seen.set(f);
        return "module frozen since the apply began (" + f.describe() + ")";
    }

    /**
     * A module that no longer runs on this host leaves no lock parent behind ({@link PersistentParents}): deleted when
     * nobody waits on it. Best effort: a parent left behind is an empty znode, and the next apply uses it.
     */
    private void deleteLockParent(String path) {
        try {
            PersistentParents.deleteIfEmpty(store.client(), path);
        } catch (Exception e) {
            log.debug("lock parent {} not deleted: {}", path, describe(e));
        }
    }

    /**
     * Writes a {@code failed} report. When ZooKeeper is down, waits for it (the module can do nothing without its
     * lock anyway) so that the failure is reported once ZooKeeper answers again.
     */
    private ApplyReport fail(String module, DesiredRecord desired, Instant started, String error, BooleanSupplier stopping)
            throws InterruptedException {
        if (desired == null) {
            // Met before the desired node could be read: read it once ZooKeeper answers, so the report names its push.
            try {
                if (session.awaitConnected(REPORT_WAIT, stopping)) desired = store.desired(module);
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                log.debug("desired node of {} not read for the failed report: {}", module, describe(e));
            }
        }
        return fail(module, desired == null ? null : desired.revision(), desired == null ? null : desired.push(), started, error, stopping);
    }

    private ApplyReport fail(String module, String revision, String push, Instant started, String error, BooleanSupplier stopping)
            throws InterruptedException {
        // Failed short of its end: what it left down is judged by the containers there (the spec it ran is not known)
        ApplyReport report = ApplyReport.failed(host, module, revision, push, started, error).withDown(leftDown(module, null, null));
        try {
            reports.write(report);
        } catch (Exception e) {
            try {
                if (!session.awaitConnected(REPORT_WAIT, stopping)) throw e;
                reports.write(report);
            } catch (InterruptedException ie) {
                throw ie;
            } catch (Exception e2) {
                log.error("apply host={} module={} outcome=failed error=\"{}\"; the report could not be written: {}",
                        host, module, error, describe(e2));
            }
        }
        return report;
    }

    private ApplyReport deferred(DesiredRecord desired, WindowRecord w, Instant started) throws Exception {
        Map<String, HeldRecord> held = store.held(host);
        List<ContainerResult> results = new ArrayList<>();
        for (String container : w.held()) {
            String prefix = desired.module() + "-";
            String name = container.startsWith(prefix) ? container.substring(prefix.length()) : container;
            HeldRecord h = held.get(container);
            results.add(ContainerResult.held(name, container, "held by window " + w.schedule() + " since " + w.since(),
                    h == null ? null : h.containerId()));
        }
        return ApplyReport.deferred(host, desired.module(), desired.revision(), desired.push(), started, ApplyReport.WindowRef.of(w), results);
    }

    static String describe(Throwable e) {
        return io.mesh.docker.DockerAnswer.explained(e);
    }
}
