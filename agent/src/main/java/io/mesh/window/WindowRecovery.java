package io.mesh.window;

import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.Labels;
import io.mesh.zk.ApplyReport;
import io.mesh.zk.DesiredRecord;
import io.mesh.zk.MeshStore;
import io.mesh.zk.ProcessRef;
import io.mesh.zk.Times;
import io.mesh.zk.WindowResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.nio.charset.StandardCharsets;
import io.mesh.zk.Json;

/**
 * Finishes a window whose process died mid-window (kill -9, a crash, a host reboot), from its
 * {@link WindowJournal} entry. Called, holding the module lock, by whichever mesh process takes that lock next on
 * the host: the agent daemon's first apply after it starts, any later apply, or the next window.
 *
 * <p>The rule (docs/failure-model.md):
 * <ol>
 *   <li>publish the held and window nodes again, as this process, so every process still sees the containers held;</li>
 *   <li>a step container of the window (label {@code mesh.window}) that still runs is let run until the window's
 *       deadline (its {@code timeout} from when the window opened), then killed, and removed;</li>
 *   <li>restart policies changed by the window are put back, and the same held containers started again;</li>
 *   <li>the journal entry and the nodes are deleted, and the module's report gets the window as {@code lastWindow}
 *       with outcome {@code recovered}.</li>
 * </ol>
 */
public final class WindowRecovery {
    private static final Logger log = LoggerFactory.getLogger(WindowRecovery.class);

    private final MeshStore store;
    private final ContainerRuntime docker;
    private final String host;
    private final ProcessRef process;
    private final WindowJournal journal;

    /**
     * @param store   ZooKeeper access
     * @param docker  the local container runtime
     * @param host    this host's id
     * @param process this process
     * @param journal the host's window journal
     */
    public WindowRecovery(MeshStore store, ContainerRuntime docker, String host, ProcessRef process, WindowJournal journal) {
        this.store = store;
        this.docker = docker;
        this.host = host;
        this.process = process;
        this.journal = journal;
    }

    /**
     * The open window of a module on this host, as the host itself records it: the journal entry under
     * {@code --state-dir}, else the entry a step container of the module carries in its {@code mesh.journal} label.
     * The label is what lets a process that does not share the window's {@code --state-dir} see it: a window creates
     * its step container before it stops anything.
     *
     * @param journal this process's journal
     * @param docker  the local container runtime
     * @param module  module name
     * @return the entry, if a window of the module is open or died open
     */
    public static Optional<WindowJournal.Entry> open(WindowJournal journal, ContainerRuntime docker, String module) {
        Optional<WindowJournal.Entry> j = journal.read(module);
        if (j.isPresent()) return j;
        for (Map<String, String> labels : docker.stepLabels(module)) {
            String json = labels.get(Labels.JOURNAL);
            if (json == null) continue;
            try {
                return Optional.of(Json.read(json.getBytes(StandardCharsets.UTF_8), WindowJournal.Entry.class));
            } catch (RuntimeException e) {
                log.warn("step container of {} carries an unreadable {} label: {}", module, Labels.JOURNAL, e.getMessage());
            }
        }
        return Optional.empty();
    }

    /**
     * Finishes a dead process's window. The caller holds the module lock.
     *
     * @param e                the journal entry; its owner must be dead
     * @param beforeDockerCall run before each Docker call (the caller's connection rule)
     * @return the result recorded
     * @throws InterruptedException when interrupted while waiting for the nodes
     */
    public WindowResult recover(WindowJournal.Entry e, Runnable beforeDockerCall) throws InterruptedException {
        log.warn("window host={} module={} schedule={} window={}: its process {} ({}) died mid-window; finishing it",
                host, e.module(), e.schedule(), e.window(), e.owner() == null ? "?" : e.owner().pid(),
                e.owner() == null ? "?" : e.owner().process());
        List<String[]> nodes = e.held().stream().map(h -> new String[] {h.container(), h.containerId()}).toList();
        List<String> heldNames = e.held().stream().map(WindowJournal.HeldContainer::container).toList();
        Integer exit = null;
        List<String> logTail = List.of();
        List<String> notes = new ArrayList<>();
        notes.add("the window's process " + (e.owner() == null ? "?" : e.owner().pid()) + " died mid-window; finished by "
                + process.process() + " (pid " + process.pid() + ")");
        try (HeldNodes published = HeldNodes.publish(store, host, e.module(), e.schedule(), e.window(), e.since(), nodes,
                process, WindowRunner.NODE_CREATE_WAIT)) {
            beforeDockerCall.run();
            for (String step : docker.containersWithLabel(Labels.WINDOW, e.window())) {
                beforeDockerCall.run();
                if (docker.isRunning(step)) {
                    Duration left = Duration.between(Times.now(), e.deadline());
                    log.info("window {}: its step still runs; letting it run until {} ({}s)", e.window(), e.deadline(), Math.max(0, left.toSeconds()));
                    exit = docker.awaitExit(step, left);
                    if (exit == null) {
                        beforeDockerCall.run();
                        docker.kill(step);
                        exit = docker.awaitExit(step, Duration.ofSeconds(30));
                        notes.add("step killed at the window's deadline " + e.deadline());
                    } else {
                        notes.add("step ran to its end, exit " + exit);
                    }
                } else {
                    exit = docker.awaitExit(step, Duration.ZERO);
                    notes.add("step had ended, exit " + exit);
                }
                logTail = docker.logTail(step, WindowResult.LOG_LINES);
                beforeDockerCall.run();
                docker.remove(step);
            }
            String startError = WindowRunner.startAgain(docker, e.window(), e.held(), beforeDockerCall);
            if (startError != null) notes.add(startError);
            journal.delete(e.module());
        }
        WindowResult r = new WindowResult(e.schedule(), e.window(), e.since(), Times.now(), WindowResult.RECOVERED, exit,
                heldNames, logTail, String.join("; ", notes));
        record(store, host, e.module(), r, null);
        return r;
    }

    /**
     * Logs a window's result and sets it as the module's report's {@code lastWindow}.
     *
     * @param store   ZooKeeper access
     * @param host    host id
     * @param module  module name
     * @param r       the result
     * @param desired the desired state the window ran under, or {@code null}
     */
    static void record(MeshStore store, String host, String module, WindowResult r, DesiredRecord desired) {
        String push = desired == null ? "-" : desired.push();
        if (r.succeeded()) {
            log.info("window host={} module={} push={} schedule={} window={} outcome={} exit={} held={}", host, module, push,
                    r.schedule(), r.window(), r.outcome(), r.exitCode(), r.held());
        } else {
            log.warn("window host={} module={} push={} schedule={} window={} outcome={} exit={} held={} error=\"{}\" log={}", host, module,
                    push, r.schedule(), r.window(), r.outcome(), r.exitCode(), r.held(), r.error(), r.logTail());
        }
        try {
            ApplyReport empty = new ApplyReport(host, module, desired == null ? null : desired.revision(),
                    desired == null ? null : desired.push(), null, null, null, null, List.of(), null, null);
            store.writeWindowResult(host, module, r, empty);
        } catch (Exception e) {
            log.warn("window {}: result not written to the report: {}", r.window(), WindowRunner.describe(e));
        }
    }

}
