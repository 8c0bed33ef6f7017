package io.mesh.window;

import io.mesh.curator.ZkClock;
import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.DockerAnswer;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.docker.NoSuchContainerException;
import io.mesh.docker.Readiness;
import io.mesh.docker.StaleTaskException;
import io.mesh.hooks.HookRun;
import io.mesh.manifest.ContainerSpec;
import io.mesh.secrets.Redaction;
import io.mesh.secrets.SecretsDir;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.Times;
import io.mesh.wire.WindowResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Closes the opened stages of one window, in reverse ({@link WindowStage}), for the window's own process and for
 * {@link WindowRecovery} alike: the one home of a window's tail. It runs inside the module's critical section with
 * the fence held and a runtime that needs only the fence ({@code ModuleSection.fenced}): it never waits for
 * ZooKeeper, so a ZooKeeper outage cannot keep containers stopped. Each stage closed is removed from the journal, and
 * the journal entry is deleted once every stage is closed.
 *
 * <p>An operator's hold outranks a window (SPEC.md "Operator holds"): a held container that an operator holds is not
 * started again; its restart policy is put back (left {@code no} when the hold stops it) and the closing says
 * {@code kept stopped: held by operator}. Who holds what is asked of a lookup that never waits for ZooKeeper.
 *
 * <p>While its process stops (SIGTERM: docs/decisions/0026-agent-stop.md) a closing does not let a step run on to the
 * window's deadline: it kills it at once; and it waits for the containers it started again to be ready at most
 * {@link #STOPPING_READY_WAIT} from when it learns of the stop. Everything else is as always: the same containers are
 * started again, and a start is retried while dockerd comes back.
 */
final class WindowClosing {
    private static final Logger log = LoggerFactory.getLogger(WindowClosing.class);
    /** How long starting a held container again, or removing the step, is retried (dockerd may be restarting). */
    static final Duration START_RETRY = Duration.ofSeconds(90);
    /** Stop timeout of the stop that lets a stop under way end before a held container is started again. */
    private static final int SETTLE_STOP_SECONDS = 10;
    /** How long a killed step may take to be seen dead before the kill is sent again. */
    private static final Duration KILL_WAIT = Duration.ofSeconds(30);
    /** How often a step that cannot be seen dead yet is reported while the window waits for it. */
    private static final Duration SAY_EVERY = Duration.ofSeconds(30);
    /**
     * The longest a closing waits for its containers' readiness once its process stops: long enough to see a healthy
     * container stay up for the default {@code min-healthy} (2 s), short beside the stop budget (decision 26).
     */
    static final Duration STOPPING_READY_WAIT = Duration.ofSeconds(10);
    /** How long one wait for a step let run to the deadline lasts before the closing looks whether its process stops. */
    private static final Duration STEP_WAIT_SLICE = Duration.ofSeconds(2);

    private final ContainerRuntime docker;
    private final WindowJournal journal;
    private final Function<String, HeldRecord> operatorHolds;
    private final BooleanSupplier stopping;
    /** When this closing first saw its process stopping ({@link System#nanoTime()}), or -1. */
    private long stoppingSince = -1;
    private final SecretsDir secrets;
    private WindowJournal.Entry entry;
    private final List<String> errors = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private final List<String> kept = new ArrayList<>();
    private Integer exitCode;
    private List<String> logTail = List.of();
    private boolean stepKilled;
    private boolean stepCutShort;
    private final List<String> unawaited = new ArrayList<>();
    private boolean interrupted;
    /** Runs a container's {@code post-start} once it runs again, or {@code null} (a recovery: decision 38). */
    private PostStart postStart;
    /** One line per hook run, for the window's result. */
    private final List<String> hookLines = new ArrayList<>();

    /**
     * A container's {@code post-start} (docs/decisions/0038-container-hooks.md), run by the closing once a container it
     * started again is ready, through the closing's fenced runtime.
     */
    @FunctionalInterface
    interface PostStart {
        /**
         * @param docker    the closing's runtime (fenced)
         * @param container the container's Docker name
         * @param id        its id
         * @param stopping  true when this process stops (the hook is cut to a few seconds)
         * @return how the hook ended; empty when the container has none
         */
        Optional<HookRun> run(ContainerRuntime docker, String container, String id, boolean stopping);
    }

    /**
     * @param hook the post-start of each container given back, run once it is ready (or its wait ended)
     * @return this
     */
    WindowClosing withPostStart(PostStart hook) {
        this.postStart = hook;
        return this;
    }

    /**
     * @param docker  the fenced runtime
     * @param journal the host's journal
     * @param entry   the window's journal entry, with the stages it opened
     * @param operatorHolds the operator's hold on a container by Docker name, or {@code null}; answered from memory
     */
    WindowClosing(ContainerRuntime docker, WindowJournal journal, WindowJournal.Entry entry, Function<String, HeldRecord> operatorHolds) {
        this(docker, journal, entry, operatorHolds, () -> false, null);
    }

    /**
     * A closing without a secrets dir (tests of the give-back whose containers have no secrets).
     *
     * @param docker        the fenced runtime
     * @param journal       the host's journal
     * @param entry         the window's journal entry, with the stages it opened
     * @param operatorHolds the operator's hold on a container by Docker name, or {@code null}; answered from memory
     * @param stopping      true once this process is told to stop (SIGTERM): a step still running is killed at once,
     *                      and readiness is awaited at most {@link #STOPPING_READY_WAIT} more
     */
    WindowClosing(ContainerRuntime docker, WindowJournal journal, WindowJournal.Entry entry, Function<String, HeldRecord> operatorHolds,
                  BooleanSupplier stopping) {
        this(docker, journal, entry, operatorHolds, stopping, null);
    }

    /**
     * @param docker        the fenced runtime
     * @param journal       the host's journal
     * @param entry         the window's journal entry, with the stages it opened
     * @param operatorHolds the operator's hold on a container by Docker name, or {@code null}; answered from memory
     * @param stopping      true once this process is told to stop (SIGTERM): a step still running is killed at once,
     *                      and readiness is awaited at most {@link #STOPPING_READY_WAIT} more
     * @param secrets       the host's secrets dir: what a held container prints when it is not ready again loses the
     *                      values of the secrets it was created with ({@link #awaitReady}); {@code null} for none
     */
    WindowClosing(ContainerRuntime docker, WindowJournal journal, WindowJournal.Entry entry, Function<String, HeldRecord> operatorHolds,
                  BooleanSupplier stopping, SecretsDir secrets) {
        this.docker = docker;
        this.journal = journal;
        this.entry = entry;
        this.operatorHolds = operatorHolds;
        this.stopping = stopping;
        this.secrets = secrets;
    }

    /**
     * Closes every opened stage in reverse, then deletes the journal entry. A close that fails does not keep the closes
     * after it from running (as Nomad's post-run hooks, each of which runs whatever the one before did; failure model
     * row 113): its failure is said in {@link #error()}, its stage stays in the journal and the entry is kept, so that
     * the next holder of the module's section closes it again ({@link WindowRecovery}).
     *
     * @return this, for the result's facts
     */
    WindowClosing closeAll() {
        interrupted = Thread.interrupted(); // Docker calls below must not fail on a pending interrupt
        List<WindowStage> opened = new ArrayList<>(entry.openedStages());
        boolean allClosed = true;
        for (int i = opened.size() - 1; i >= 0; i--) {
            WindowStage stage = opened.get(i);
            try {
                switch (stage) {
                    case STEP_STARTED -> stepKnownDead();
                    case HELD -> giveBack();
                    case STEP_CREATED -> removeSteps();
                    case SILENCED -> notes.addAll(WindowSilences.expire(entry.silences(), "window " + entry.window()));
                }
            } catch (RuntimeException e) {
                // Not closed: the journal keeps it for the next holder. Each close waits for Docker itself (a step known
                // dead before HELD closes, failure model row 21), so what follows never acts beside what this left.
                allClosed = false;
                errors.add("its stage " + stage + " did not close (" + describe(e) + "); the journal keeps it for the next apply or window");
                log.error("window {}: its stage {} did not close; the journal keeps it for the next apply or window: {}", entry.window(),
                        stage, describe(e));
                continue;
            }
            entry = entry.closed(stage);
            if (i > 0 || !allClosed) writeQuietly("after a stage closed");
        }
        if (allClosed) {
            try {
                journal.delete(entry.module());
            } catch (RuntimeException e) {
                // Every stage is closed: a journal left behind makes the next holder close them again, harmlessly.
                log.warn("window {}: journal entry not deleted: {}", entry.window(), describe(e));
            }
        }
        if (interrupted || Thread.interrupted()) Thread.currentThread().interrupt();
        return this;
    }

    /** @return one line per hook the closing ran ({@link HookRun#line()}) */
    List<String> hooks() { return hookLines; }

    /** @return what failed while closing, or {@code null} */
    String error() { return errors.isEmpty() ? null : String.join("; ", errors); }

    /** @return what closing saw (the step's end), for a recovery's result */
    List<String> notes() { return notes; }

    /** @return what was kept stopped for an operator's hold, one line each ({@code kept stopped: held by operator}) */
    List<String> kept() { return kept; }

    /** @return the step's exit code when closing saw it, or {@code null} */
    Integer exitCode() { return exitCode; }

    /** @return the step's last log lines when closing read them */
    List<String> logTail() { return logTail; }

    /** @return true when closing had to kill the step */
    boolean stepKilled() { return stepKilled; }

    /** @return true when closing killed a running step because its process stops, before the window's deadline */
    boolean stepCutShort() { return stepCutShort; }

    /**
     * @return the containers started again whose readiness was not awaited to its end because the process stops, one
     *         line each
     */
    List<String> unawaited() { return unawaited; }

    /** @return true when this process stops; notes the moment it first says so */
    private boolean stopping() {
        if (!stopping.getAsBoolean()) return false;
        if (stoppingSince < 0) stoppingSince = System.nanoTime();
        return true;
    }

    private void writeQuietly(String when) {
        try {
            journal.write(entry);
        } catch (RuntimeException e) {
            log.warn("window {}: journal not updated {}: {}", entry.window(), when, describe(e));
        }
    }

    /**
     * The step is let run until the window's deadline, then killed, and is known dead only when an inspect shows it
     * stopped (failure model row 21). While Docker cannot say, the window waits, saying so: starting the held containers
     * beside a live step is the seed's bug.
     */
    private void stepKnownDead() {
        long nextSay = 0;
        while (true) {
            try {
                List<String> steps = docker.containersWithLabel(Labels.WINDOW, entry.window());
                boolean allDead = true;
                for (String step : steps) {
                    if (!docker.isRunning(step)) {
                        if (exitCode == null) exitCode = docker.awaitExit(step, Duration.ZERO);
                        continue;
                    }
                    Duration left = Duration.between(Times.now(), entry.deadline());
                    if (!left.isNegative() && !left.isZero() && !stopping()) {
                        log.info("window {}: its step still runs; letting it run until the window's deadline {} ({}s)",
                                entry.window(), entry.deadline(), left.toSeconds());
                        Integer exit = null;
                        boolean gone = false;
                        // In slices, so that a stop of this process (SIGTERM) is not kept waiting for the deadline.
                        while (exit == null && !left.isNegative() && !left.isZero() && !stopping()) {
                            exit = docker.awaitExit(step, left.compareTo(STEP_WAIT_SLICE) < 0 ? left : STEP_WAIT_SLICE);
                            if (exit == null && !docker.isRunning(step)) {
                                gone = true; // ended or removed between two looks: the next look reads which
                                break;
                            }
                            left = Duration.between(Times.now(), entry.deadline());
                        }
                        if (exit != null) {
                            exitCode = exit;
                            notes.add("step ran to its end, exit " + exitCode);
                            continue;
                        }
                        if (gone) {
                            allDead = false;
                            continue;
                        }
                    }
                    boolean cut = stopping() && Times.now().isBefore(entry.deadline());
                    if (cut) log.warn("window {}: its step still runs and this process stops: killing it now", entry.window());
                    docker.kill(step);
                    stepKilled = true;
                    exitCode = docker.awaitExit(step, KILL_WAIT);
                    if (docker.isRunning(step)) allDead = false;
                    else if (cut) {
                        stepCutShort = true;
                        notes.add("step cut short: the agent is stopping");
                    } else notes.add("step killed at the window's deadline " + entry.deadline());
                }
                if (allDead) {
                    for (String step : steps) {
                        if (logTail.isEmpty()) logTail = docker.logTail(step, WindowResult.LOG_LINES);
                    }
                    return;
                }
            } catch (NoSuchContainerException e) {
                continue; // removed meanwhile: look again
            } catch (RuntimeException e) {
                if (System.nanoTime() >= nextSay) {
                    log.warn("window {}: cannot tell yet that its step is dead ({}); its held containers {} start once it is",
                            entry.window(), describe(e), names());
                    nextSay = System.nanoTime() + SAY_EVERY.toNanos();
                }
            }
            pause(1_000);
        }
    }

    /**
     * Puts each restart policy back (checked) and starts each held container again, retrying while dockerd comes back
     * (one Docker refuses for good, {@link StaleTaskException}, is released at once for the next apply to make anew);
     * then waits until each is ready again ({@link #awaitReady}), so that the window's held nodes (released after the
     * closing) outlast the give-back.
     */
    private void giveBack() {
        List<WindowJournal.HeldContainer> started = new ArrayList<>();
        for (WindowJournal.HeldContainer h : entry.held()) {
            HeldRecord operator = operatorHold(h.container());
            RuntimeException last = null;
            long end = System.nanoTime() + START_RETRY.toNanos();
            long pause = 250;
            // Kept stopped for an operator: its policy back unless the hold itself stops it (--stop leaves it no).
            boolean restored = h.restorePolicy() == null || (operator != null && operator.hold().stops());
            // Settled unless the entry says a stop was sent. One that cannot tell (a step container's label) is not
            // stopped again: that could stop a container the window never stopped, by a process without the lock.
            // One kept stopped for an operator needs no settling: a stop dockerd still carries out is what it wants.
            boolean settled = !h.stopKnownSent() || operator != null;
            int staleRefusals = 0;
            while (true) {
                try {
                    if (!settled) {
                        // A stop whose call was cut (an interrupt, a timeout) may still be carried out by dockerd: a
                        // second stop returns once the container is stopped, so the start below is not undone by it.
                        docker.stop(h.containerId(), SETTLE_STOP_SECONDS);
                        settled = true;
                        // Journalled before the start: a closing cut short after it (its process killed) is finished
                        // by another that must not stop the container this one gave back (FleetHistoryIT seed
                        // 4273672589570179350).
                        entry = entry.stopReturned(h.containerId());
                        writeQuietly("after a settling stop returned");
                    }
                    if (!restored) {
                        // Kept stopped for an operator, 'always' is put back as 'unless-stopped': the same while it runs,
                        // but dockerd would start an 'always' container as it restarts, a held one too (SPEC.md "Notes").
                        docker.updateRestartPolicy(h.containerId(), operator != null && "always".equals(h.restorePolicy()) ? "unless-stopped" : h.restorePolicy());
                        restored = true;
                    }
                    if (operator == null) docker.start(h.containerId());
                    last = null;
                    break;
                } catch (NoSuchContainerException e) {
                    last = e; // removed meanwhile (by hand): nothing to start, retrying will not help
                    break;
                } catch (StaleTaskException e) {
                    // Refused for good: released at once, so that the apply that follows makes a new container, rather
                    // than after START_RETRY. Once more first, a second apart: a refusal is only believed twice.
                    last = e;
                    if (staleRefusals++ > 0 || System.nanoTime() > end) break;
                    pause(1_000);
                } catch (RuntimeException e) {
                    last = e;
                    // Docker's 404 for the stop or the put-back of the policy, which say it in their own words: removed
                    // meanwhile as well (failure model row 113), so not retried for START_RETRY with the fence held.
                    if (gone(e) || System.nanoTime() > end) break;
                    pause(pause);
                    pause = Math.min(pause * 2, 5_000);
                }
            }
            if (operator != null) {
                String kept = h.container() + " kept stopped: held by operator " + operator.hold().by() + ": " + operator.hold().reason()
                        + (last == null ? "" : " (its restart policy was not put back: " + describe(last) + ")");
                notes.add(kept);
                this.kept.add(kept);
                log.warn("window {}: {}", entry.window(), kept);
            } else if (last != null && gone(last)) {
                errors.add(h.container() + " no longer exists: removed while the window held it (" + describe(last)
                        + "); released, so the next apply recreates it");
                log.error("window {}: {} no longer exists: removed while the window held it: {}", entry.window(), h.container(), describe(last));
            } else if (last != null) {
                errors.add(h.container() + " did not start again (" + describe(last) + "); released, so the next apply recreates it");
                log.error("window {}: {} did not start again: {}", entry.window(), h.container(), describe(last));
            } else {
                started.add(h);
            }
        }
        for (WindowJournal.HeldContainer h : started) {
            awaitReady(h);
            postStart(h);
        }
    }

    /**
     * Runs the container's {@code post-start} (decision 38): after its start and readiness wait, whatever they said; a
     * hook never keeps a window open past its bound, nor fails the closing.
     */
    private void postStart(WindowJournal.HeldContainer h) {
        if (postStart == null) return;
        boolean wasInterrupted = Thread.interrupted(); // an exec must not fail on a pending interrupt
        try {
            postStart.run(docker, h.container(), h.containerId(), stopping()).ifPresent(r -> hookLines.add(r.line()));
        } catch (RuntimeException e) {
            hookLines.add("post-start of " + h.container() + " not run: " + describe(e));
            log.warn("window {}: post-start of {} not run: {}", entry.window(), h.container(), describe(e));
        } finally {
            if (wasInterrupted) interrupted = true;
        }
    }

    /** @return the operator's hold in force on {@code container}, as the lookup knows it without waiting, or {@code null} */
    private HeldRecord operatorHold(String container) {
        HeldRecord h = operatorHolds == null ? null : operatorHolds.apply(container);
        return h != null && h.operatorHold() && !h.expiredAt(ZkClock.earliest()) ? h : null;
    }

    /**
     * Waits until a container the window started again is ready, by the {@code ready} it was created with
     * ({@link Labels#READY}; docs/decisions/0010-readiness.md): a window keeps its held nodes until then. One that is
     * not ready by its deadline, or exits, is said in the window's result; it is released all the same (the next apply
     * sees it and reports it). Docker not answering ends the wait: it never keeps the window open for ever.
     * The verdict's reasons (health output, last log lines) are what the container printed: they lose its secrets'
     * values (decision 18) before they reach the result, the report or the log.
     */
    private void awaitReady(WindowJournal.HeldContainer h) {
        try {
            Map<String, String> labels = docker.labels(h.containerId());
            Readiness.Verdict v = new Readiness(docker).await(h.containerId(), Readiness.labelled(labels),
                    () -> stopping() && System.nanoTime() - stoppingSince >= STOPPING_READY_WAIT.toNanos());
            if (!v.ready() && !v.reasons().isEmpty() && v.reasons().get(0).startsWith(Readiness.NOT_AWAITED)) {
                String line = h.container() + " started again; its " + v.reasons().get(0) + ": the agent is stopping";
                unawaited.add(line);
                notes.add(line);
                log.warn("window {}: {}", entry.window(), line);
            } else if (!v.ready()) {
                List<String> reasons = redaction(labels).apply(v.reasons());
                errors.add(h.container() + " is not ready again: " + String.join("; ", reasons));
                log.error("window {}: {} is not ready again: {}", entry.window(), h.container(), reasons);
            }
        } catch (RuntimeException e) {
            if (Thread.interrupted()) interrupted = true; // a closing is not cut short: remembered, set again at the end
            if (gone(e)) {
                // Removed after its start (another process, a hand): the window did not give it back, whatever its
                // step did, so the window reads failed naming it (SPEC.md "Window"; failure model row 113). Its held
                // node goes with the window all the same.
                errors.add(h.container() + " no longer exists: removed after it was started again, before it was ready ("
                        + describe(e) + "); released, so the next apply recreates it");
                log.error("window {}: {} no longer exists: removed after it was started again, before it was ready: {}", entry.window(),
                        h.container(), describe(e));
                return;
            }
            notes.add(h.container() + " started again; its readiness is not known (" + describe(e) + ")");
            log.warn("window {}: {} started again; its readiness is not known: {}", entry.window(), h.container(), describe(e));
        }
    }

    /**
     * @param labels the held container's labels
     * @return the redaction of the secrets the container was created with ({@link Labels#SPEC} names them, the secrets
     *         dir holds their values, read as the apply reads them); none without secrets or a secrets dir
     */
    private Redaction redaction(Map<String, String> labels) {
        String spec = labels == null ? null : labels.get(Labels.SPEC);
        if (secrets == null || spec == null) return Redaction.NONE;
        return secrets.resolve(Json.readOrNull(spec.getBytes(StandardCharsets.UTF_8), ContainerSpec.class)).redaction();
    }

    /** Removes the window's step containers (label {@code mesh.window}), retrying while dockerd comes back. */
    private void removeSteps() {
        long end = System.nanoTime() + START_RETRY.toNanos();
        while (true) {
            try {
                for (String id : docker.containersWithLabel(Labels.WINDOW, entry.window())) docker.remove(id);
                return;
            } catch (RuntimeException e) {
                if (System.nanoTime() > end) {
                    log.warn("window {}: its step container could not be removed: {}", entry.window(), describe(e));
                    return;
                }
                pause(1_000);
            }
        }
    }

    private List<String> names() {
        return entry.held().stream().map(WindowJournal.HeldContainer::container).toList();
    }

    /**
     * Sleeps through interrupts: an interrupt does not cut a closing short (a window never leaves its containers
     * stopped); it is remembered and set again when {@link #closeAll()} returns.
     */
    private void pause(long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        while (true) {
            long left = end - System.nanoTime();
            if (left <= 0) return;
            try {
                Thread.sleep(Math.max(1, left / 1_000_000L));
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
    }

    /**
     * @param e a failed Docker call on a held container
     * @return true when Docker said the container no longer exists: {@link NoSuchContainerException}, or a 404 saying
     *         so in Docker's words (a stop or an update, which the engine does not translate); retrying will not help
     */
    private static boolean gone(RuntimeException e) {
        return e instanceof NoSuchContainerException || DockerEngine.answered(e) && DockerAnswer.noSuchContainer(e);
    }

    /** @return a failure as one line, for the window's log and errors: its message's first line, else its type */
    static String describe(Throwable e) {
        String m = e.getMessage();
        if (m == null || m.isBlank()) return e.getClass().getSimpleName();
        return m.lines().map(String::strip).filter(x -> !x.isEmpty()).findFirst().orElse(m);
    }
}
