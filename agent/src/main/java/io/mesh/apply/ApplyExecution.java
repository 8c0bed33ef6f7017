package io.mesh.apply;

import io.mesh.policy.Policy;
import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.Labels;
import io.mesh.docker.ObservedContainer;
import io.mesh.docker.Readiness;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.ContainerSpec;
import io.mesh.wire.Json;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.zk.SessionGuard;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The apply's execution: plans a module against what Docker runs ({@link ApplyPlanner}) and makes the Docker calls,
 * inside the module's critical section. Its runtime is the section's guarded one
 * ({@link io.mesh.section.ModuleSection#guarded}), so every call first checks the lock is intact, and a process whose
 * lock lapsed makes no further call: the call throws {@link SessionGuard.SessionLostException}, which ends the apply.
 *
 * <p>A recreate never leaves the module worse than it was: the new container is created before the old one is
 * stopped, and if it does not start, the old one is put back and started again. Containers named by a held node are
 * never touched.
 */
final class ApplyExecution {
    private static final Logger log = LoggerFactory.getLogger(ApplyExecution.class);
    /** At most this many containers of one module are changed at once (DockerEngine's connection pool is as big). */
    static final int PARALLEL = 32;
    /** Suffix of a new container's Docker name until the old one is out of the way. */
    static final String NEXT_SUFFIX = ".mesh-next";
    /** Suffix of an old container's Docker name while its replacement starts. */
    static final String PREV_SUFFIX = ".mesh-prev";

    private final ContainerRuntime docker;
    private final Policy policy;
    private final String host;
    private final Readiness readiness;
    private Map<String, ContainerResult> reverted = Map.of();

    /**
     * @param docker the section's guarded runtime
     * @param policy what containers may do to this host
     * @param host   this host's id
     */
    ApplyExecution(ContainerRuntime docker, Policy policy, String host) {
        this.docker = docker;
        this.policy = policy;
        this.host = host;
        this.readiness = new Readiness(docker);
    }

    /**
     * Plans and executes.
     *
     * @param desired the desired state
     * @param held    this host's held nodes, by Docker name (read before the fence was taken)
     * @return one result per planned container, in plan order
     * @throws InterruptedException when interrupted
     * @throws SessionGuard.SessionLostException when the lock lapsed before a Docker call
     */
    List<ContainerResult> run(DesiredRecord desired, Map<String, HeldRecord> held) throws InterruptedException {
        return run(desired, held, Map.of());
    }

    /**
     * Plans and executes.
     *
     * @param reverted by container name, the containers this process reverted for this same push and revision:
     *                 while the previous container runs, not tried again (decision 10)
     */
    List<ContainerResult> run(DesiredRecord desired, Map<String, HeldRecord> held, Map<String, ContainerResult> reverted)
            throws InterruptedException {
        this.reverted = reverted;
        Map<String, ContainerSpec> want = desired.spec().runsOn(host) ? desired.spec().containers() : Map.of();
        List<ObservedContainer> observed = docker.moduleContainers(desired.module());
        if (putBackInterrupted(observed, held)) observed = docker.moduleContainers(desired.module());
        Map<String, ObservedContainer> byId = new LinkedHashMap<>();
        observed.forEach(o -> byId.put(o.id(), o));
        List<PlannedAction> plan = ApplyPlanner.plan(desired.module(), want, observed, held);
        return executeAll(plan, want, desired, byId);
    }

    /**
     * Puts back what a cut recreate left: a container under {@code <name>.mesh-prev} is what ran before a recreate
     * whose process died or was stopped while the new container was made, started or judged ready (a recreate that
     * completes removes it), so the container under the name was never judged ready. Whatever stands under the name
     * or under {@code .mesh-next} is removed; the previous one takes its name again, with the restart policy of its own
     * spec (it waited aside with {@code no}), and is started. The plan then recreates it as usual. Containers a window
     * holds are left alone. Failure model row 35.
     *
     * @return true when something was put back (the caller looks at Docker again)
     */
    private boolean putBackInterrupted(List<ObservedContainer> observed, Map<String, HeldRecord> held) {
        boolean any = false;
        for (ObservedContainer prev : observed) {
            if (!prev.dockerName().endsWith(PREV_SUFFIX) || prev.markedForRemoval()) continue;
            String name = prev.dockerName().substring(0, prev.dockerName().length() - PREV_SUFFIX.length());
            if (held.containsKey(name) || held.containsKey(prev.dockerName())) continue; // a window's: untouched
            for (ObservedContainer o : observed) {
                if (o != prev && (o.dockerName().equals(name) || o.dockerName().equals(name + NEXT_SUFFIX))) docker.remove(o.id());
            }
            docker.rename(prev.id(), name);
            ContainerSpec spec = SpecDiff.parse(prev.specJson());
            if (spec != null && !spec.restart().equals("no")) docker.updateRestartPolicy(prev.id(), spec.restart());
            docker.start(prev.id());
            log.warn("container {} put back under its name: a recreate of it was cut before its new container was judged ready", name);
            any = true;
        }
        return any;
    }

    /**
     * Executes a plan, results in plan order. When three or more containers need Docker calls they are changed at
     * once, at most {@link #PARALLEL} at a time, so a recreate waits for the slowest stop, not their sum; one or two
     * are changed on the apply thread, where threads would cost more than they save. When the apply is interrupted,
     * what has started is let finish (a recreate is never cut in half) and nothing more starts.
     */
    private List<ContainerResult> executeAll(List<PlannedAction> plan, Map<String, ContainerSpec> want, DesiredRecord desired,
                                             Map<String, ObservedContainer> byId) throws InterruptedException {
        Images images = new Images();
        // Leftovers under a temporary name go first, one by one: run beside the recreate of the same container, both
        // would remove the same one, and dockerd answers the second with 409 "removal already in progress".
        Map<Integer, ContainerResult> first = new HashMap<>();
        for (int i = 0; i < plan.size(); i++) {
            PlannedAction a = plan.get(i);
            if (a.action() == PlannedAction.Kind.REMOVE && (a.dockerName().endsWith(NEXT_SUFFIX) || a.dockerName().endsWith(PREV_SUFFIX))) {
                first.put(i, execute(a, want.get(a.name()), desired, byId.get(a.existingId()), images));
            }
        }
        List<PlannedAction> rest = new ArrayList<>();
        for (int i = 0; i < plan.size(); i++) if (!first.containsKey(i)) rest.add(plan.get(i));
        List<ContainerResult> others = executeTogether(rest, want, desired, byId, images);
        List<ContainerResult> results = new ArrayList<>();
        for (int i = 0, j = 0; i < plan.size(); i++) results.add(first.containsKey(i) ? first.get(i) : others.get(j++));
        return results;
    }

    /**
     * The plan's Docker calls, at once when three or more containers change (see {@link #executeAll}); a container
     * with {@code depends-on} is created or recreated only once each dependency's own call is done and satisfies its
     * condition ({@link DependencyOrder}). Results in plan order.
     */
    private List<ContainerResult> executeTogether(List<PlannedAction> given, Map<String, ContainerSpec> want, DesiredRecord desired,
                                                  Map<String, ObservedContainer> byId, Images images) throws InterruptedException {
        List<PlannedAction> plan = DependencyOrder.sort(given, want); // dependencies first: a FIFO pool never waits on a queued one
        Map<String, CompletableFuture<ContainerResult>> done = new ConcurrentHashMap<>();
        for (PlannedAction a : plan) done.putIfAbsent(a.name(), new CompletableFuture<>());
        List<ContainerResult> ordered = executeOrdered(plan, want, desired, byId, images, done);
        Map<PlannedAction, ContainerResult> byAction = new IdentityHashMap<>();
        for (int i = 0; i < plan.size(); i++) byAction.put(plan.get(i), ordered.get(i));
        List<ContainerResult> results = new ArrayList<>();
        for (PlannedAction a : given) results.add(byAction.get(a));
        return results;
    }

    /** One container's calls once its dependencies are done; its result completes {@code done} for its dependents. */
    private ContainerResult executeAfter(PlannedAction a, Map<String, ContainerSpec> want, DesiredRecord desired,
                                         Map<String, ObservedContainer> byId, Images images,
                                         Map<String, CompletableFuture<ContainerResult>> done) throws InterruptedException {
        ContainerResult r = null;
        try {
            ContainerSpec spec = want.get(a.name());
            if (spec != null && (a.action() == PlannedAction.Kind.CREATE || a.action() == PlannedAction.Kind.RECREATE)) {
                String unmet = DependencyOrder.unmet(spec, name -> {
                    CompletableFuture<ContainerResult> f = done.get(name);
                    return f == null ? null : f.join();
                });
                if (unmet != null) {
                    r = result(a, ContainerAction.FAILED, plus(a.reasons(), List.of(), (a.action() == PlannedAction.Kind.CREATE ? "not created: " : "not recreated (the previous one runs on): ") + unmet), a.existingId());
                }
            }
            if (r == null) r = execute(a, want.get(a.name()), desired, byId.get(a.existingId()), images);
            return r;
        } finally {
            CompletableFuture<ContainerResult> f = done.get(a.name());
            if (f != null && r != null) f.complete(r);
            else if (f != null) f.completeExceptionally(new IllegalStateException("the apply of " + a.dockerName() + " stopped"));
        }
    }

    private List<ContainerResult> executeOrdered(List<PlannedAction> plan, Map<String, ContainerSpec> want, DesiredRecord desired,
                                                 Map<String, ObservedContainer> byId, Images images,
                                                 Map<String, CompletableFuture<ContainerResult>> done) throws InterruptedException {
        long changing = plan.stream().filter(a -> a.action() != PlannedAction.Kind.HELD && a.action() != PlannedAction.Kind.UNCHANGED).count();
        long waiting = plan.stream().filter(a -> a.action() == PlannedAction.Kind.CREATE || a.action() == PlannedAction.Kind.RECREATE).count();
        List<ContainerResult> results = new ArrayList<>();
        if (changing <= 2 && waiting < 2) { // see above; two readiness waits are worth a thread each
            for (PlannedAction a : plan) results.add(executeAfter(a, want, desired, byId, images, done));
            return results;
        }
        AtomicInteger n = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool((int) Math.min(PARALLEL, changing), r -> {
            Thread t = new Thread(r, "apply-" + desired.module() + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        List<Future<ContainerResult>> futures = new ArrayList<>();
        try {
            for (PlannedAction a : plan) {
                futures.add(pool.submit(() -> executeAfter(a, want, desired, byId, images, done)));
            }
            for (Future<ContainerResult> f : futures) {
                try {
                    results.add(f.get());
                } catch (ExecutionException e) {
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
                if (!pool.awaitTermination(5, TimeUnit.MINUTES)) log.warn("apply of {}: Docker calls still running after 5 minutes", desired.module());
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
     * its failure fails only the containers that use it, and is told in full once: the others name the container whose
     * reasons say it (a missing image is reported once per apply, decision 17).
     */
    private final class Images {
        private final Map<String, CompletableFuture<Void>> seen = new ConcurrentHashMap<>();
        private final Map<String, String> askedFirst = new ConcurrentHashMap<>();

        /**
         * The first caller for an image looks it up (and pulls it); the others wait for that, outside the map's locks.
         *
         * @param image     the image
         * @param container the Docker name of the container that needs it
         */
        void ensure(String image, String container) {
            CompletableFuture<Void> mine = new CompletableFuture<>();
            askedFirst.putIfAbsent(image, container);
            CompletableFuture<Void> first = seen.putIfAbsent(image, mine);
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
            } catch (CompletionException e) {
                if (e.getCause() instanceof SessionGuard.SessionLostException r) throw r;
                throw new IllegalStateException("image " + image + " is not available (see " + askedFirst.get(image) + ")", e.getCause());
            }
        }
    }

    private ContainerResult execute(PlannedAction a, ContainerSpec spec, DesiredRecord desired, ObservedContainer before,
                                    Images images) {
        String id = a.existingId();
        ContainerResult refused = refuse(a, spec); // before anything is created, stopped or pulled
        if (refused != null) return refused;
        try {
            switch (a.action()) {
                case HELD, UNCHANGED -> {
                    return before == null ? result(a, a.action().reported(), a.reasons(), id)
                            : new ContainerResult(a.name(), a.dockerName(), a.action().reported(), List.copyOf(a.reasons()), id,
                            before.health(), before.imageId());
                }
                case CREATE -> {
                    images.ensure(spec.image(), a.dockerName());
                    String newId = docker.create(a.dockerName(), spec, labels(desired, a.name(), spec));
                    try {
                        docker.start(newId);
                    } catch (RuntimeException e) {
                        docker.remove(newId);
                        throw e;
                    }
                    Readiness.Verdict v = readiness.await(newId, spec.readiness());
                    if (!v.ready()) {
                        docker.remove(newId); // the next apply creates it again, after its back-off
                        return result(a, ContainerAction.FAILED, plus(a.reasons(), v.reasons(), "removed"), newId, v);
                    }
                    return result(a, ContainerAction.CREATED, a.reasons(), newId, v);
                }
                case RECREATE -> {
                    ContainerResult last = reverted.get(a.name());
                    if (last != null && before != null && before.running()) {
                        // Trying the same push again would stop the container that runs for as long as the new one
                        // takes to fail again, at every retry (decision 10).
                        List<String> reasons = new ArrayList<>(last.reasons());
                        reasons.add("not tried again for this push while the previous container runs: push a change to try again");
                        return result(a, ContainerAction.REVERTED, reasons, id);
                    }
                    return recreate(a, spec, desired, before, images);
                }
                case CRASH_LOOP -> {
                    List<String> reasons = new ArrayList<>(a.reasons());
                    for (String line : docker.logTail(id, Readiness.LOG_LINES)) reasons.add("log: " + line);
                    return result(a, ContainerAction.FAILED, reasons, id);
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
                    return result(a, ContainerAction.REMOVED, a.reasons(), id);
                }
                default -> throw new IllegalStateException("unknown action " + a.action());
            }
        } catch (SessionGuard.SessionLostException e) {
            throw e;
        } catch (RuntimeException e) {
            List<String> reasons = new ArrayList<>(a.reasons());
            reasons.add(a.action().name().toLowerCase() + " failed: " + describe(e));
            return result(a, ContainerAction.FAILED, reasons, id);
        }
    }

    /**
     * Create the new one aside, stop the old one and move it aside, start the new one; on failure put the old one
     * back and start it, so what ran keeps running.
     *
     * <p>The old one waits aside with restart policy {@code no}: a recreate cut before it removes the old one (a
     * crash, a lapsed lock, dockerd going away) leaves it stopped under {@code .mesh-prev}, and dockerd, when it
     * starts again, would start a stopped {@code always} container (and an {@code on-failure} one killed at its stop
     * timeout, or an {@code unless-stopped} one not stopped by hand) next to the new one, or beside a window's step:
     * the seed's bug by another road (seen by the fleet history checker, FleetHistoryIT). Its policy is put back
     * when it is put back.
     */
    private ContainerResult recreate(PlannedAction a, ContainerSpec spec, DesiredRecord desired, ObservedContainer before, Images images) {
        if (before != null && before.markedForRemoval()) return replaceMarkedForRemoval(a, spec, desired, before, images);
        String oldId = a.existingId();
        images.ensure(spec.image(), a.dockerName());
        String nextName = a.dockerName() + NEXT_SUFFIX;
        String prevName = a.dockerName() + PREV_SUFFIX;
        String newId = outOfTheWay(desired.module(), nextName, null, () -> docker.create(nextName, spec, labels(desired, a.name(), spec)));
        ContainerSpec old = before == null ? null : SpecDiff.parse(before.specJson());
        boolean wasRunning = before != null && before.running();
        String oldPolicy = null;
        try {
            oldPolicy = docker.restartPolicy(oldId);
            if (oldPolicy.equals("no")) oldPolicy = null;
            else docker.updateRestartPolicy(oldId, "no");
            docker.stop(oldId, old == null ? spec.stopTimeoutSeconds() : old.stopTimeoutSeconds());
            outOfTheWay(desired.module(), prevName, oldId, () -> {
                docker.rename(oldId, prevName);
                return null;
            });
        } catch (RuntimeException e) {
            if (e instanceof SessionGuard.SessionLostException) throw e; // a lapsed lock makes no further call
            docker.remove(newId);
            if (oldPolicy != null) docker.updateRestartPolicy(oldId, oldPolicy);
            if (wasRunning) docker.start(oldId);
            throw e;
        }
        Readiness.Verdict v;
        try {
            v = takeNameAndStart(a, newId, spec);
        } catch (RuntimeException e) {
            if (e instanceof SessionGuard.SessionLostException) throw e; // a lapsed lock makes no further call
            String restored = putBack(a, newId, oldId, oldPolicy, wasRunning);
            List<String> reasons = new ArrayList<>(a.reasons());
            reasons.add("new container did not start: " + describe(e) + restored);
            return result(a, ContainerAction.FAILED, reasons, oldId);
        }
        if (!v.ready()) {
            String restored = putBack(a, newId, oldId, oldPolicy, wasRunning);
            return result(a, ContainerAction.REVERTED, plus(a.reasons(), v.reasons(), restored.substring(2)), oldId, v);
        }
        docker.remove(oldId);
        return result(a, ContainerAction.RECREATED, a.reasons(), newId, v);
    }

    /** The new container takes the container's name and starts; then its readiness is awaited. */
    private Readiness.Verdict takeNameAndStart(PlannedAction a, String newId, ContainerSpec spec) {
        docker.rename(newId, a.dockerName());
        docker.start(newId);
        return readiness.await(newId, spec.readiness());
    }

    /**
     * Removes the new container and puts the old one back under its name, with its restart policy, running if it ran.
     *
     * @return {@code "; the previous container runs again"} or what went wrong
     */
    private String putBack(PlannedAction a, String newId, String oldId, String oldPolicy, boolean wasRunning) {
        boolean interrupted = Thread.interrupted(); // a stop of the agent mid-wait: the old one is put back first
        try {
            docker.remove(newId);
            docker.rename(oldId, a.dockerName());
            if (oldPolicy != null) docker.updateRestartPolicy(oldId, oldPolicy);
            if (wasRunning) docker.start(oldId);
            return "; the previous container " + (wasRunning ? "runs again" : "is back as it was");
        } catch (SessionGuard.SessionLostException e) {
            throw e;
        } catch (RuntimeException e2) {
            return "; putting the previous container back failed too: " + describe(e2);
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    private static List<String> plus(List<String> a, List<String> b, String last) {
        List<String> out = new ArrayList<>(a);
        out.addAll(b);
        out.add(last);
        return out;
    }

    /**
     * Replaces a container Docker marked for removal ({@link ObservedContainer#markedForRemoval}): nothing of it runs
     * or can run again, so there is nothing to stop or put back. The new one is created aside, the old one removed
     * (forced), then the new one takes the name and starts. When Docker cannot remove the old one, the new one is
     * removed and the container fails with what to do; an apply never leaves two containers under one module name.
     */
    private ContainerResult replaceMarkedForRemoval(PlannedAction a, ContainerSpec spec, DesiredRecord desired,
                                                    ObservedContainer before, Images images) {
        images.ensure(spec.image(), a.dockerName());
        String nextName = a.dockerName() + NEXT_SUFFIX;
        String newId = outOfTheWay(desired.module(), nextName, null, () -> docker.create(nextName, spec, labels(desired, a.name(), spec)));
        try {
            docker.remove(before.id());
        } catch (RuntimeException e) {
            if (e instanceof SessionGuard.SessionLostException) throw e;
            docker.remove(newId);
            List<String> reasons = new ArrayList<>(a.reasons());
            reasons.add("Docker marked it for removal (Dead, " + before.state() + ": it cannot start again) but cannot remove it: "
                    + describe(e) + "; fix what Docker names, then `docker rm -f " + a.dockerName() + "`, and the next apply creates it");
            return result(a, ContainerAction.FAILED, reasons, before.id());
        }
        Readiness.Verdict v;
        try {
            v = takeNameAndStart(a, newId, spec);
        } catch (RuntimeException e) {
            if (e instanceof SessionGuard.SessionLostException) throw e;
            docker.remove(newId); // the name is left free: the next apply creates it
            throw e;
        }
        if (!v.ready()) {
            docker.remove(newId);
            return result(a, ContainerAction.FAILED, plus(a.reasons(), v.reasons(), "removed"), newId, v);
        }
        return result(a, ContainerAction.RECREATED, a.reasons(), newId, v);
    }

    /**
     * Runs a create or rename that gives a container {@code name}; when it fails because a container left under that
     * name by an interrupted recreate is in the way, removes that one and runs it again (looking only on failure
     * saves two Docker calls per recreate).
     *
     * @param keep a container id that is never removed (the one being renamed), or {@code null}
     */
    private <T> T outOfTheWay(String module, String name, String keep, Supplier<T> call) {
        try {
            return call.get();
        } catch (RuntimeException e) {
            String left = docker.idByName(name);
            if (left == null || left.equals(keep)) throw e;
            // A container of another module is never touched (issue 11 rule 7); an unlabelled one under this
            // module's temporary name is nobody's.
            String owner = docker.labels(left).get(Labels.MODULE);
            if (owner != null && !module.equals(owner)) {
                throw new IllegalStateException("the name " + name + " is taken by a container of module " + owner + "; not touching it", e);
            }
            log.info("removing container {} ({}), left by an interrupted recreate", name, left);
            docker.remove(left);
            return call.get();
        }
    }

    static Map<String, String> labels(DesiredRecord desired, String name, ContainerSpec spec) {
        Map<String, String> l = new LinkedHashMap<>();
        l.put(Labels.MODULE, desired.module());
        l.put(Labels.CONTAINER, name);
        l.put(Labels.SPEC_HASH, SpecDiff.hash(spec));
        l.put(Labels.REVISION, desired.revision() == null ? "" : desired.revision());
        l.put(Labels.SPEC, SpecDiff.canonical(spec));
        if (spec.ready() != null) l.put(Labels.READY, Json.text(spec.ready()));
        return l;
    }

    private static ContainerResult result(PlannedAction a, ContainerAction action, List<String> reasons, String id) {
        return new ContainerResult(a.name(), a.dockerName(), action, List.copyOf(reasons), id);
    }

    /**
     * A result with the health of the container the verdict judged, and its image when it is the one that now runs
     * (not for a container that failed or was reverted).
     */
    private static ContainerResult result(PlannedAction a, ContainerAction action, List<String> reasons, String id, Readiness.Verdict v) {
        return new ContainerResult(a.name(), a.dockerName(), action, List.copyOf(reasons), id, v.state().health(),
                action.failed() ? null : v.state().imageId());
    }

    static String describe(Throwable e) {
        return Applier.describe(e);
    }

    /**
     * Checks the container of a planned create or recreate against this agent's {@link Policy}.
     *
     * @return {@code null} when the action is allowed (or is neither a create nor a recreate); else a {@code failed}
     *         result naming every refusal and the option (or fix) that would allow it, keeping the existing container's id
     */
    private ContainerResult refuse(PlannedAction action, ContainerSpec spec) {
        List<String> refusals = refusals(policy, action, spec);
        if (refusals.isEmpty()) return null;
        List<String> reasons = new ArrayList<>(action.reasons());
        reasons.addAll(refusals);
        return new ContainerResult(action.name(), action.dockerName(), ContainerAction.FAILED, List.copyOf(reasons), action.existingId());
    }

    /**
     * The checks of a planned action before any Docker call, shared by the apply and a plan ({@link DryRun}): the
     * agent's policy, and host-path volume sources that are missing ({@link MissingHostPaths}).
     *
     * @return {@code refused by this agent's policy: ...} for each refusal of a planned create or recreate, then each
     *         missing host path; empty when allowed or when the action is neither
     */
    static List<String> refusals(Policy policy, PlannedAction action, ContainerSpec spec) {
        if (spec == null || (action.action() != PlannedAction.Kind.CREATE && action.action() != PlannedAction.Kind.RECREATE)) return List.of();
        List<String> out = new ArrayList<>();
        policy.refusals(spec).forEach(r -> out.add("refused by this agent's policy: " + r));
        out.addAll(MissingHostPaths.of(spec));
        return out;
    }
}