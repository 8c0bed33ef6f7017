package io.mesh.window;

import io.mesh.apply.Policy;
import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.Labels;
import io.mesh.docker.StepResult;
import io.mesh.lock.ModuleLock;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.ScheduleSpec;
import io.mesh.zk.ApplyReport;
import io.mesh.zk.DesiredRecord;
import io.mesh.zk.Json;
import io.mesh.zk.LockHolder;
import io.mesh.zk.MeshStore;
import io.mesh.zk.ProcessRef;
import io.mesh.zk.SessionGuard;
import io.mesh.zk.Times;
import io.mesh.zk.WindowResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Runs one window of a module's schedule on this host (SPEC.md, "Window"):
 *
 * <ol>
 *   <li>take the module lock (purpose {@code window:<schedule>}); finish first a window of this module whose process
 *       died ({@link WindowRecovery}); refuse when another live process still runs one;</li>
 *   <li>publish the window node and one held node per {@code while-stopped} container ({@link HeldNodes}), confirmed
 *       created, and write the {@link WindowJournal} entry, all before anything is stopped;</li>
 *   <li>for a held container whose restart policy is {@code always}, switch it to {@code unless-stopped} (dockerd
 *       starts a stopped {@code always} container when dockerd itself starts); stop the held containers;</li>
 *   <li>run the step as a one-shot container (labels {@code mesh.window}, {@code mesh.module}, {@code volumes-from}),
 *       killed at the schedule's {@code timeout};</li>
 *   <li>whatever happened: put each restart policy back, start the same containers again, delete the journal entry
 *       and the nodes, record the result in the module's report ({@code lastWindow}) and the log, release the lock.</li>
 * </ol>
 *
 * <p>Before each Docker call the window follows Curator's connection rule ({@link SessionGuard}): while
 * {@code SUSPENDED} it makes no call until {@code RECONNECTED}; after {@code LOST} it takes the module lock again
 * first. Meanwhile the journal keeps every apply on this host off the held containers. A held container that will
 * not start again after retries is still released: its held node goes, and the next apply sees it "not running"
 * and recreates it. A window never leaves its containers held and stopped.
 */
public final class WindowRunner {
    private static final Logger log = LoggerFactory.getLogger(WindowRunner.class);
    private static final DateTimeFormatter ID_TIME = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    /** How long the held and window nodes may take to be confirmed before the window gives up, stopping nothing. */
    static final Duration NODE_CREATE_WAIT = Duration.ofSeconds(15);
    /** How long starting a held container again is retried (dockerd may be restarting). */
    static final Duration START_RETRY = Duration.ofSeconds(90);

    private final MeshStore store;
    private final ContainerRuntime docker;
    private final String host;
    private final ProcessRef process;
    private final WindowJournal journal;
    private final WindowRecovery recovery;
    private final Policy policy;

    /**
     * @param store   ZooKeeper access
     * @param docker  the local container runtime
     * @param host    this host's id
     * @param process this process, for the lock, window and held nodes
     * @param journal the host's window journal ({@code --state-dir}), shared by every mesh process on the host
     */
    public WindowRunner(MeshStore store, ContainerRuntime docker, String host, ProcessRef process, WindowJournal journal) {
        this(store, docker, host, process, journal, Policy.DEFAULT);
    }

    /**
     * @param store   ZooKeeper access
     * @param docker  the local container runtime
     * @param host    this host's id
     * @param process this process, for the lock, window and held nodes
     * @param journal the host's window journal ({@code --state-dir}), shared by every mesh process on the host
     * @param policy  what a step may mount from this host; checked before anything is stopped
     */
    public WindowRunner(MeshStore store, ContainerRuntime docker, String host, ProcessRef process, WindowJournal journal,
                        Policy policy) {
        this.policy = policy;
        this.store = store;
        this.docker = docker;
        this.host = host;
        this.process = process;
        this.journal = journal;
        this.recovery = new WindowRecovery(store, docker, host, process, journal);
    }

