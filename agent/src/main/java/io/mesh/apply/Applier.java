package io.mesh.apply;

import io.mesh.zk.Times;
import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.Labels;
import io.mesh.docker.ObservedContainer;
import io.mesh.lock.ModuleLock;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.zk.ApplyReport;
import io.mesh.zk.ApplyReport.ContainerResult;
import io.mesh.zk.DesiredRecord;
import io.mesh.zk.HeldRecord;
import io.mesh.zk.LockHolder;
import io.mesh.zk.MeshStore;
import io.mesh.zk.PersistentParents;
import io.mesh.zk.ProcessRef;
import io.mesh.zk.SessionGuard;
import io.mesh.zk.WindowRecord;
import io.mesh.window.WindowJournal;
import io.mesh.window.WindowRecovery;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * The apply: brings one module on this host to its newest desired state, under the module lock (SPEC.md, "Apply").
 *
 * <ol>
 *   <li>Ask for the module lock for {@code applyLockWait}. Not free and a window of the module is open on this
 *       host: write a {@code deferred} report naming the window, then keep asking in 1 s slices, writing a new
 *       {@code deferred} report whenever a newer revision arrives meanwhile.</li>
 *   <li>Holding the lock: read the <em>newest</em> desired node (so a push that met a window lands when the window
 *       ends, with no new push), plan ({@link ApplyPlanner}), execute, write the report, release.</li>
 * </ol>
 *
 * A recreate never leaves the module worse than it was: the new container is created before the old one is
 * stopped, and if it does not start, the old one is put back and started again. Containers named by a held node are
 * never touched.
 */
public final class Applier {
    private static final Logger log = LoggerFactory.getLogger(Applier.class);
    private static final Duration WAIT_SLICE = Duration.ofSeconds(1);
    /** An apply that waits this long for a lock that no window of this host holds logs who holds it. */
    private static final Duration LONG_WAIT = Duration.ofSeconds(30);
    /** At most this many containers of one module are changed at once (DockerEngine's connection pool is as big). */
    static final int PARALLEL = 32;
    /** Suffix of a new container's Docker name until the old one is out of the way. */
    static final String NEXT_SUFFIX = ".mesh-next";
    /** Suffix of an old container's Docker name while its replacement starts. */
    static final String PREV_SUFFIX = ".mesh-prev";

    private final MeshStore store;
    private final ContainerRuntime docker;
    private final String host;
    private final ProcessRef process;
    private final Duration applyLockWait;
    private final WindowJournal journal;
    private final WindowRecovery recovery;
    private final SessionGuard session;
    private final Policy policy;
    /** The last {@code applied} report this process wrote, per module: what a no-op reconcile compares with. */
    private final Map<String, ApplyReport> confirmed = new java.util.concurrent.ConcurrentHashMap<>();
    /** How long a failed apply waits for ZooKeeper to come back to report its failure. */
    private static final Duration REPORT_WAIT = Duration.ofMinutes(10);

    /**
     * @param store         ZooKeeper access
     * @param docker        the local engine
     * @param host          this host's id
     * @param process       this process, for lock nodes
     * @param applyLockWait how long to wait for the module lock before reporting {@code deferred} (default 2 s)
     * @param journal       the host's window journal ({@code --state-dir})
     */
    public Applier(MeshStore store, ContainerRuntime docker, String host, ProcessRef process, Duration applyLockWait,
                   WindowJournal journal) {
        this(store, docker, host, process, applyLockWait, journal, Policy.DEFAULT);
    }

    /**
     * @param store         ZooKeeper access
     * @param docker        the local engine
     * @param host          this host's id
     * @param process       this process, for lock nodes
     * @param applyLockWait how long to wait for the module lock before reporting {@code deferred} (default 2 s)
     * @param journal       the host's window journal ({@code --state-dir})
     * @param policy        what containers may do to this host; checked before every create and recreate
     */
    public Applier(MeshStore store, ContainerRuntime docker, String host, ProcessRef process, Duration applyLockWait,
                   WindowJournal journal, Policy policy) {
        this.policy = policy;
        this.store = store;
        this.docker = docker;
        this.host = host;
        this.process = process;
        this.applyLockWait = applyLockWait;
        this.journal = journal;
        this.recovery = new WindowRecovery(store, docker, host, process, journal);
        this.session = store.session();
    }

