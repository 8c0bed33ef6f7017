package io.mesh.apply;

import static io.mesh.apply.ApplyPlanner.FAILED_SUFFIX;
import static io.mesh.apply.ApplyPlanner.NEXT_SUFFIX;
import static io.mesh.apply.ApplyPlanner.PREV_SUFFIX;

import io.mesh.docker.IdleThreads;
import io.mesh.hold.HoldStops;
import io.mesh.policy.Policy;
import io.mesh.secrets.SecretsDir;
import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.DockerAnswer;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.ImageInfo;
import io.mesh.docker.ImageReference;
import io.mesh.docker.Labels;
import io.mesh.docker.ObservedContainer;
import io.mesh.docker.Readiness;
import io.mesh.hooks.ContainerHooks;
import io.mesh.hooks.HookPhase;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.manifest.ContainerSpec;
import io.mesh.wire.Json;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.PullPolicy;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The apply's execution: plans a module against what Docker runs ({@link ApplyPlanner}) and makes the Docker calls,
 * inside the module's critical section. Its runtime is the section's guarded one
 * ({@link io.mesh.section.ModuleSection#guarded}), so every call first checks the lock is intact, and a process whose
 * lock lapsed makes no further call: the call throws {@link SessionGuard.SessionLostException}, which ends the apply,
 * but for putting back, under the host fence alone ({@link #fencedBy}), the recreate it was in the middle of.
 *
 * <p>A recreate never leaves the module worse than it was: the new container is created before the old one is
 * stopped, and if it does not start, the old one is put back and started again. Containers named by a held node are
 * never touched.
 */
final class ApplyExecution {
    private static final Logger log = LoggerFactory.getLogger(ApplyExecution.class);
    /** At most this many containers of one module are changed at once (DockerEngine's connection pool is as big). */
    static final int PARALLEL = 32;
    /** The last reason of a recreate refused before any call (a network not ready, a secret not read). */
    private static final String NOT_RECREATED = "not recreated: the container that runs is left as it is";

    private final ContainerRuntime docker;
    /** The section's fence-only runtime: what a recreate cut by a lapsed lock puts back with (never waits for ZooKeeper). */
    private ContainerRuntime fenced;
    /** Asked before each container's change begins: why the module may no longer change (a freeze), or {@code null}. */
    private Supplier<String> stopChanges = () -> null;
    /** Marks the calls from now on as a repair's, and answers what marks them back (decision 28); by default nothing. */
    private Supplier<Runnable> asRepair = () -> () -> {};
    private volatile String stoppedBy;
    /** What the apply is doing, for the push's status while it is not done (decision 32). */
    private ApplyProgress progress = ApplyProgress.NONE;
    private final Policy policy;
    private final String host;
    private final Readiness readiness;
    private final SecretsDir secretsDir;
    /** What the earlier tries of this push left ({@link FailedTries}), or {@code null}: its back-off gates them. */
    private FailedTries.Memory tries;
    /** Names of the containers this apply created or recreated, or tried to (a start was sent). */
    private final java.util.Set<String> tried = ConcurrentHashMap.newKeySet();
    /** Names of those that did not start (Docker refused the start) or did not become ready. */
    private final java.util.Set<String> notReady = ConcurrentHashMap.newKeySet();
    /** Names of those whose change failed on the engine: a call Docker never answered, or answered shutting down. */
    private final java.util.Set<String> engineFailed = ConcurrentHashMap.newKeySet();
    /** By container name, its secrets as read at the start of this apply. */
    private Map<String, SecretsDir.Resolved> secrets = Map.of();
    /** What this apply did to the module's networks before its plan ran, and the ones containers cannot join. */
    private ModuleNetworks.Outcome networkProblems = ModuleNetworks.Outcome.NONE;
    /** Which containers operators' holds stopped ({@code --stop}), or {@code null}: then none is started as it was. */
    private HoldStops holdStops;
    /** The module's containers as this apply's plan saw them (set by {@link #run}). */
    private List<ObservedContainer> observed = List.of();

    /**
     * @param docker the section's guarded runtime
     * @param policy what containers may do to this host
     * @param host    this host's id
     * @param secrets the host's secrets dir, read for each container with secrets
     */
    ApplyExecution(ContainerRuntime docker, Policy policy, String host, SecretsDir secrets) {
        this.docker = docker;
        this.fenced = docker;
        this.policy = policy;
        this.host = host;
        this.readiness = new Readiness(docker);
        this.secretsDir = secrets;
        this.hooks = new ContainerHooks(secrets);
    }

    /** The containers' hooks, run around this apply's stops and starts (decision 38). */
    private final ContainerHooks hooks;

    /** What a recreate does before it stops a running container, its pre-stop aside: a rollout's silence of it. */
    @FunctionalInterface
    interface BeforeStop {
        /** @param dockerName the container about to be stopped */
        void before(String dockerName);
    }

    private BeforeStop beforeStop = n -> { };

    /**
     * @param b called before each recreate stops a running container (a rollout's silences: {@link RolloutSilences})
     * @return this
     */
    ApplyExecution beforeEachStop(BeforeStop b) {
        this.beforeStop = b;
        return this;
    }

    /**
     * Runs a container's hook through the section's runtime (a lapsed lock runs none: its refusal is thrown) and adds
     * its line to {@code reasons}; whatever the hook did, the stop or start it goes with is made (decision 38).
     */
    private void hook(HookPhase phase, PlannedAction a, String id, ContainerSpec spec, List<String> reasons) {
        hooks.run(docker, phase, a.dockerName(), id, spec, false).ifPresent(r -> reasons.add("hook " + r.line()));
    }

    /**
     * @param runtime the section's fence-only runtime ({@code ModuleSection.fenced}): a recreate whose lock lapses puts
     *                the previous container back with it, or finishes, rather than leave it stopped aside for the outage
     * @return this
     */
    ApplyExecution fencedBy(ContainerRuntime runtime) {
        this.fenced = runtime;
        return this;
    }

    /**
     * @param why asked before each container's change begins (not between the calls of one): why the module may no
     *            longer change (a freeze that came after the apply began, SPEC.md "Freezes"), or {@code null}
     * @return this
     */
    ApplyExecution stopChangesWhen(Supplier<String> why) {
        this.stopChanges = why;
        return this;
    }

    /**
     * @param asRepair marks the section's calls from now on as a repair's and answers what marks them back
     *                 ({@code ModuleSection.repairing}): a put-back inside an apply of a push is a repair, which a freeze
     *                 lets through (SPEC.md "Freezes"; decision 28)
     * @return this
     */
    ApplyExecution recordingRepairsBy(Supplier<Runnable> asRepair) {
        this.asRepair = asRepair;
        return this;
    }

    /**
     * @param progress told the pulls and readiness waits as they go (decision 32); {@link ApplyProgress#NONE} by default
     * @return this
     */
    ApplyExecution reportingTo(ApplyProgress progress) {
        this.progress = progress;
        return this;
    }

    /**
     * @param stops where operators' holds remembered their {@code --stop}s: a container one stopped, whose hold has ended,
     *              is started again as it was, not recreated (decision 33)
     * @return this
     */
    ApplyExecution startingHoldStopsFrom(HoldStops stops) {
        this.holdStops = stops;
        return this;
    }

    /** @return true when a freeze since the apply began stops changes now ({@link #stopChangesWhen}); notes why */
    private boolean changesStopped() {
        String why = stopChanges.get();
        if (why != null) stoppedBy = why;
        return why != null;
    }

    /** @return why changes stopped mid-apply ({@link #stopChangesWhen}), or {@code null} when they did not */
    String stoppedBy() { return stoppedBy; }

    /**
     * Repairs only, for a module that may not change now (frozen, or a host its rollout keeps waiting): what a cut
     * recreate left aside is put back, and every container of the module that is not running and not held is started
     * again, the same container, as it is (SPEC.md "Freezes": a freeze stops changes, not repairs). Nothing is created,
     * recreated or removed.
     *
     * @param module module name
     * @param held   this host's held nodes, by Docker name
     * @param why    why only repairs, for the reasons ({@code module frozen ...})
     * @param specOf the desired spec of a container by Docker name (or {@code null}): the hooks of a container created
     *               without its hooks label; one that has it runs the {@code post-start} it was created with (decision 38)
     * @return one result per container started again (action {@code unchanged}, or {@code failed} with Docker's answer)
     */
    List<ContainerResult> repair(String module, Map<String, HeldRecord> held, String why, java.util.function.Function<String, ContainerSpec> specOf) {
        List<ObservedContainer> observed = docker.moduleContainers(module);
        if (putBackInterrupted(observed, held)) observed = docker.moduleContainers(module);
        List<ContainerResult> out = new ArrayList<>();
        for (ObservedContainer o : observed) {
            String name = o.dockerName();
            if (o.running() || o.markedForRemoval() || ApplyPlanner.keptAside(name)
                    || held.containsKey(name)) continue;
            List<String> reasons = new ArrayList<>();
            reasons.add("not running: " + o.state());
            try {
                ContainerSpec was = SpecDiff.parse(o.specJson());
                if (was != null) restartPolicyBack(o.id(), was);
                docker.start(o.id());
                reasons.add("started again as it was (" + why + ": repairs go on, changes wait)");
                // Started as it was: its hooks as it was created, else the desired spec's (a container made before the label)
                ContainerSpec withHooks = ContainerHooks.asCreated(docker.labels(o.id()));
                hooks.run(docker, HookPhase.POST_START, name, o.id(), withHooks != null ? withHooks : specOf.apply(name), false)
                        .ifPresent(r -> reasons.add("hook " + r.line()));
                out.add(new ContainerResult(o.name(), name, ContainerAction.UNCHANGED, reasons, o.id(), o.health(), o.imageId()));
                log.info("container {} of {} started again as it was: {}", name, module, why);
            } catch (SessionGuard.SessionLostException e) {
                throw e;
            } catch (RuntimeException e) {
                reasons.add("start failed: " + describe(e));
                out.add(new ContainerResult(o.name(), name, ContainerAction.FAILED, reasons, o.id(), o.health(), o.imageId()));
            }
        }
        return out;
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
        return run(desired, held, null);
    }

    /**
     * Plans and executes.
     *
     * @param tries what the earlier tries of this same push and revision left on this host ({@link FailedTries}), or
     *              {@code null}: a container that did not become ready then is not created or recreated again before
     *              the module's next try, and one a recreate reverted not at all while the previous one runs (decision
     *              10), whatever happened since (an agent restart, a window, a freeze, an outage)
     */
    List<ContainerResult> run(DesiredRecord desired, Map<String, HeldRecord> held, FailedTries.Memory tries) throws InterruptedException {
        this.tries = tries;
        Map<String, ContainerSpec> want = desired.spec().runsOn(host) ? desired.spec().containersAsRun() : Map.of();
        this.secrets = resolve(secretsDir, want);
        List<ObservedContainer> observed = docker.moduleContainers(desired.module());
        if (putBackInterrupted(observed, held)) observed = docker.moduleContainers(desired.module());
        this.observed = observed;
        Map<String, ObservedContainer> byId = new LinkedHashMap<>();
        observed.forEach(o -> byId.put(o.id(), o));
        Images images = new Images();
        Map<String, String> pulled = images.pullAlways(want, held.keySet(), desired.module());
        Map<String, HoldStops.Stop> stops = holdStops == null ? Map.of() : holdStops.read(desired.module());
        List<PlannedAction> plan = ApplyPlanner.plan(desired.module(), want, observed, held, digests(secrets), pulled,
                startAsItWas(stops, docker, observed, held));
        ModuleNetworks networks = new ModuleNetworks(docker);
        // A network's create, recreate or removal is a change, as a container's is: not begun once a freeze came since
        // the apply began (a long pull above leaves room for one; SPEC.md "Freezes").
        if (!changesStopped()) this.networkProblems = networks.ensure(desired.spec(), host, observed, held); // before their containers
        List<ContainerResult> results = images.withDigests(executeAll(plan, want, desired, byId, images), want);
        if (holdStops != null) {
            // Started once, recreated, removed, or no longer as the hold left it: a later stop is not the hold's
            // (decision 33). Only the stops of containers still held wait for their hold's end.
            holdStops.forget(desired.module(), stops.keySet().stream().filter(name -> !held.containsKey(name)).toList());
        }
        // Only where networks were or are: a module that never had one costs no network list at each apply.
        boolean hadNetworks = !desired.spec().networks().isEmpty()
                || observed.stream().anyMatch(o -> o.specJson() != null && o.specJson().contains("\"networks\":"));
        List<String> pruned = hadNetworks && !changesStopped() ? networks.prune(desired.spec(), host) : List.of();
        return withNetworkNotes(results, want, networkProblems, pruned);
    }

    /**
     * The containers an ended operator's hold stopped that are still as it left them (decision 33, point 2): the same id,
     * not running, not started since (Docker's {@code State.StartedAt} as recorded), not held any more.
     *
     * @param remembered the module's hold stops ({@link HoldStops#read}), by Docker name
     * @return by container id, the reason its start gives
     */
    static Map<String, String> startAsItWas(Map<String, HoldStops.Stop> remembered, ContainerRuntime docker, List<ObservedContainer> observed,
                                            Map<String, HeldRecord> held) {
        Map<String, String> out = new HashMap<>();
        for (Map.Entry<String, HoldStops.Stop> e : remembered.entrySet()) {
            if (held.containsKey(e.getKey())) continue;
            HoldStops.Stop stop = e.getValue();
            ObservedContainer o = observed.stream().filter(c -> c.dockerName().equals(e.getKey())).findFirst().orElse(null);
            boolean asLeft = false;
            if (o != null && o.id().equals(stop.containerId()) && !o.running() && !o.markedForRemoval()) {
                try {
                    asLeft = java.util.Objects.equals(docker.runState(o.id()).startedAt(), stop.startedAt());
                } catch (io.mesh.docker.NoSuchContainerException gone) {
                    asLeft = false;
                }
            }
            if (asLeft) out.put(o.id(), stop.startedAgain());
        }
        return out;
    }

    /**
     * Reads the secrets of every container that has some, once per apply (and per plan and no-op reconcile): no watch,
     * a rotated file is seen at the next of these (decision 18).
     *
     * @return by container name, its secrets; containers without secrets are left out
     */
    static Map<String, SecretsDir.Resolved> resolve(SecretsDir dir, Map<String, ContainerSpec> want) {
        Map<String, SecretsDir.Resolved> out = new HashMap<>();
        want.forEach((name, spec) -> {
            if (!spec.secrets().isEmpty()) out.put(name, dir.resolve(spec));
        });
        return out;
    }

    /** @return by container name, its secrets' digests, as the planner takes them */
    static Map<String, Map<String, String>> digests(Map<String, SecretsDir.Resolved> secrets) {
        Map<String, Map<String, String>> out = new HashMap<>();
        secrets.forEach((name, r) -> out.put(name, r.digests()));
        return out;
    }

    /**
     * Puts back what a cut recreate left: a container under {@code <name>.mesh-prev} is what ran before a recreate
     * whose process died or was stopped while the new container was made, started or judged ready (a recreate that
     * completes removes it), so the container under the name was never judged ready. Whatever stands under the name
     * or under {@code .mesh-next} is removed; the previous one takes its name again, with the restart policy of its own
     * spec (it waited aside with {@code no}), and is started. The plan then recreates it as usual. Containers a window
     * holds are left alone. Failure model row 35. When dockerd answers that it cannot remove what stands under the name,
     * that container is not put back (row 69): the plan fails it, and the others go on.
     *
     * @return true when something was put back (the caller looks at Docker again)
     */
    private boolean putBackInterrupted(List<ObservedContainer> observed, Map<String, HeldRecord> held) {
        Runnable back = asRepair.get();
        try {
            return putBack(observed, held);
        } finally {
            back.run();
        }
    }

    private boolean putBack(List<ObservedContainer> observed, Map<String, HeldRecord> held) {
        boolean any = false;
        for (ObservedContainer prev : observed) {
            if (!prev.dockerName().endsWith(PREV_SUFFIX) || prev.markedForRemoval()) continue;
            String name = prev.dockerName().substring(0, prev.dockerName().length() - PREV_SUFFIX.length());
            if (ApplyPlanner.isHeld(prev.dockerName(), held)) continue; // a window's or an operator's: untouched
            try {
                for (ObservedContainer o : observed) {
                    if (o != prev && (o.dockerName().equals(name) || o.dockerName().equals(name + NEXT_SUFFIX))) removeOrMoveAside(name, o.id());
                }
            } catch (RuntimeException e) {
                // dockerd away or the lock lapsing fails the apply as before: the next one puts the container back
                if (e instanceof SessionGuard.SessionLostException || !DockerEngine.answered(e)) throw e;
                // Docker cannot free the name (FleetHistoryIT seed 9203727656127556243: a container a dockerd restart
                // left "Removal In Progress", its layer busy): this one is not put back, and the plan fails it naming
                // what Docker says; the module's other containers are applied, not failed with it, at every apply.
                log.warn("container {} not put back under its name: Docker cannot remove what stands there ({})", name, describe(e));
                any = true; // what was removed before the failure is gone: look again
                continue;
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
                                             Map<String, ObservedContainer> byId, Images images) throws InterruptedException {
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
        List<PlannedAction> plan = DependencyOrder.sort(given, want); // dependencies first: a worker never waits on an action not yet taken
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

    /**
     * Threads for the Docker calls of applies that change several containers at once: shared by every apply of this
     * process, a thread per call running now, each gone {@link IdleThreads#IDLE} after its last (decision 23). A pool
     * per apply started and ended two threads or more per module per push: with a few hundred simulated agents in one
     * JVM, thread starts and exits were most of their CPU (docs/benchmark-notes.md, B5).
     */
    private static final ExecutorService CALLS = IdleThreads.onDemand("apply-calls");

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
        // At most PARALLEL workers, each taking the next action in plan order: dependencies come first in the plan, so a
        // worker waiting on one waits on an action another worker has already taken.
        int workers = (int) Math.min(PARALLEL, changing);
        ContainerResult[] out = new ContainerResult[plan.size()];
        AtomicInteger next = new AtomicInteger();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch finished = new CountDownLatch(workers);
        for (int w = 1; w <= workers; w++) {
            String name = "apply-" + desired.module() + "-" + w; // as the log lines show it
            Runnable worker = () -> {
                Thread t = Thread.currentThread();
                String was = t.getName();
                t.setName(name);
                try {
                    for (int i; !stop.get() && (i = next.getAndIncrement()) < out.length; ) {
                        out[i] = executeAfter(plan.get(i), want, desired, byId, images, done);
                    }
                } catch (Throwable e) {
                    failed.compareAndSet(null, e);
                    stop.set(true); // nothing more starts
                } finally {
                    t.setName(was);
                    finished.countDown();
                }
            };
            try {
                CALLS.execute(worker);
            } catch (RuntimeException | Error e) { // no thread to be had: the workers started finish, no more start
                stop.set(true);
                for (int unstarted = w; unstarted <= workers; unstarted++) finished.countDown();
                finished.await(5, TimeUnit.MINUTES);
                throw e;
            }
        }
        try {
            finished.await();
        } catch (InterruptedException e) {
            stop.set(true);
            boolean ended = false;
            try {
                ended = finished.await(5, TimeUnit.MINUTES); // what has started is let finish
            } catch (InterruptedException again) {
                // interrupted twice: go
            }
            if (!ended) log.warn("apply of {}: Docker calls still running after 5 minutes", desired.module());
            Thread.currentThread().interrupt();
            throw e;
        }
        Throwable e = failed.get();
        if (e instanceof RuntimeException re) throw re; // SessionLostException: stop the apply
        if (e instanceof Error err) throw err;
        if (e != null) throw new IllegalStateException(e);
        return List.of(out);
    }

    /**
     * The images of one apply, as each container's {@code pull} says (decision 20): each image is looked up, pulled or
     * refused once per policy, however many containers use it; its failure fails only the containers that use it, and
     * is told in full once: the others name the container whose reasons say it (a missing image is reported once per
     * apply, decision 17). Then the registry digest of each image the apply's containers run, one image inspect per image.
     */
    private final class Images {
        private final Map<String, CompletableFuture<ImageInfo>> seen = new ConcurrentHashMap<>();
        private final Map<String, ImageInfo> byId = new ConcurrentHashMap<>();
        /** By the key of {@link #seen}, the Docker name of the container that asked for it first. */
        private final Map<String, String> askedFirst = new ConcurrentHashMap<>();

        /**
         * Before the plan: pulls the image of every {@code pull: always} container that is not held and that this
         * agent's policy allows (a refused container is created, recreated and pulled for by nobody), so that the plan
         * sees which images the pulls changed. A failed pull is kept for the containers that use the image
         * ({@link #ensure}, {@link #pullFailure}); the others go on.
         *
         * @return by image reference, the image id it names after its pull
         */
        Map<String, String> pullAlways(Map<String, ContainerSpec> want, java.util.Set<String> held, String module) {
            Map<String, String> pulled = new HashMap<>();
            for (Map.Entry<String, ContainerSpec> e : want.entrySet()) {
                ContainerSpec spec = e.getValue();
                if (spec.pullPolicy() != PullPolicy.ALWAYS || held.contains(ModuleSpec.dockerName(module, e.getKey()))
                        || pulled.containsKey(spec.image()) || !policy.refusals(spec).isEmpty()) continue;
                try {
                    ImageInfo i = ensure(spec, ModuleSpec.dockerName(module, e.getKey()));
                    if (i != null) pulled.put(spec.image(), i.id());
                } catch (SessionGuard.SessionLostException ex) {
                    throw ex;
                } catch (RuntimeException ex) {
                    log.warn("module {}: {}", module, describe(ex)); // reported on each container that uses the image
                }
            }
            return pulled;
        }

        /**
         * The first caller for an image and policy looks it up (and pulls it); the others wait for that, outside the
         * map's locks.
         *
         * @param container the Docker name of the container that needs it
         * @return the image as it is after the lookup or pull; {@code null} when not inspected ({@code missing})
         * @throws IllegalStateException naming the image and the fix when it cannot be had by the container's policy
         */
        ImageInfo ensure(ContainerSpec spec, String container) {
            PullPolicy policy = spec.pullPolicy();
            String image = spec.image();
            String key = policy.wire() + " " + image;
            CompletableFuture<ImageInfo> mine = new CompletableFuture<>();
            askedFirst.putIfAbsent(key, container);
            CompletableFuture<ImageInfo> first = seen.putIfAbsent(key, mine);
            if (first == null) {
                try {
                    mine.complete(lookUp(image, policy));
                } catch (RuntimeException | Error e) {
                    mine.completeExceptionally(e); // the others waiting for this image must not wait for ever
                    throw e;
                }
                return mine.join();
            }
            try {
                return first.join();
            } catch (CompletionException e) {
                if (e.getCause() instanceof SessionGuard.SessionLostException r) throw r;
                String firstAsker = askedFirst.get(key);
                // the container that asked first (before the plan, for pull: always) tells the error in full
                if (container.equals(firstAsker) && e.getCause() instanceof RuntimeException r) throw r;
                throw new IllegalStateException("image " + image + " is not available (see " + firstAsker + ")", e.getCause());
            }
        }

        private ImageInfo lookUp(String image, PullPolicy policy) {
            try {
                return lookUpTelling(image, policy);
            } finally {
                progress.done("pull " + image);
            }
        }

        private ImageInfo lookUpTelling(String image, PullPolicy policy) {
            java.util.function.Consumer<io.mesh.docker.PullLayers> layers = l -> progress.doing("pull " + image, ApplyProgress.pulling(image, l));
            switch (policy) {
                case ALWAYS -> {
                    docker.pull(image, layers);
                    return docker.inspectImage(image);
                }
                case NEVER -> {
                    ImageInfo i = docker.inspectImage(image);
                    if (i == null) {
                        throw new IllegalStateException("image " + image + " is not on this host and its pull policy is never: load it"
                                + " on the host (docker load, or docker pull " + image + "), or set pull: missing to let the agent pull it");
                    }
                    return i;
                }
                default -> {
                    docker.ensureImage(image, layers);
                    return null;
                }
            }
        }

        /** @return why the pull of a {@code pull: always} image failed in this apply, or {@code null} when it did not */
        RuntimeException pullFailure(ContainerSpec spec) {
            CompletableFuture<ImageInfo> f = seen.get(PullPolicy.ALWAYS.wire() + " " + spec.image());
            if (spec.pullPolicy() != PullPolicy.ALWAYS || f == null || !f.isCompletedExceptionally()) return null;
            try {
                f.join();
                return null;
            } catch (CompletionException e) {
                return e.getCause() instanceof RuntimeException r ? r : e;
            }
        }

        /**
         * @return the results with {@code imageDigest} set where the image a container runs has a registry digest
         *         (SPEC.md, "Images"); one image inspect per image
         */
        List<ContainerResult> withDigests(List<ContainerResult> results, Map<String, ContainerSpec> want) {
            List<ContainerResult> out = new ArrayList<>(results.size());
            for (ContainerResult r : results) {
                ContainerSpec spec = want.get(r.name());
                if (r.imageId() == null || r.imageDigest() != null || spec == null) {
                    out.add(r);
                    continue;
                }
                ImageInfo i;
                try {
                    i = byId.computeIfAbsent(r.imageId(), id -> {
                        ImageInfo found = docker.inspectImage(id);
                        return found == null ? new ImageInfo(id, List.of()) : found;
                    });
                } catch (SessionGuard.SessionLostException e) {
                    throw e;
                } catch (RuntimeException e) {
                    log.debug("no digest for image {}: {}", r.imageId(), describe(e)); // the report still names its id
                    out.add(r);
                    continue;
                }
                out.add(r.withImageDigest(i.digestFor(ImageReference.parse(spec.image()))));
            }
            return out;
        }
    }

    /**
     * One container's calls; its result's reasons carry what the container printed (log lines, healthcheck output)
     * with its secret values taken out (decision 18).
     */
    private ContainerResult execute(PlannedAction a, ContainerSpec spec, DesiredRecord desired, ObservedContainer before,
                                    Images images) {
        ContainerResult r = executeCalls(a, spec, desired, before, images);
        SecretsDir.Resolved s = secrets.get(a.name());
        if (s == null || r == null) return r;
        return r.withReasons(s.redaction().apply(r.reasons()));
    }

    private ContainerResult executeCalls(PlannedAction a, ContainerSpec spec, DesiredRecord desired, ObservedContainer before,
                                         Images images) {
        String id = a.existingId();
        if (a.action() == PlannedAction.Kind.CREATE || a.action() == PlannedAction.Kind.RECREATE || a.action() == PlannedAction.Kind.REMOVE) {
            String why = stopChanges.get();
            if (why != null) { // a freeze since the apply began: no change begins, the ones under way finish
                stoppedBy = why;
                return result(a, ContainerAction.UNCHANGED, plus(a.reasons(), List.of(), "not applied: " + why), id);
            }
        }
        ContainerResult refused = refuse(a, spec); // before anything is created, stopped or pulled
        if (refused != null) return refused;
        refused = networkMissing(a, spec);
        if (refused != null) return before != null && before.markedForRemoval() ? removedAnyway(refused, before) : refused;
        refused = secretsMissing(a);
        if (refused != null) return refused;
        try {
            switch (a.action()) {
                case HELD, UNCHANGED -> {
                    RuntimeException pull = a.action() == PlannedAction.Kind.UNCHANGED && spec != null ? images.pullFailure(spec) : null;
                    if (pull != null) { // what runs is left running: only its image could not be checked
                        return new ContainerResult(a.name(), a.dockerName(), ContainerAction.FAILED,
                                plus(a.reasons(), List.of(), "pull failed, the container runs on as it was: " + describe(pull)), id,
                                before == null ? null : before.health(), before == null ? null : before.imageId());
                    }
                    return before == null ? result(a, a.action().reported(), a.reasons(), id)
                            : new ContainerResult(a.name(), a.dockerName(), a.action().reported(), List.copyOf(a.reasons()), id,
                            before.health(), before.imageId());
                }
                case CREATE -> {
                    ContainerResult waiting = backingOff(a, id);
                    if (waiting != null) return waiting;
                    images.ensure(spec, a.dockerName());
                    String newId = create(a.dockerName(), a.name(), spec, desired);
                    try {
                        docker.start(newId);
                    } catch (RuntimeException e) {
                        refused(a.name(), e);
                        docker.remove(newId);
                        throw e;
                    }
                    tried.add(a.name());
                    Readiness.Verdict v = awaitReady(a, newId, spec);
                    if (!v.ready()) {
                        notReady.add(a.name());
                        // Kept for docker logs, out of the name's way: the next apply creates it again, after its back-off.
                        return result(a, ContainerAction.FAILED, plus(a.reasons(), v.reasons(), keepFailed(a, newId)), newId, v);
                    }
                    dropFailed(a);
                    List<String> reasons = new ArrayList<>(a.reasons());
                    hook(HookPhase.POST_START, a, newId, spec, reasons);
                    return result(a, ContainerAction.CREATED, reasons, newId, v);
                }
                case RECREATE -> {
                    FailedTries.Entry last = tries == null ? null : tries.containers().get(a.name());
                    if (last != null && last.action() == ContainerAction.REVERTED && before != null && before.running()) {
                        // Trying the same push again would stop the container that runs for as long as the new one
                        // takes to fail again, at every retry (decision 10); remembered on disk, so not after a restart
                        // either (failure model row 82).
                        List<String> reasons = new ArrayList<>(last.reasons());
                        reasons.add("not tried again for this push while the previous container runs: push a change to try again");
                        return result(a, ContainerAction.REVERTED, reasons, id);
                    }
                    ContainerResult waiting = backingOff(a, id);
                    if (waiting != null) return waiting;
                    return recreate(a, spec, desired, before, images);
                }
                case START -> {
                    restartPolicyBack(id, spec); // decision 33
                    docker.start(id);
                    Readiness.Verdict v = awaitReady(a, id, spec);
                    if (v.ready()) {
                        List<String> reasons = new ArrayList<>(a.reasons());
                        hook(HookPhase.POST_START, a, id, spec, reasons);
                        return result(a, ContainerAction.UNCHANGED, reasons, id, v);
                    }
                    // Left as it is: an exited one is recreated by the next apply (the stop is forgotten below).
                    return result(a, ContainerAction.FAILED, plus(a.reasons(), v.reasons(), "started again as it was, and not ready"), id, v);
                }
                case CRASH_LOOP -> {
                    List<String> reasons = new ArrayList<>(a.reasons());
                    String exits = Readiness.lastExits(docker, id); // the list's state has only the code Docker shows now
                    if (exits != null) reasons.add(exits);
                    for (String line : docker.logTail(id, Readiness.LOG_LINES)) reasons.add("log: " + line);
                    return result(a, ContainerAction.FAILED, reasons, id);
                }
                case REMOVE -> {
                    ContainerSpec old = before == null ? null : SpecDiff.parse(before.specJson());
                    List<String> hooked = new ArrayList<>(a.reasons());
                    try {
                        // Its pre-stop as it was created (the desired spec names it no more: decision 38)
                        if (before != null && before.running()) {
                            hooks.run(docker, HookPhase.PRE_STOP, a.dockerName(), id, ContainerHooks.asCreated(docker.labels(id)), false)
                                    .ifPresent(r -> hooked.add("hook " + r.line()));
                        }
                        if (before == null || !before.markedForRemoval()) stop(a, id, old == null ? 10 : old.stopTimeoutSeconds());
                        docker.remove(id);
                    } catch (RuntimeException e) {
                        // Gone meanwhile: a leftover of an interrupted recreate that this apply's recreate of the
                        // same container moved out of its way. Anything else is a failure, but for a dead container
                        // already out of its name's way: nothing of it runs or can, and what is desired runs beside
                        // it, so the module is not failed for Docker's debris (failure model row 129).
                        if (docker.labels(id).isEmpty()) return result(a, ContainerAction.REMOVED, hooked, id);
                        if (e instanceof SessionGuard.SessionLostException || !DockerEngine.answered(e)) throw e;
                        String aside = a.dockerName();
                        if (!ApplyPlanner.deadAside(aside)) {
                            // a leftover Docker left Dead under a temporary name or the spec's: out of the way first
                            if (before == null || !before.markedForRemoval()) throw e;
                            moveAsideDead(ApplyPlanner.baseName(aside), id, e);
                            aside = ApplyPlanner.deadName(ApplyPlanner.baseName(aside), id);
                        }
                        hooked.add("Docker cannot remove it yet (" + describe(e) + "): nothing of it runs; it waits as " + aside
                                + ", the next apply tries again, or `docker rm -f " + aside + "` once what Docker names is fixed");
                        return new ContainerResult(aside, aside, ContainerAction.UNCHANGED, List.copyOf(hooked), id);
                    }
                    return result(a, ContainerAction.REMOVED, hooked, id);
                }
                default -> throw new IllegalStateException("unknown action " + a.action());
            }
        } catch (SessionGuard.SessionLostException e) {
            throw e;
        } catch (RuntimeException e) {
            if (DockerAnswer.theEngines(e)) engineFailed.add(a.name());
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
        // before anything is stopped: an image that cannot be had leaves the old container running
        images.ensure(spec, a.dockerName());
        String nextName = a.dockerName() + NEXT_SUFFIX;
        String prevName = a.dockerName() + PREV_SUFFIX;
        // The name the old one will wait under is freed before anything is stopped: a leftover there that Docker cannot
        // remove (a dockerd restart left it "Removal In Progress", "device or resource busy": CI seed
        // 6271426431236788468, failure model row 70) failed the rename after the stop, at every apply, so what ran was
        // stopped and started again every few seconds. Now the recreate fails first, and the old one runs on; a leftover
        // Docker left Dead is moved out of the way instead (failure model row 129), and the recreate goes on.
        if (observed.stream().anyMatch(o -> o.dockerName().equals(prevName) && !o.id().equals(oldId))) {
            String left = docker.idByName(prevName);
            if (left != null && !left.equals(oldId)) removeLeftover(desired.module(), prevName, left, null);
        }
        String newId = outOfTheWay(desired.module(), nextName, null, () -> create(nextName, a.name(), spec, desired));
        ContainerSpec old = before == null ? null : SpecDiff.parse(before.specJson());
        boolean wasRunning = before != null && before.running();
        String oldPolicy = null;
        List<String> hooked = new ArrayList<>(); // the hooks' lines, for every result below
        try {
            // The desired spec's pre-stop, in the old container, before anything changes it (decision 38).
            if (wasRunning) {
                beforeStop.before(a.dockerName());
                hook(HookPhase.PRE_STOP, a, oldId, spec, hooked);
            }
            oldPolicy = docker.restartPolicy(oldId);
            if (oldPolicy.equals("no")) oldPolicy = null;
            else docker.updateRestartPolicy(oldId, "no");
            stop(a, oldId, old == null ? spec.stopTimeoutSeconds() : old.stopTimeoutSeconds());
            outOfTheWay(desired.module(), prevName, oldId, () -> {
                docker.rename(oldId, prevName);
                return null;
            });
        } catch (RuntimeException e) {
            // A lapsed lock makes no further call but to put back, under the fence alone, what it was in the middle of.
            ContainerRuntime rt = e instanceof SessionGuard.SessionLostException ? fenced : docker;
            try {
                rt.remove(newId);
                if (oldPolicy != null) rt.updateRestartPolicy(oldId, oldPolicy);
                if (wasRunning) rt.start(oldId);
            } catch (RuntimeException e2) {
                if (rt == docker) throw e2;
                log.warn("container {}: the recreate cut by a lapsed lock could not put the previous one back: {}", a.dockerName(), describe(e2));
            }
            throw e;
        }
        Readiness.Verdict v;
        try {
            v = takeNameAndStart(a, newId, spec);
        } catch (SessionGuard.SessionLostException e) {
            log.warn("container {}: {}; putting the previous one back under the host fence", a.dockerName(), e.getMessage());
            putBack(fenced, a, newId, oldId, oldPolicy, wasRunning);
            throw e;
        } catch (RuntimeException e) {
            refused(a.name(), e);
            String restored = putBack(docker, a, newId, oldId, oldPolicy, wasRunning);
            List<String> reasons = new ArrayList<>(a.reasons());
            reasons.addAll(hooked);
            reasons.add("new container did not start: " + describe(e) + restored);
            if (restored.equals(RUNS_AGAIN)) hook(HookPhase.POST_START, a, oldId, spec, reasons);
            return result(a, ContainerAction.FAILED, reasons, oldId);
        }
        tried.add(a.name());
        if (!v.ready()) {
            notReady.add(a.name());
            String kept;
            try {
                kept = keepFailed(a, newId); // frees the name, as the removal did
            } catch (SessionGuard.SessionLostException e) {
                putBack(fenced, a, newId, oldId, oldPolicy, wasRunning);
                throw e;
            }
            String restored = putBack(docker, a, newId, oldId, oldPolicy, wasRunning);
            List<String> reasons = plus(a.reasons(), v.reasons(), kept);
            reasons.addAll(hooked);
            reasons.add(restored.substring(2));
            if (restored.equals(RUNS_AGAIN)) hook(HookPhase.POST_START, a, oldId, spec, reasons);
            return result(a, ContainerAction.REVERTED, reasons, oldId, v);
        }
        dropFailed(a);
        try {
            docker.remove(oldId);
        } catch (SessionGuard.SessionLostException e) {
            // The new one is ready and runs under the name: the recreate is finished under the fence, so that the next
            // apply does not take the aside one for a cut recreate and put it back over a ready container.
            fenced.remove(oldId);
            throw e;
        }
        List<String> reasons = new ArrayList<>(a.reasons());
        reasons.addAll(hooked);
        hook(HookPhase.POST_START, a, newId, spec, reasons);
        return result(a, ContainerAction.RECREATED, reasons, newId, v);
    }

    /** The new container takes the container's name and starts; then its readiness is awaited. */
    private Readiness.Verdict takeNameAndStart(PlannedAction a, String newId, ContainerSpec spec) {
        docker.rename(newId, a.dockerName());
        docker.start(newId);
        return awaitReady(a, newId, spec);
    }

    /**
     * Puts a container's spec's restart policy back before it is started as it is: a hold's {@code --stop} or a window
     * left it {@code no}, and a container started as it is keeps its policy (the plan sees no change), so Docker would
     * never start it again.
     */
    private void restartPolicyBack(String id, ContainerSpec spec) {
        if (!spec.restart().equals(docker.restartPolicy(id))) docker.updateRestartPolicy(id, spec.restart());
    }

    /** A stop, told the push's progress while it waits for the container to exit (decision 32). */
    private void stop(PlannedAction a, String id, int graceSeconds) {
        progress.doing(a.dockerName(), ApplyProgress.stopping(a.dockerName(), graceSeconds));
        try {
            docker.stop(id, graceSeconds);
        } finally {
            progress.done(a.dockerName());
        }
    }

    /** Awaits a started container's readiness, telling the progress each look (decision 32). */
    private Readiness.Verdict awaitReady(PlannedAction a, String id, ContainerSpec spec) {
        try {
            return readiness.await(id, spec.readiness(), () -> false,
                    s -> progress.doing(a.dockerName(), ApplyProgress.waitingFor(a.dockerName(), s, spec.readiness())));
        } finally {
            progress.done(a.dockerName());
        }
    }

    /** What {@link #putBack} says when the previous container was started again. */
    private static final String RUNS_AGAIN = "; the previous container runs again";

    /**
     * Removes the new container and puts the old one back under its name, with its restart policy, running if it ran.
     *
     * @return {@code "; the previous container runs again"} or what went wrong
     */
    private String putBack(ContainerRuntime docker, PlannedAction a, String newId, String oldId, String oldPolicy, boolean wasRunning) {
        boolean interrupted = Thread.interrupted(); // a stop of the agent mid-wait: the old one is put back first
        try {
            if (!kept.contains(newId)) docker.remove(newId);
            docker.rename(oldId, a.dockerName());
            if (oldPolicy != null) docker.updateRestartPolicy(oldId, oldPolicy);
            if (wasRunning) docker.start(oldId);
            return wasRunning ? RUNS_AGAIN : "; the previous container is back as it was";
        } catch (SessionGuard.SessionLostException e) {
            throw e;
        } catch (RuntimeException e2) {
            return "; putting the previous container back failed too: " + describe(e2);
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    /**
     * A start or a create that failed is a try; one Docker answered with an error (a bad entrypoint, a port taken, an
     * option only dockerd checks) is the container's failure, which backs off like one that is not ready. One that was
     * the engine's (dockerd away or shutting down: {@link DockerAnswer#theEngines}) or a lapsed lock says nothing about the
     * container, and does not back off.
     */
    private void refused(String name, RuntimeException e) {
        tried.add(name);
        if (e instanceof SessionGuard.SessionLostException) return;
        if (DockerAnswer.theEngines(e)) engineFailed.add(name);
        else if (DockerEngine.answered(e)) notReady.add(name); // Docker's word on the container: it backs off
    }


    /**
     * The back-off of a push's failed tries (failure model row 81): a container that did not start or become ready
     * for this push and revision is not created or recreated again before the module's next try; a reconcile in
     * between reports its last failure as it stands, saying when the next try is.
     *
     * @return {@code null} when it may be tried now; else its {@code failed} result
     */
    private ContainerResult backingOff(PlannedAction a, String id) {
        FailedTries.Entry e = tries == null ? null : tries.containers().get(a.name());
        if (e == null || !tries.backingOff(java.time.Instant.now())) return null;
        List<String> reasons = new ArrayList<>(e.reasons());
        reasons.add("not tried again before " + tries.nextTry() + " (back-off " + FailedTries.backoff(tries.failures()).toSeconds()
                + "s after " + tries.failures() + " failed " + (tries.failures() == 1 ? "try" : "tries") + " of this push): "
                + "a new push, a thaw or an operator's release tries at once");
        return new ContainerResult(a.name(), a.dockerName(), ContainerAction.FAILED, List.copyOf(reasons), id != null ? id : e.id());
    }

    /** @return names of the containers this apply created or recreated, or tried to */
    java.util.Set<String> tried() { return java.util.Set.copyOf(tried); }

    /** @return names of those that did not start (Docker refused) or did not become ready */
    java.util.Set<String> notReady() { return java.util.Set.copyOf(notReady); }

    /**
     * @param results this execution's results
     * @return true when containers failed and every failure was the engine's (Docker never answered a call: dockerd
     *         away, restarted under it, hung; or it answered shutting down), which says nothing of the revision (failure
     *         model row 110); another answer of Docker's, or a container not ready, is the revision's
     */
    boolean failedOnlyForTheEngine(List<ContainerResult> results) {
        boolean any = false;
        for (ContainerResult r : results) {
            if (!r.action().failed()) continue;
            if (!engineFailed.contains(r.name()) || notReady.contains(r.name())) return false;
            any = true;
        }
        return any;
    }

    /** The containers this apply kept under {@link #FAILED_SUFFIX}: never removed by the same apply's put-back. */
    private final java.util.Set<String> kept = ConcurrentHashMap.newKeySet();

    /**
     * Keeps a container that was not ready, stopped, under {@code <name>.mesh-failed}, so that {@code docker logs} and
     * {@code docker inspect} still show why, and its name is free for the next try: stopped at once (as the removal it
     * replaces killed it; a stop also ends Docker's restarting), its restart policy set to {@code no} (dockerd starts
     * a stopped {@code always} container when it starts), renamed. The one kept by an earlier try is removed first:
     * one per name. When it cannot be kept it is removed, as before.
     *
     * @return the reason that says where it is, or that it was removed
     * @throws SessionGuard.SessionLostException when the lock lapsed: the next apply finds it under the name, not running
     */
    private String keepFailed(PlannedAction a, String id) {
        String keptName = a.dockerName() + FAILED_SUFFIX;
        try {
            docker.stop(id, 0);
            docker.updateRestartPolicy(id, "no");
            String earlier = docker.idByName(keptName);
            if (earlier != null && !earlier.equals(id)) docker.remove(earlier);
            docker.rename(id, keptName);
            kept.add(id);
            return "kept stopped as " + keptName + " (docker logs " + keptName + "); the next try replaces it";
        } catch (SessionGuard.SessionLostException e) {
            throw e;
        } catch (RuntimeException e) {
            docker.remove(id);
            return "removed (it could not be kept for its logs: " + describe(e) + ")";
        }
    }

    /**
     * Removes what an earlier try of the container left under {@code <name>.mesh-failed}, once a try succeeded: its
     * failure is over. Best effort: a kept container left behind is removed by the next try, or when the container
     * leaves the spec.
     */
    private void dropFailed(PlannedAction a) {
        String keptName = a.dockerName() + FAILED_SUFFIX;
        for (ObservedContainer o : observed) {
            if (!o.dockerName().equals(keptName)) continue;
            try {
                docker.remove(o.id());
            } catch (SessionGuard.SessionLostException e) {
                throw e;
            } catch (RuntimeException e) {
                log.info("container {} not removed after its container became ready: {}", keptName, describe(e));
            }
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
     * or can run again, so there is nothing to stop or put back. The old one is removed (forced), or, when Docker cannot
     * remove it, moved out of the name's way ({@link #moveAsideDead}); then the new one is created aside, takes the name
     * and starts. When Docker can neither remove nor rename the old one, nothing is created and the container fails
     * with what to do; an apply never leaves two containers under one module name, nor makes one at each try.
     */
    private ContainerResult replaceMarkedForRemoval(PlannedAction a, ContainerSpec spec, DesiredRecord desired,
                                                    ObservedContainer before, Images images) {
        images.ensure(spec, a.dockerName());
        List<String> reasons = new ArrayList<>(a.reasons());
        try {
            docker.remove(before.id());
        } catch (RuntimeException e) {
            if (e instanceof SessionGuard.SessionLostException) throw e;
            try {
                moveAsideDead(a.dockerName(), before.id(), e);
            } catch (RuntimeException notMoved) {
                if (notMoved instanceof SessionGuard.SessionLostException) throw notMoved;
                reasons.add(unremovable(before, a.dockerName(), e));
                return result(a, ContainerAction.FAILED, reasons, before.id());
            }
            reasons.add("Docker cannot remove the container it marked for removal (" + describe(e) + "): it waits aside as "
                    + ApplyPlanner.deadName(a.dockerName(), before.id()));
        }
        String nextName = a.dockerName() + NEXT_SUFFIX;
        String newId = outOfTheWay(desired.module(), nextName, null, () -> create(nextName, a.name(), spec, desired));
        Readiness.Verdict v;
        try {
            v = takeNameAndStart(a, newId, spec);
        } catch (RuntimeException e) {
            if (e instanceof SessionGuard.SessionLostException) throw e;
            refused(a.name(), e);
            docker.remove(newId); // the name is left free: the next apply creates it
            throw e;
        }
        tried.add(a.name());
        if (!v.ready()) notReady.add(a.name());
        if (!v.ready()) return result(a, ContainerAction.FAILED, plus(reasons, v.reasons(), keepFailed(a, newId)), newId, v);
        dropFailed(a);
        return result(a, ContainerAction.RECREATED, reasons, newId, v);
    }

    /** @return why a container Docker marked for removal is failed when Docker refuses its removal, with what to do */
    private static String unremovable(ObservedContainer before, String dockerName, RuntimeException e) {
        return "Docker marked it for removal (Dead, " + before.state() + ": it cannot start again) but cannot remove it: "
                + describe(e) + "; fix what Docker names, then `docker rm -f " + dockerName + "`, and the next apply creates it";
    }

    /**
     * A container Docker marked for removal whose new one cannot be made now (a network it joins is not ready) is
     * removed all the same: it can never run again, and its removal needs no network. When Docker refuses that removal,
     * the container fails with Docker's answer beside the network's (failure model rows 69, 111), so that the report says
     * what keeps it, not only what keeps its successor; when Docker removes it, the name is free and an apply after the
     * network is ready creates it.
     *
     * @param refused the container's result with the network's problem ({@link #networkMissing})
     * @return {@code refused} with what became of the old container; still {@code failed}
     */
    private ContainerResult removedAnyway(ContainerResult refused, ObservedContainer before) {
        List<String> reasons = new ArrayList<>(refused.reasons());
        reasons.remove(NOT_RECREATED); // nothing of it runs: what became of it is said below
        String id = before.id();
        try {
            docker.remove(before.id());
            reasons.add("not recreated: the container Docker marked for removal is removed, and an apply once the network is ready"
                    + " creates it");
            id = null;
        } catch (SessionGuard.SessionLostException e) {
            throw e;
        } catch (RuntimeException e) {
            reasons.add(unremovable(before, refused.container(), e));
        }
        return new ContainerResult(refused.name(), refused.container(), ContainerAction.FAILED, List.copyOf(reasons), id);
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
            removeLeftover(module, name, left, e);
            return call.get();
        }
    }

    /**
     * Removes the container {@code left} that stands under one of the module's temporary names.
     *
     * @param cause what made the caller look, or {@code null}
     * @throws IllegalStateException when it belongs to another module (failure model row 16: never touched)
     * @throws RuntimeException      Docker's answer when it cannot remove it
     */
    private void removeLeftover(String module, String name, String left, RuntimeException cause) {
        // An unlabelled container under this module's temporary name is nobody's.
        String owner = docker.labels(left).get(Labels.MODULE);
        if (owner != null && !module.equals(owner)) {
            throw new IllegalStateException("the name " + name + " is taken by a container of module " + owner + "; not touching it", cause);
        }
        log.info("removing container {} ({}), left by an interrupted recreate", name, left);
        removeOrMoveAside(ApplyPlanner.baseName(name), left);
    }

    /**
     * Removes a container; one Docker left Dead and cannot remove frees the name by its rename instead
     * ({@link #moveAsideDead}).
     *
     * @param dockerName the Docker name of the container it stands for (without a temporary suffix)
     * @throws RuntimeException Docker's answer to the removal, when the container could be neither removed nor moved
     */
    private void removeOrMoveAside(String dockerName, String id) {
        try {
            docker.remove(id);
        } catch (RuntimeException e) {
            moveAsideDead(dockerName, id, e);
        }
    }

    /**
     * Moves a container Docker marked for removal and cannot remove ("device or resource busy" after a dockerd
     * restart) out of a name's way: Docker renames a Dead container, so the name is free for what must run under it.
     * It waits under {@code <name>.mesh-dead-<id>} ({@link ApplyPlanner#deadName}); each apply tries its removal again.
     * Failure model row 129.
     *
     * @param dockerName the Docker name of the container it stands for (without a temporary suffix)
     * @param id         the container
     * @param cause      Docker's answer to its removal
     * @throws RuntimeException {@code cause}, when Docker did not answer, the container is not marked for removal, or
     *                          its rename fails too (then beside it, suppressed)
     */
    private void moveAsideDead(String dockerName, String id, RuntimeException cause) {
        if (cause instanceof SessionGuard.SessionLostException || !DockerEngine.answered(cause)) throw cause;
        String aside = ApplyPlanner.deadName(dockerName, id);
        try {
            String status = docker.runState(id).status();
            if (status == null || !(status.startsWith("dead") || status.startsWith("removing"))) throw cause;
            docker.rename(id, aside);
        } catch (io.mesh.docker.NoSuchContainerException gone) {
            return; // Docker finished the removal after all: the name is free
        } catch (RuntimeException e) {
            if (e != cause) cause.addSuppressed(e);
            throw cause;
        }
        log.warn("container {} ({}): Docker marked it for removal and cannot remove it ({}); moved out of the name's way as {}",
                dockerName, id, describe(cause), aside);
    }

    /** Creates a container with its labels and its secrets as read at the start of this apply. */
    private String create(String dockerName, String name, ContainerSpec spec, DesiredRecord desired) {
        SecretsDir.Resolved s = secrets.getOrDefault(name, SecretsDir.Resolved.NONE);
        try {
            return docker.create(dockerName, spec, labels(desired, name, spec, s.digests()), s.delivery());
        } catch (com.github.dockerjava.api.exception.ConflictException taken) {
            throw taken; // its name is taken: the caller moves the leftover out of the way and creates again
        } catch (RuntimeException e) {
            // A create Docker refuses (a bad option, an image it cannot find) is a failed try of the container, backed
            // off as one that did not start (failure model row 81): not asked again at every reconcile.
            refused(name, e);
            throw e;
        }
    }

    /**
     * @param digests by secret name, the digest of each secret file as read at the start of this apply
     * @return the labels of a managed container: the spec hash takes the digests in; the {@code mesh.spec} label shows
     *         env values and secrets as digests only (decision 18)
     */
    static Map<String, String> labels(DesiredRecord desired, String name, ContainerSpec spec, Map<String, String> digests) {
        Map<String, String> l = new LinkedHashMap<>();
        l.put(Labels.MODULE, desired.module());
        l.put(Labels.CONTAINER, name);
        l.put(Labels.SPEC_HASH, SpecDiff.hash(spec, digests));
        l.put(Labels.REVISION, desired.revision() == null ? "" : desired.revision());
        l.put(Labels.SPEC, SpecDiff.label(spec, digests));
        if (spec.ready() != null) l.put(Labels.READY, Json.text(spec.ready()));
        if (spec.hooks() != null) l.put(Labels.HOOKS, Json.text(spec.hooks()));
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
        return io.mesh.docker.DockerAnswer.explained(e);
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
     * A create or recreate of a container that joins a network this apply could not make ready is not made: the
     * container fails naming the network and the fix, and what runs keeps running (decision 31).
     *
     * @return {@code null} when every network it joins is ready (or the action is neither); else a {@code failed} result
     */
    private ContainerResult networkMissing(PlannedAction action, ContainerSpec spec) {
        if (spec == null || (action.action() != PlannedAction.Kind.CREATE && action.action() != PlannedAction.Kind.RECREATE)) return null;
        List<String> reasons = new ArrayList<>(action.reasons());
        for (String n : spec.networks().keySet()) {
            String why = networkProblems.problems().get(n);
            if (why != null) reasons.add(why);
        }
        if (reasons.size() == action.reasons().size()) return null;
        reasons.add(action.existingId() == null ? "not created" : NOT_RECREATED);
        return new ContainerResult(action.name(), action.dockerName(), ContainerAction.FAILED, List.copyOf(reasons), action.existingId());
    }

    /**
     * @return the results, each with what happened to the networks its container joins (created, recreated, kept), and
     *         the module's networks removed or kept after the plan on the first result; a container whose network could
     *         not be made as the spec says (another module's container on it, an external one missing) is
     *         {@code failed} though it runs as it did, so that the push does not read applied (decision 31)
     */
    private static List<ContainerResult> withNetworkNotes(List<ContainerResult> results, Map<String, ContainerSpec> want,
                                                          ModuleNetworks.Outcome networks, List<String> pruned) {
        if (networks.notes().isEmpty() && networks.problems().isEmpty() && pruned.isEmpty()) return results;
        List<ContainerResult> out = new ArrayList<>();
        for (ContainerResult r : results) {
            ContainerSpec spec = want.get(r.name());
            List<String> extra = new ArrayList<>();
            List<String> problems = new ArrayList<>();
            if (spec != null) {
                for (String n : spec.networks().keySet()) {
                    if (networks.notes().containsKey(n)) extra.add(networks.notes().get(n));
                    String p = networks.problems().get(n);
                    if (p != null && !r.reasons().contains(p)) problems.add(p);
                }
            }
            if (out.isEmpty()) extra.addAll(pruned);
            if (extra.isEmpty() && problems.isEmpty()) {
                out.add(r);
                continue;
            }
            List<String> reasons = new ArrayList<>(r.reasons());
            reasons.addAll(extra);
            reasons.addAll(problems);
            boolean fails = !problems.isEmpty() && r.action() != ContainerAction.HELD && r.action() != ContainerAction.FAILED
                    && r.action() != ContainerAction.REMOVED;
            out.add(fails ? new ContainerResult(r.name(), r.container(), ContainerAction.FAILED, List.copyOf(reasons), r.id(), r.health(),
                    r.imageId(), r.imageDigest()) : r.withReasons(reasons));
        }
        if (out.isEmpty() && !pruned.isEmpty()) log.info("{}", String.join("; ", pruned));
        return out;
    }

    /**
     * A create or recreate of a container whose secrets cannot all be read is not made: the container fails naming
     * each secret and its file, and what runs keeps running (decision 18).
     *
     * @return {@code null} when its secrets were read (or it has none, or the action is neither); else a {@code failed}
     *         result keeping the existing container's id
     */
    private ContainerResult secretsMissing(PlannedAction action) {
        List<String> problems = secretProblems(secrets, action);
        if (problems.isEmpty()) return null;
        List<String> reasons = new ArrayList<>(problems);
        reasons.add(action.existingId() == null ? "not created" : NOT_RECREATED);
        return new ContainerResult(action.name(), action.dockerName(), ContainerAction.FAILED, List.copyOf(reasons), action.existingId());
    }

    /** @return the secret problems of a planned create or recreate (shared by the apply and a plan); empty otherwise */
    static List<String> secretProblems(Map<String, SecretsDir.Resolved> secrets, PlannedAction action) {
        if (action.action() != PlannedAction.Kind.CREATE && action.action() != PlannedAction.Kind.RECREATE) return List.of();
        SecretsDir.Resolved r = secrets.get(action.name());
        return r == null ? List.of() : r.problems();
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