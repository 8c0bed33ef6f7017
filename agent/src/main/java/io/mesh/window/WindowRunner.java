package io.mesh.window;

import io.mesh.zk.Times;
import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.Labels;
import io.mesh.docker.StepResult;
import io.mesh.lock.ModuleLock;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.ScheduleSpec;
import io.mesh.zk.ApplyReport;
import io.mesh.zk.DesiredRecord;
import io.mesh.zk.HeldRecord;
import io.mesh.zk.Json;
import io.mesh.zk.LockHolder;
import io.mesh.zk.MeshStore;
import io.mesh.zk.ProcessRef;
import io.mesh.zk.WindowRecord;
import io.mesh.zk.WindowResult;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Runs one window of a module's schedule on this host (SPEC.md, "Window"):
 *
 * <ol>
 *   <li>take the module lock (purpose {@code window:<schedule>});</li>
 *   <li>publish the window node and one held node per {@code while-stopped} container: Curator
 *       {@link PersistentNode}s in {@code EPHEMERAL} mode, confirmed created before anything is stopped;</li>
 *   <li>for a held container whose restart policy is {@code always}, switch it to {@code unless-stopped} (dockerd
 *       starts a stopped {@code always} container when dockerd itself starts); stop the held containers;</li>
 *   <li>run the step as a one-shot container (labels {@code mesh.window}, {@code mesh.module}, {@code volumes-from}),
 *       killed at the schedule's {@code timeout};</li>
 *   <li>whatever happened: put each restart policy back, start the same containers again, delete the nodes,
 *       record the result in the module's report ({@code lastWindow}) and the log, release the lock.</li>
 * </ol>
 *
 * A held container that will not start again after retries is still released: its held node goes, and the next
 * apply sees it "not running" and recreates it. A window never leaves its containers held and stopped.
 */
public final class WindowRunner {
    private static final Logger log = LoggerFactory.getLogger(WindowRunner.class);
    private static final DateTimeFormatter ID_TIME = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    /** How long the held and window nodes may take to be confirmed before the window gives up, stopping nothing. */
    static final Duration NODE_CREATE_WAIT = Duration.ofSeconds(15);
    private static final int START_ATTEMPTS = 5;

    private final MeshStore store;
    private final ContainerRuntime docker;
    private final String host;
    private final ProcessRef process;

    /**
     * @param store   ZooKeeper access
     * @param docker  the local engine
     * @param host    this host's id
     * @param process this process, for the lock, window and held nodes
     */
    public WindowRunner(MeshStore store, ContainerRuntime docker, String host, ProcessRef process) {
        this.store = store;
        this.docker = docker;
        this.host = host;
        this.process = process;
    }

    /** @return a new window id, such as {@code w-20261130T033000Z-3f2a} */
    public static String newWindowId() {
        return "w-" + ID_TIME.format(Times.now()) + "-" + String.format("%04x", ThreadLocalRandom.current().nextInt(0x10000));
    }

    /**
     * Runs one window now.
     *
     * @param module   module name
     * @param schedule schedule name
     * @param lockWait how long to wait for the module lock (an apply in progress)
     * @return the window's result; {@link WindowResult#succeeded()} when the step exited 0
     * @throws InterruptedException when interrupted while waiting for the lock (nothing was stopped then)
     */
    public WindowResult run(String module, String schedule, Duration lockWait) throws InterruptedException {
        String windowId = newWindowId();
        Instant since = Times.now();
        ModuleLock lock = new ModuleLock(store.client(), store.paths(), module, host, process, LockHolder.windowPurpose(schedule));
        try {
            if (!lock.acquire(lockWait)) {
                return finish(module, failed(schedule, windowId, since, List.of(), "the module lock was not free within " + lockWait.toSeconds() + "s"), null);
            }
        } catch (Exception e) {
            return finish(module, failed(schedule, windowId, since, List.of(), "could not take the module lock: " + describe(e)), null);
        }
        try {
            DesiredRecord desired = store.desired(module);
            if (desired == null) return finish(module, failed(schedule, windowId, since, List.of(), "module " + module + " has no desired state"), null);
            ScheduleSpec s = desired.spec().schedules().get(schedule);
            if (s == null) {
                return finish(module, failed(schedule, windowId, since, List.of(),
                        "module " + module + " has no schedule '" + schedule + "'; it has " + desired.spec().schedules().keySet()), desired);
            }
            return finish(module, hold(desired.spec(), schedule, s, windowId, since), desired);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            return finish(module, failed(schedule, windowId, since, List.of(), describe(e)), null);
        } finally {
            try {
                lock.release();
            } catch (Exception e) {
                log.warn("module lock {} not released cleanly ({}); its node is ephemeral and goes with the session", lock.path(), describe(e));
            }
        }
    }