    /** @return a new window id, such as {@code w-20261130T033000Z-3f2a} */
    public static String newWindowId() {
        return "w-" + ID_TIME.format(Times.now()) + "-" + String.format("%04x", ThreadLocalRandom.current().nextInt(0x10000));
    }

    /** The module lock, taken again after a lost session (Curator TN14). Used on one thread. */
    private final class Lock {
        private final String module;
        private final String schedule;
        private ModuleLock lock;
        private long lostAtAcquire;

        Lock(String module, String schedule) {
            this.module = module;
            this.schedule = schedule;
        }

        boolean acquire(Duration wait) throws Exception {
            lock = new ModuleLock(store.client(), store.paths(), module, host, process, LockHolder.windowPurpose(schedule));
            boolean ok = lock.acquire(wait);
            lostAtAcquire = store.session().lostCount();
            return ok;
        }

        /** Before a Docker call: wait out SUSPENDED; after LOST, take the lock again. Never gives up. */
        void beforeDockerCall() {
            SessionGuard session = store.session();
            try {
                while (true) {
                    if (!session.connected()) {
                        log.warn("window: ZooKeeper {}; no Docker call until it reconnects", session.state());
                        session.awaitConnected(Duration.ofDays(1), () -> false);
                        continue;
                    }
                    if (session.lostCount() == lostAtAcquire) return;
                    log.warn("window: the ZooKeeper session was lost; taking the module lock of {} again before the next Docker call", module);
                    try {
                        lock.release();
                    } catch (Exception ignored) {
                        // its node went with the session
                    }
                    while (!acquire(Duration.ofSeconds(5))) {
                        log.info("window: waiting to take the module lock of {} again", module);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SessionGuard.SessionLostException("interrupted while waiting for ZooKeeper");
            } catch (Exception e) {
                throw new SessionGuard.SessionLostException("could not take the module lock again: " + describe(e));
            }
        }

        void release() {
            try {
                lock.release();
            } catch (Exception e) {
                log.warn("module lock {} not released cleanly ({}); its node is ephemeral and goes with the session", lock.path(), describe(e));
            }
        }
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
        Lock lock = new Lock(module, schedule);
        try {
            if (!lock.acquire(lockWait)) {
                return finish(module, failed(schedule, windowId, since, List.of(), "the module lock was not free within " + lockWait.toSeconds() + "s"), null);
            }
        } catch (Exception e) {
            return finish(module, failed(schedule, windowId, since, List.of(), "could not take the module lock: " + describe(e)), null);
        }
        try {
            Optional<WindowJournal.Entry> open = WindowRecovery.open(journal, docker, module);
            if (open.isPresent()) {
                if (open.get().ownerAlive()) {
                    return finish(module, failed(schedule, windowId, since, List.of(), "window " + open.get().window() + " of "
                            + module + " is still run by process " + open.get().owner().pid() + "; not opening another"), null);
                }
                recovery.recover(open.get(), lock::beforeDockerCall);
            }
            DesiredRecord desired = store.desired(module);
            if (desired == null) return finish(module, failed(schedule, windowId, since, List.of(), "module " + module + " has no desired state"), null);
            ScheduleSpec s = desired.spec().schedules().get(schedule);
            if (s == null) {
                return finish(module, failed(schedule, windowId, since, List.of(),
                        "module " + module + " has no schedule '" + schedule + "'; it has " + desired.spec().schedules().keySet()), desired);
            }
            if (!policy.refusals(s.step()).isEmpty()) { // before anything is stopped
                return finish(module, failed(schedule, windowId, since, List.of(), "step refused by this agent's policy: "
                        + String.join("; ", policy.refusals(s.step()))), desired);
            }
            return finish(module, hold(desired.spec(), schedule, s, windowId, since, lock), desired);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            return finish(module, failed(schedule, windowId, since, List.of(), describe(e)), null);
        } finally {
            lock.release();
        }
    }

    /** Under the lock: nodes and journal, stop, step, start, journal and nodes gone. */
    private WindowResult hold(ModuleSpec spec, String schedule, ScheduleSpec s, String windowId, Instant since, Lock lock)
            throws InterruptedException {
        String module = spec.module();
        List<WindowJournal.HeldContainer> held = new ArrayList<>();
        List<String[]> nodes = new ArrayList<>();
        for (String name : s.whileStopped()) {
            String dockerName = spec.dockerName(name);
            lock.beforeDockerCall();
            String id = docker.idByName(dockerName);
            if (id == null) {
                log.warn("window host={} module={} schedule={} window={}: {} does not exist; nothing to hold", host, module, schedule, windowId, dockerName);
                continue;
            }
            held.add(new WindowJournal.HeldContainer(dockerName, id, null));
            nodes.add(new String[] {dockerName, id});
        }
        List<String> heldNames = held.stream().map(WindowJournal.HeldContainer::container).toList();
        String stepName = module + "." + schedule + "." + windowId;
        int stopBudget = s.whileStopped().stream().mapToInt(n -> stopTimeout(spec, n)).sum();
        WindowJournal.Entry entry = new WindowJournal.Entry(host, module, schedule, windowId, since,
                since.plus(s.timeoutDuration()).plusSeconds(stopBudget + 30), process, WindowJournal.thisProcessStart(),
                stepName, List.copyOf(held));
        try (HeldNodes published = HeldNodes.publish(store, host, module, schedule, windowId, since, nodes, process, NODE_CREATE_WAIT)) {
            // What to put back is known before anything changes: restart policies are read first.
            for (WindowJournal.HeldContainer h : held) {
                lock.beforeDockerCall();
                if (docker.restartPolicy(h.containerId()).equals("always")) entry = entry.withRestore(h.containerId(), "always");
            }
            journal.write(entry);
            // The step container is created before anything is stopped: Docker itself then shows every mesh process
            // on the host that this window is open, which containers it holds and whose process runs it, even one
            // that does not share this --state-dir.
            Map<String, String> labels = Map.of(Labels.WINDOW, windowId, Labels.MODULE, module, Labels.SCHEDULE, schedule,
                    Labels.JOURNAL, Json.text(entry));
            String volumesFrom = s.step().volumesFrom() == null ? null : ModuleSpec.dockerName(module, s.step().volumesFrom());
            String stepId;
            try {
                lock.beforeDockerCall();
                stepId = docker.createStep(stepName, s.step(), volumesFrom, labels);
            } catch (RuntimeException e) {
                removeSteps(windowId, lock);
                journal.delete(module);
                return failed(schedule, windowId, since, heldNames, "the step container could not be created: " + describe(e) + "; nothing was stopped");
            }
            log.info("window host={} module={} schedule={} window={} opened held={}", host, module, schedule, windowId, heldNames);
            String error = null;
            StepResult step = null;
            try {
                for (WindowJournal.HeldContainer h : entry.held()) {
                    if (h.restorePolicy() != null) {
                        lock.beforeDockerCall();
                        docker.updateRestartPolicy(h.containerId(), "unless-stopped");
                    }
                    lock.beforeDockerCall();
                    docker.stop(h.containerId(), stopTimeout(spec, h.container().substring(module.length() + 1)));
                }
                lock.beforeDockerCall();
                step = docker.runStep(stepId, s.timeoutDuration(), WindowResult.LOG_LINES);
            } catch (RuntimeException e) {
                error = describe(e);
            } finally {
                String startError = startAgain(windowId, entry.held(), lock);
                if (startError != null) error = error == null ? startError : error + "; " + startError;
                removeSteps(windowId, lock);
                journal.delete(module);
            }
            String outcome = error != null ? WindowResult.FAILED
                    : step.timedOut() ? WindowResult.TIMED_OUT
                    : step.exitCode() == 0 ? WindowResult.SUCCEEDED : WindowResult.STEP_FAILED;
            if (error == null && step.timedOut()) error = "step killed at its timeout of " + s.timeout();
            else if (error == null && step.exitCode() != 0) error = "step exited " + step.exitCode();
            return new WindowResult(schedule, windowId, since, Times.now(), outcome, step == null ? null : step.exitCode(),
                    heldNames, step == null ? List.of() : step.logTail(), error);
        } catch (IllegalStateException e) {
            return failed(schedule, windowId, since, heldNames, describe(e) + "; nothing was stopped");
        }
    }

    /** Removes this window's step containers (label {@code mesh.window}), retrying while dockerd comes back. */
    private void removeSteps(String windowId, Lock lock) {
        long end = System.nanoTime() + START_RETRY.toNanos();
        while (true) {
            try {
                lock.beforeDockerCall();
                for (String id : docker.containersWithLabel(Labels.WINDOW, windowId)) docker.remove(id);
                return;
            } catch (SessionGuard.SessionLostException e) {
                throw e;
            } catch (RuntimeException e) {
                if (System.nanoTime() > end) {
                    log.warn("window {}: its step container could not be removed: {}", windowId, describe(e));
                    return;
                }
                try {
                    Thread.sleep(1_000);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private static int stopTimeout(ModuleSpec spec, String name) {
        ContainerSpec cs = spec.containers().get(name);
        return cs == null ? 10 : cs.stopTimeoutSeconds();
    }

    /**
     * Puts restart policies back and starts every held container, retrying for {@link #START_RETRY} (dockerd may be
     * restarting); returns what failed, or null.
     */
    String startAgain(String windowId, List<WindowJournal.HeldContainer> held, Lock lock) {
        return startAgain(docker, windowId, held, lock == null ? () -> { } : lock::beforeDockerCall);
    }

    /** Shared with {@link WindowRecovery}. */
    static String startAgain(ContainerRuntime docker, String windowId, List<WindowJournal.HeldContainer> held, Runnable beforeDockerCall) {
        List<String> errors = new ArrayList<>();
        for (WindowJournal.HeldContainer h : held) {
            RuntimeException last = null;
            long end = System.nanoTime() + START_RETRY.toNanos();
            long pause = 250;
            boolean restored = h.restorePolicy() == null;
            while (true) {
                try {
                    beforeDockerCall.run();
                    if (!restored) {
                        docker.updateRestartPolicy(h.containerId(), h.restorePolicy());
                        restored = true;
                    }
                    docker.start(h.containerId());
                    last = null;
                    break;
                } catch (SessionGuard.SessionLostException e) {
                    throw e;
                } catch (io.mesh.docker.NoSuchContainerException e) {
                    last = e; // removed meanwhile (by hand, or recreated): nothing to start, retrying will not help
                    break;
                } catch (RuntimeException e) {
                    last = e;
                    if (System.nanoTime() > end) break;
                    try {
                        Thread.sleep(pause);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                    pause = Math.min(pause * 2, 5_000);
                }
            }
            if (last != null) {
                errors.add(h.container() + " did not start again (" + describe(last) + "); released, so the next apply recreates it");
                log.error("window {}: {} did not start again: {}", windowId, h.container(), describe(last));
            }
        }
        return errors.isEmpty() ? null : String.join("; ", errors);
    }

    private static WindowResult failed(String schedule, String windowId, Instant since, List<String> held, String error) {
        return new WindowResult(schedule, windowId, since, Times.now(), WindowResult.FAILED, null, held, List.of(), error);
    }

    private WindowResult finish(String module, WindowResult r, DesiredRecord desired) {
        WindowRecovery.record(store, host, module, r, desired);
        return r;
    }

    static String describe(Throwable e) {
        String m = e.getMessage();
        if (m == null || m.isBlank()) return e.getClass().getSimpleName();
        return m.lines().map(String::strip).filter(x -> !x.isEmpty()).findFirst().orElse(m);
    }
}