    /**
     * Applies a module's newest desired state; blocks while a window holds the module lock.
     *
     * <p>Holding the lock, it first looks at the host's {@link WindowJournal}: a window of this module whose process
     * died is finished ({@link WindowRecovery}) before anything else; a window whose process still runs (it lost the
     * lock with its ZooKeeper session) makes the apply {@code deferred}, release the lock and wait for it.
     *
     * @param module   module name
     * @param stopping polled while waiting; true gives up (the process is shutting down)
     * @return the final report written, or {@code null} when there is no desired state for the module or when
     *         {@code stopping} ended the wait
     * @throws InterruptedException when interrupted
     */
    public ApplyReport apply(String module, BooleanSupplier stopping) throws InterruptedException {
        Instant started = Times.now();
        long interruptedAtStart = session.interruptions();
        DesiredRecord desired = null;
        ModuleLock lock = null;
        boolean leftThisHost = false;
        try {
            // ZooKeeper not answering: do nothing, and say so once it answers (fail() waits for it).
            session.check(session.lostCount());
            desired = store.desired(module);
            boolean journalled = journal.read(module).isPresent();
            if (desired == null && !journalled && WindowRecovery.open(journal, docker, module).isEmpty()) return null;
            // A module of another host, with nothing of it here: no lock, no report.
            if (desired != null && !desired.spec().runsOn(host) && !journalled && nothingHere(module)) return null;
            // Nothing changed since this process's last report of the module: no lock, no write (decision 0004).
            if (!journalled) {
                ApplyReport last = unchangedSinceLastReport(module, desired);
                if (last != null) return last;
            }
            while (true) {
                lock = new ModuleLock(store.client(), store.paths(), module, host, process, LockHolder.APPLY);
                if (!lock.acquire(applyLockWait)) {
                    String deferredFor = null;
                    long waitingSince = System.nanoTime();
                    boolean said = false;
                    do {
                        if (Thread.interrupted()) throw new InterruptedException();
                        WindowRecord w = store.window(host, module);
                        if (w == null && !said && System.nanoTime() - waitingSince > LONG_WAIT.toNanos()) {
                            said = true; // once per apply: who holds the lock, when it is no window of this host
                            log.warn("apply host={} module={} has waited {}s for the module lock, held by {}", host, module,
                                    LONG_WAIT.toSeconds(), ModuleLock.holders(store.client(), store.paths(), module, host));
                        }
                        DesiredRecord newest = store.desired(module);
                        if (newest != null) desired = newest;
                        String key = desired == null ? null : desired.push() + "/" + desired.revision();
                        if (w != null && key != null && !key.equals(deferredFor)) {
                            write(deferred(desired, w, started));
                            deferredFor = key;
                        }
                        if (stopping.getAsBoolean()) return null;
                    } while (!lock.acquire(WAIT_SLICE));
                    started = Times.now();
                    interruptedAtStart = session.interruptions();
                }
                long lostAtAcquire = session.lostCount();
                Optional<WindowJournal.Entry> open = WindowRecovery.open(journal, docker, module);
                if (open.isPresent() && open.get().ownerAlive()) {
                    // A live process runs a window of this module but lost the lock with its session (CURATOR-206's
                    // class of bug): its containers are held whatever the znodes say. Defer, and let it finish.
                    WindowJournal.Entry e = open.get();
                    DesiredRecord newest = store.desired(module);
                    if (newest != null) {
                        desired = newest;
                        write(deferred(desired, new WindowRecord(host, module, e.schedule(), e.window(), e.since(),
                                e.held().stream().map(WindowJournal.HeldContainer::container).toList(), e.owner()), started));
                    }
                    releaseQuietly(lock);
                    lock = null;
                    while (WindowRecovery.open(journal, docker, module).filter(WindowJournal.Entry::ownerAlive).isPresent()) {
                        if (stopping.getAsBoolean()) return null;
                        Thread.sleep(WAIT_SLICE.toMillis());
                    }
                    continue;
                }
                if (open.isPresent()) recovery.recover(open.get(), () -> session.check(lostAtAcquire));
                DesiredRecord newest = store.desired(module);
                if (newest == null) return null;
                ApplyReport report = applyLocked(newest, started, () -> session.check(lostAtAcquire));
                if (session.interruptions() != interruptedAtStart) {
                    // The connection dropped while this apply ran (Curator retried its reads through it): the module
                    // lock may have lapsed meanwhile. Report it, and let the retry apply again under a sound lock.
                    throw new SessionGuard.SessionLostException("the ZooKeeper connection was interrupted during the apply,"
                            + " so the module lock may have lapsed (done so far: containers " + summary(report) + "); it will be applied again");
                }
                write(report, lock);
                leftThisHost = !newest.spec().runsOn(host) && ApplyReport.APPLIED.equals(report.outcome());
                return report;
            }
        } catch (InterruptedException e) {
            throw e;
        } catch (MeshStore.InvalidNodeException e) {
            // The report names the invalid node's push when it can be read, so that its push shows it failed.
            return fail(module, e.revision(), e.push(), started, e.getMessage(), stopping);
        } catch (SessionGuard.SessionLostException e) {
            return fail(module, desired, started, e.getMessage(), stopping);
        } catch (Exception e) {
            return fail(module, desired, started, "apply failed: " + describe(e), stopping);
        } finally {
            if (lock != null) releaseQuietly(lock);
            if (lock != null && leftThisHost) deleteLockParent(lock.path());
        }
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
     * The no-op reconcile (docs/decisions/0004-no-op-reconcile.md). Returns this process's last report of the module
     * when it still says all there is to say: it is {@code applied}, for this very push and revision, with no window,
     * every container in it {@code created}, {@code recreated}, {@code unchanged} or {@code removed}; and one look at
     * Docker ({@link ContainerRuntime#moduleView}) finds no step container of the module and plans every container
     * {@code unchanged}, exactly the ones the report left there (all but the removed), with the ids it names, while
     * ZooKeeper says that the report node is still the one this process wrote and that no container of the module is
     * held. Then the apply would change nothing and report nothing new, so it takes no lock and writes nothing, and
     * the report keeps saying what the push did (a reconcile right after it, asked for while it ran, does not turn
     * its {@code recreated} into {@code unchanged}).
     *
     * @return the last report, or {@code null} when the module goes the locked way
     */
    private ApplyReport unchangedSinceLastReport(String module, DesiredRecord desired) {
        ApplyReport last = confirmed.get(module);
        if (last == null || desired == null || last.window() != null
                || !java.util.Objects.equals(last.push(), desired.push())
                || !java.util.Objects.equals(last.revision(), desired.revision())) {
            return null;
        }
        ContainerRuntime.ModuleView view = docker.moduleView(module);
        if (!view.steps().isEmpty()) return null;
        Map<String, ContainerSpec> want = desired.spec().runsOn(host) ? desired.spec().containers() : Map.of();
        List<ContainerResult> there = new ArrayList<>(); // what the report left running, in plan order
        for (ContainerResult r : last.containers()) {
            if (ContainerResult.REMOVED.equals(r.action())) continue;
            if (!ContainerResult.UNCHANGED.equals(r.action()) && !ContainerResult.CREATED.equals(r.action())
                    && !ContainerResult.RECREATED.equals(r.action())) {
                return null; // held or failed: the next apply has something to say
            }
            there.add(r);
        }
        List<PlannedAction> plan = ApplyPlanner.plan(module, want, view.containers(), Map.of());
        if (plan.size() != there.size()) return null;
        for (int i = 0; i < plan.size(); i++) {
            PlannedAction a = plan.get(i);
            ContainerResult r = there.get(i);
            if (a.action() != PlannedAction.Kind.UNCHANGED || !a.dockerName().equals(r.container())
                    || !java.util.Objects.equals(a.existingId(), r.id())) {
                return null;
            }
        }
        // Two ZooKeeper reads, after Docker (on 2 cores, reads sent before the list waited for it anyway): is the
        // report still the one this process wrote, is any container of the module held.
        try {
            if (!store.reportIsOurs(host, module)) return null;
            List<String> held = store.heldNames(host);
            if (plan.stream().anyMatch(a -> held.contains(a.dockerName()))) return null;
        } catch (Exception e) {
            return null; // ZooKeeper did not answer: the locked way says so
        }
        return last;
    }

    /**
     * @return true when no container of the module (managed or step) is on this host. A Docker error counts as
     *         nothing here: a module of another host gets no {@code failed} report on this one; the next reconcile
     *         looks again.
     */
    private boolean nothingHere(String module) {
        try {
            ContainerRuntime.ModuleView view = docker.moduleView(module);
            return view.containers().isEmpty() && view.steps().isEmpty();
        } catch (RuntimeException e) {
            log.debug("module {} of another host: Docker did not answer ({}); looking again at the next reconcile", module, describe(e));
            return true;
        }
    }

    private static void releaseQuietly(ModuleLock lock) {
        try {
            lock.release();
        } catch (Exception e) {
            log.warn("module lock {} not released cleanly ({}); its node is ephemeral and goes with the session",
                    lock.path(), describe(e));
        }
    }

    /**
     * Writes a {@code failed} report. When ZooKeeper is down, waits for it (the module can do nothing without its
     * lock anyway) so that the failure is reported once ZooKeeper answers again.
     */
    private ApplyReport fail(String module, DesiredRecord desired, Instant started, String error, BooleanSupplier stopping)
            throws InterruptedException {
        return fail(module, desired == null ? null : desired.revision(), desired == null ? null : desired.push(), started, error, stopping);
    }

    private ApplyReport fail(String module, String revision, String push, Instant started, String error, BooleanSupplier stopping)
            throws InterruptedException {
        ApplyReport report = new ApplyReport(host, module, revision, push, ApplyReport.FAILED, started, Times.now(), null, List.of(), error, null);
        try {
            write(report);
        } catch (Exception e) {
            try {
                if (!session.awaitConnected(REPORT_WAIT, stopping)) throw e;
                write(report);
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
            results.add(new ContainerResult(name, container, ContainerResult.HELD,
                    List.of("held by window " + w.schedule() + " since " + w.since()), h == null ? null : h.containerId()));
        }
        return new ApplyReport(host, desired.module(), desired.revision(), desired.push(), ApplyReport.DEFERRED,
                started, Times.now(), ApplyReport.WindowRef.of(w), results, null, null);
    }

    /** Plans and executes, holding the lock. */
    private ApplyReport applyLocked(DesiredRecord desired, Instant started, Runnable beforeDockerCall) throws Exception {
        String module = desired.module();
        ModuleSpec spec = desired.spec();
        Map<String, ContainerSpec> want = spec.runsOn(host) ? spec.containers() : Map.of();
        Map<String, HeldRecord> held = store.held(host);
        List<ObservedContainer> observed = docker.moduleContainers(module);
        Map<String, ObservedContainer> byId = new LinkedHashMap<>();
        observed.forEach(o -> byId.put(o.id(), o));
        List<PlannedAction> plan = ApplyPlanner.plan(module, want, observed, held);
        List<ContainerResult> results = executeAll(plan, want, desired, byId, beforeDockerCall);
        List<String> errors = new ArrayList<>();
        for (int i = 0; i < plan.size(); i++) {
            ContainerResult r = results.get(i);
            if (r.action().equals(ContainerResult.FAILED)) errors.add(plan.get(i).dockerName() + ": " + String.join("; ", r.reasons()));
        }
        WindowRecord w = store.window(host, module);
        return new ApplyReport(host, module, desired.revision(), desired.push(),
                errors.isEmpty() ? ApplyReport.APPLIED : ApplyReport.FAILED, started, Times.now(),
                w == null ? null : ApplyReport.WindowRef.of(w), results,
                errors.isEmpty() ? null : String.join("; ", errors), null);
    }

    /**
     * Executes a plan, in plan order for the results. The containers of a module are independent of each other, so
     * when three or more need Docker calls they are changed at once, at most {@link #PARALLEL} at a time: a recreate
     * of 20 containers waits for the slowest stop, not for the sum of them (docs/benchmarks.md, B2). One or two are
     * changed on the apply thread, as before: threads made for every small apply cost more than they save where
     * many agents share a machine (B5's simulated hosts). When the apply is interrupted, what has started is let
     * finish (a recreate is never cut in half) and nothing more starts.
     */
    private List<ContainerResult> executeAll(List<PlannedAction> plan, Map<String, ContainerSpec> want, DesiredRecord desired,
                                             Map<String, ObservedContainer> byId, Runnable beforeDockerCall) throws InterruptedException {
        long changing = plan.stream().filter(a -> a.action() != PlannedAction.Kind.HELD && a.action() != PlannedAction.Kind.UNCHANGED).count();
        List<ContainerResult> results = new ArrayList<>();
        Images images = new Images();
        if (changing <= 2) { // see above
            for (PlannedAction a : plan) results.add(execute(a, want.get(a.name()), desired, byId.get(a.existingId()), beforeDockerCall, images));
            return results;
        }
        java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool((int) Math.min(PARALLEL, changing), r -> {
            Thread t = new Thread(r, "apply-" + desired.module() + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        List<java.util.concurrent.Future<ContainerResult>> futures = new ArrayList<>();
        try {
            for (PlannedAction a : plan) {
                futures.add(pool.submit(() -> execute(a, want.get(a.name()), desired, byId.get(a.existingId()), beforeDockerCall, images)));
            }
            for (java.util.concurrent.Future<ContainerResult> f : futures) {
                try {
                    results.add(f.get());
                } catch (java.util.concurrent.ExecutionException e) {
                    if (e.getCause() instanceof RuntimeException re) throw re; // SessionLostException: stop the apply
                    throw new IllegalStateException(e.getCause());
                }
            }
            return results;
        } catch (InterruptedException | RuntimeException e) {
            futures.forEach(f -> f.cancel(false));
            pool.shutdown();
            boolean interrupted = e instanceof InterruptedException;
            try {
                if (!pool.awaitTermination(5, java.util.concurrent.TimeUnit.MINUTES)) log.warn("apply of {}: Docker calls still running after 5 minutes", desired.module());
            } catch (InterruptedException again) {
                interrupted = true;
            }
            if (interrupted) Thread.currentThread().interrupt();
            throw e;
        } finally {
            pool.shutdown();
        }
    }

    /**
     * The images of one apply: each is looked up (and pulled when missing) once, however many containers use it;
     * its failure fails only the containers that use it.
     */
    private final class Images {
        private final Map<String, java.util.concurrent.CompletableFuture<Void>> seen = new java.util.concurrent.ConcurrentHashMap<>();

        /** The first caller for an image looks it up (and pulls it); the others wait for that, outside the map's locks. */
        void ensure(String image) {
            java.util.concurrent.CompletableFuture<Void> mine = new java.util.concurrent.CompletableFuture<>();
            java.util.concurrent.CompletableFuture<Void> first = seen.putIfAbsent(image, mine);
            if (first == null) {
                try {
                    docker.ensureImage(image);
                    mine.complete(null);
                } catch (RuntimeException | Error e) {
                    mine.completeExceptionally(e); // the others waiting for this image must not wait for ever
                    throw e;
                }
                return;
            }
            try {
                first.join();
            } catch (java.util.concurrent.CompletionException e) {
                if (e.getCause() instanceof RuntimeException r) throw r;
                throw e;
            }
        }
    }

    private ContainerResult execute(PlannedAction a, ContainerSpec spec, DesiredRecord desired, ObservedContainer before,
                                    Runnable beforeDockerCall, Images images) {
        String id = a.existingId();
        ContainerResult refused = policy.refuse(a, spec); // before anything is created, stopped or pulled
        if (refused != null) return refused;
        try {
            if (a.action() != PlannedAction.Kind.HELD && a.action() != PlannedAction.Kind.UNCHANGED) beforeDockerCall.run();
            switch (a.action()) {
                case HELD, UNCHANGED -> {
                    return result(a, a.action().reported(), a.reasons(), id);
                }
                case CREATE -> {
                    images.ensure(spec.image());
                    String newId = docker.create(a.dockerName(), spec, labels(desired, a.name(), spec));
                    try {
                        docker.start(newId);
                    } catch (RuntimeException e) {
                        docker.remove(newId);
                        throw e;
                    }
                    return result(a, ContainerResult.CREATED, a.reasons(), newId);
                }
                case RECREATE -> {
                    return recreate(a, spec, desired, before, images);
                }
                case REMOVE -> {
                    ContainerSpec old = before == null ? null : SpecDiff.parse(before.specJson());
                    try {
                        docker.stop(id, old == null ? 10 : old.stopTimeoutSeconds());
                        docker.remove(id);
                    } catch (RuntimeException e) {
                        // Gone meanwhile: a leftover of an interrupted recreate that this apply's recreate of the
                        // same container moved out of its way. Anything else is a failure.
                        if (!docker.labels(id).isEmpty()) throw e;
                    }
                    return result(a, ContainerResult.REMOVED, a.reasons(), id);
                }
                default -> throw new IllegalStateException("unknown action " + a.action());
            }
        } catch (SessionGuard.SessionLostException e) {
            throw e;
        } catch (RuntimeException e) {
            List<String> reasons = new ArrayList<>(a.reasons());
            reasons.add(a.action().name().toLowerCase() + " failed: " + describe(e));
            return result(a, ContainerResult.FAILED, reasons, id);
        }
    }

    /**
     * Create the new one aside, stop the old one and move it aside, start the new one; on failure put the old one
     * back and start it, so what ran keeps running.
     */
    private ContainerResult recreate(PlannedAction a, ContainerSpec spec, DesiredRecord desired, ObservedContainer before, Images images) {
        String oldId = a.existingId();
        images.ensure(spec.image());
        String nextName = a.dockerName() + NEXT_SUFFIX;
        String prevName = a.dockerName() + PREV_SUFFIX;
        String newId = outOfTheWay(nextName, null, () -> docker.create(nextName, spec, labels(desired, a.name(), spec)));
        ContainerSpec old = before == null ? null : SpecDiff.parse(before.specJson());
        boolean wasRunning = before != null && before.running();
        try {
            docker.stop(oldId, old == null ? spec.stopTimeoutSeconds() : old.stopTimeoutSeconds());
            outOfTheWay(prevName, oldId, () -> {
                docker.rename(oldId, prevName);
                return null;
            });
        } catch (RuntimeException e) {
            docker.remove(newId);
            if (wasRunning) docker.start(oldId);
            throw e;
        }
        try {
            docker.rename(newId, a.dockerName());
            docker.start(newId);
        } catch (RuntimeException e) {
            String restored = "";
            try {
                docker.remove(newId);
                docker.rename(oldId, a.dockerName());
                if (wasRunning) docker.start(oldId);
                restored = "; the previous container " + (wasRunning ? "runs again" : "is back as it was");
            } catch (RuntimeException e2) {
                restored = "; putting the previous container back failed too: " + describe(e2);
            }
            List<String> reasons = new ArrayList<>(a.reasons());
            reasons.add("new container did not start: " + describe(e) + restored);
            return result(a, ContainerResult.FAILED, reasons, oldId);
        }
        docker.remove(oldId);
        return result(a, ContainerResult.RECREATED, a.reasons(), newId);
    }

    /**
     * Runs a create or rename that gives a container {@code name}; when it fails because a container left under that
     * name by an interrupted recreate is in the way, removes that one and runs it again. (Looking for leftovers only
     * on failure saves two Docker calls per recreated container: docs/benchmarks.md, B2.)
     *
     * @param keep a container id that is never removed (the one being renamed), or {@code null}
     */
    private <T> T outOfTheWay(String name, String keep, java.util.function.Supplier<T> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            String left = docker.idByName(name);
            if (left == null || left.equals(keep)) throw e;
            log.info("removing container {} ({}), left by an interrupted recreate", name, left);
            docker.remove(left);
            return call.get();
        }
    }

    private static Map<String, String> labels(DesiredRecord desired, String name, ContainerSpec spec) {
        Map<String, String> l = new LinkedHashMap<>();
        l.put(Labels.MODULE, desired.module());
        l.put(Labels.CONTAINER, name);
        l.put(Labels.SPEC_HASH, SpecDiff.hash(spec));
        l.put(Labels.REVISION, desired.revision() == null ? "" : desired.revision());
        l.put(Labels.SPEC, SpecDiff.canonical(spec));
        return l;
    }

    private static ContainerResult result(PlannedAction a, String action, List<String> reasons, String id) {
        return new ContainerResult(a.name(), a.dockerName(), action, List.copyOf(reasons), id);
    }

    private static String summary(ApplyReport r) {
        String s = r.containers().stream()
                .collect(Collectors.groupingBy(ContainerResult::action, java.util.TreeMap::new, Collectors.counting()))
                .entrySet().stream().map(e -> e.getKey() + ":" + e.getValue()).collect(Collectors.joining(","));
        return s.isEmpty() ? "none" : s;
    }

    private void write(ApplyReport r) throws Exception {
        write(r, null);
    }

    /**
     * Writes a report; with the module lock, releases it in the same transaction when the store knows the report
     * node's version (one quorum write instead of two: docs/benchmarks.md, B5), else writes first and leaves the
     * lock to the caller's release.
     */
    private void write(ApplyReport r, ModuleLock releasing) throws Exception {
        confirmed.remove(r.module());
        MeshStore.ReportWrite w = releasing != null && releasing.isHeld() ? store.prepareReport(r) : null;
        var committed = w == null ? null : releasing.releaseWith(w.op());
        if (committed != null) {
            store.committed(w, committed.get(0));
        } else if (w == null || !store.landed(w)) {
            store.writeReport(r);
        }
        if (ApplyReport.APPLIED.equals(r.outcome())) confirmed.put(r.module(), r);
        String summary = summary(r);
        String window = r.window() == null ? "-" : r.window().schedule() + "/" + r.window().window();
        if (ApplyReport.FAILED.equals(r.outcome())) {
            log.warn("apply host={} module={} push={} revision={} outcome={} window={} containers={} error=\"{}\"",
                    r.host(), r.module(), r.push(), r.revision(), r.outcome(), window, summary, r.error());
        } else {
            log.info("apply host={} module={} push={} revision={} outcome={} window={} containers={}{}",
                    r.host(), r.module(), r.push(), r.revision(), r.outcome(), window, summary, changes(r));
        }
    }

    /** @return {@code  changes="store-registry recreated: image: a -> b; ..."} for containers that changed, else empty */
    private static String changes(ApplyReport r) {
        String c = r.containers().stream()
                .filter(x -> !ContainerResult.UNCHANGED.equals(x.action()) && !x.reasons().isEmpty())
                .map(x -> x.container() + " " + x.action() + ": " + String.join(", ", x.reasons()))
                .collect(Collectors.joining("; "));
        return c.isEmpty() ? "" : " changes=\"" + c + "\"";
    }

    static String describe(Throwable e) {
        String m = e.getMessage();
        if (m == null || m.isBlank()) return e.getClass().getSimpleName();
        return m.lines().map(String::strip).filter(s -> !s.isEmpty()).findFirst().orElse(m).replaceAll("\\s+", " ");
    }
}