    /** One container held by this window. */
    private static final class Held {
        final String name;
        final String dockerName;
        final String id;
        final int stopTimeout;
        String restorePolicy;

        Held(String name, String dockerName, String id, int stopTimeout) {
            this.name = name;
            this.dockerName = dockerName;
            this.id = id;
            this.stopTimeout = stopTimeout;
        }
    }

    /** Under the lock: nodes, stop, step, start, nodes gone. */
    private WindowResult hold(ModuleSpec spec, String schedule, ScheduleSpec s, String windowId, Instant since) throws InterruptedException {
        String module = spec.module();
        List<Held> held = new ArrayList<>();
        for (String name : s.whileStopped()) {
            String dockerName = spec.dockerName(name);
            String id = docker.idByName(dockerName);
            if (id == null) {
                log.warn("window host={} module={} schedule={} window={}: {} does not exist; nothing to hold", host, module, schedule, windowId, dockerName);
                continue;
            }
            ContainerSpec cs = spec.containers().get(name);
            held.add(new Held(name, dockerName, id, cs == null ? 10 : cs.stopTimeoutSeconds()));
        }
        List<String> heldNames = held.stream().map(h -> h.dockerName).toList();
        Map<String, PersistentNode> nodes = new LinkedHashMap<>();
        try {
            WindowRecord wr = new WindowRecord(host, module, schedule, windowId, since, heldNames, process);
            nodes.put(store.paths().window(host, module), new PersistentNode(store.client(), CreateMode.EPHEMERAL, false,
                    store.paths().window(host, module), Json.bytes(wr)));
            for (Held h : held) {
                HeldRecord hr = new HeldRecord(host, module, h.dockerName, h.id, schedule, windowId, since, process);
                nodes.put(store.paths().held(host, h.dockerName), new PersistentNode(store.client(), CreateMode.EPHEMERAL, false,
                        store.paths().held(host, h.dockerName), Json.bytes(hr)));
            }
            nodes.values().forEach(PersistentNode::start);
            for (Map.Entry<String, PersistentNode> n : nodes.entrySet()) {
                if (!n.getValue().waitForInitialCreate(NODE_CREATE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                    return failed(schedule, windowId, since, heldNames, "could not create " + n.getKey() + " within "
                            + NODE_CREATE_WAIT.toSeconds() + "s; nothing was stopped");
                }
            }
            log.info("window host={} module={} schedule={} window={} opened held={}", host, module, schedule, windowId, heldNames);
            return stopStepStart(module, schedule, s, windowId, since, held, heldNames);
        } finally {
            for (PersistentNode n : nodes.values()) {
                try {
                    n.close();
                } catch (IOException | RuntimeException e) {
                    log.warn("window {}: a node was not deleted cleanly ({}); it is ephemeral and goes with the session", windowId, describe(e));
                }
            }
        }
    }

    private WindowResult stopStepStart(String module, String schedule, ScheduleSpec s, String windowId, Instant since,
                                       List<Held> held, List<String> heldNames) {
        String error = null;
        StepResult step = null;
        try {
            for (Held h : held) {
                String policy = docker.restartPolicy(h.id);
                if (policy.equals("always")) {
                    docker.updateRestartPolicy(h.id, "unless-stopped");
                    h.restorePolicy = policy;
                }
                docker.stop(h.id, h.stopTimeout);
            }
            Map<String, String> labels = Map.of(Labels.WINDOW, windowId, Labels.MODULE, module, Labels.SCHEDULE, schedule);
            String volumesFrom = s.step().volumesFrom() == null ? null : ModuleSpec.dockerName(module, s.step().volumesFrom());
            step = docker.runStep(module + "." + schedule + "." + windowId, s.step(), volumesFrom, labels,
                    s.timeoutDuration(), WindowResult.LOG_LINES);
        } catch (RuntimeException e) {
            error = describe(e);
        } finally {
            String startError = startAgain(windowId, held);
            if (startError != null) error = error == null ? startError : error + "; " + startError;
        }
        String outcome = error != null ? WindowResult.FAILED
                : step.timedOut() ? WindowResult.TIMED_OUT
                : step.exitCode() == 0 ? WindowResult.SUCCEEDED : WindowResult.STEP_FAILED;
        if (error == null && step.timedOut()) error = "step killed at its timeout of " + s.timeout();
        else if (error == null && step.exitCode() != 0) error = "step exited " + step.exitCode();
        return new WindowResult(schedule, windowId, since, Times.now(), outcome, step == null ? null : step.exitCode(),
                heldNames, step == null ? List.of() : step.logTail(), error);
    }

    /** Puts restart policies back and starts every held container; returns what failed, or null. */
    private String startAgain(String windowId, List<Held> held) {
        List<String> errors = new ArrayList<>();
        for (Held h : held) {
            RuntimeException last = null;
            for (int attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
                try {
                    if (h.restorePolicy != null) {
                        docker.updateRestartPolicy(h.id, h.restorePolicy);
                        h.restorePolicy = null;
                    }
                    docker.start(h.id);
                    last = null;
                    break;
                } catch (RuntimeException e) {
                    last = e;
                    try {
                        Thread.sleep(500L * attempt);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                    }
                }
            }
            if (last != null) {
                errors.add(h.dockerName + " did not start again (" + describe(last) + "); released, so the next apply recreates it");
                log.error("window {}: {} did not start again after {} attempts: {}", windowId, h.dockerName, START_ATTEMPTS, describe(last));
            }
        }
        return errors.isEmpty() ? null : String.join("; ", errors);
    }

    private static WindowResult failed(String schedule, String windowId, Instant since, List<String> held, String error) {
        return new WindowResult(schedule, windowId, since, Times.now(), WindowResult.FAILED, null, held, List.of(), error);
    }

    private WindowResult finish(String module, WindowResult r, DesiredRecord desired) {
        if (r.succeeded()) {
            log.info("window host={} module={} schedule={} window={} outcome={} exit={} held={}", host, module, r.schedule(),
                    r.window(), r.outcome(), r.exitCode(), r.held());
        } else {
            log.warn("window host={} module={} schedule={} window={} outcome={} exit={} held={} error=\"{}\" log={}", host, module,
                    r.schedule(), r.window(), r.outcome(), r.exitCode(), r.held(), r.error(), r.logTail());
        }
        try {
            ApplyReport empty = new ApplyReport(host, module, desired == null ? null : desired.revision(),
                    desired == null ? null : desired.push(), null, null, null, null, List.of(), null, null);
            store.writeWindowResult(host, module, r, empty);
        } catch (Exception e) {
            log.warn("window {}: result not written to the report: {}", r.window(), describe(e));
        }
        return r;
    }

    static String describe(Throwable e) {
        String m = e.getMessage();
        if (m == null || m.isBlank()) return e.getClass().getSimpleName();
        return m.lines().map(String::strip).filter(x -> !x.isEmpty()).findFirst().orElse(m);
    }
}
