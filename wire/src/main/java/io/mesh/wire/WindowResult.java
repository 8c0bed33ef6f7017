package io.mesh.wire;

import java.time.Instant;
import java.util.List;

/**
 * How a window ended: carried in the module's report as {@code lastWindow} and logged.
 *
 * @param schedule   schedule name
 * @param window     window id
 * @param startedAt  when the window opened
 * @param finishedAt when the held containers were running again and the nodes deleted
 * @param outcome    how it ended
 * @param exitCode   the step's exit code, {@code null} when it never ran
 * @param held       Docker names of the containers it held
 * @param logTail    the step's last log lines (at most {@link #LOG_LINES})
 * @param error      what went wrong, else {@code null}
 * @param gate       what the schedule's gate last answered before the window began or was skipped
 *                   (docs/decisions/0035-window-gates.md), else {@code null}
 * @param hooks      one line per container hook the window ran (docs/decisions/0038-container-hooks.md), such as
 *                   {@code pre-stop of store-registry exited 0}; empty (and left out of the JSON) when none ran
 */
public record WindowResult(String schedule, String window, Instant startedAt, Instant finishedAt, WindowOutcome outcome,
                           Integer exitCode, List<String> held, List<String> logTail, String error,
                           @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL) String gate,
                           @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_EMPTY) List<String> hooks) {
    public WindowResult {
        hooks = hooks == null ? List.of() : List.copyOf(hooks);
    }

    /** A result without hooks. */
    public WindowResult(String schedule, String window, Instant startedAt, Instant finishedAt, WindowOutcome outcome,
                        Integer exitCode, List<String> held, List<String> logTail, String error, String gate) {
        this(schedule, window, startedAt, finishedAt, outcome, exitCode, held, logTail, error, gate, null);
    }

    /** A result without a gate's answer or hooks. */
    public WindowResult(String schedule, String window, Instant startedAt, Instant finishedAt, WindowOutcome outcome,
                        Integer exitCode, List<String> held, List<String> logTail, String error) {
        this(schedule, window, startedAt, finishedAt, outcome, exitCode, held, logTail, error, null, null);
    }

    /** @return this result with the gate's last answer */
    public WindowResult withGate(String said) {
        return new WindowResult(schedule, window, startedAt, finishedAt, outcome, exitCode, held, logTail, error, said, hooks);
    }

    /** @return this result with the lines of the hooks its window ran */
    public WindowResult withHooks(List<String> lines) {
        return new WindowResult(schedule, window, startedAt, finishedAt, outcome, exitCode, held, logTail, error, gate, lines);
    }

    /** How many of the step's last log lines are kept. */
    public static final int LOG_LINES = 20;

    /**
     * A window whose step ran (or was killed at its timeout), finished now.
     *
     * @param startedAt when the window opened
     * @param outcome   how it ended: succeeded, step-failed, timed-out, or failed when giving the containers back failed
     * @param exitCode  the step's exit code
     * @param logTail   the step's last log lines
     * @param error     what went wrong, {@code null} when nothing did
     * @return the result
     */
    public static WindowResult ended(String schedule, String window, Instant startedAt, WindowOutcome outcome, int exitCode,
                                     List<String> held, List<String> logTail, String error) {
        return new WindowResult(schedule, window, startedAt, Times.now(), outcome, exitCode, held, logTail, error);
    }

    /**
     * A window whose step never ran, finished now.
     *
     * @param startedAt when the window opened
     * @param error     why
     * @return a {@code failed} result without exit code or log lines
     */
    public static WindowResult failed(String schedule, String window, Instant startedAt, List<String> held, String error) {
        return new WindowResult(schedule, window, startedAt, Times.now(), WindowOutcome.FAILED, null, held, List.of(), error);
    }

    /**
     * A window that did not open, finished now: nothing was stopped and no step ran.
     *
     * @param schedule  schedule name
     * @param window    window id
     * @param startedAt when it was to open (or began to wait for its slot)
     * @param why       why it was skipped, such as {@code start-by passed ...} or {@code held by operator ...}
     * @return a {@code skipped} result without exit code, held containers or log lines
     */
    public static WindowResult skipped(String schedule, String window, Instant startedAt, String why) {
        return new WindowResult(schedule, window, startedAt, Times.now(), WindowOutcome.SKIPPED, null, List.of(), List.of(), why);
    }

    /**
     * A window that another mesh process finished from the journal, its own process having died or left it; finished now.
     *
     * @param startedAt when the window opened
     * @param exitCode  the step's exit code, {@code null} when unknown
     * @param logTail   the step's last log lines, when known
     * @param notes     who finished it and what it found
     * @return a {@code recovered} result
     */
    public static WindowResult recovered(String schedule, String window, Instant startedAt, Integer exitCode, List<String> held,
                                         List<String> logTail, String notes) {
        return new WindowResult(schedule, window, startedAt, Times.now(), WindowOutcome.RECOVERED, exitCode, held, logTail, notes);
    }

    /** @return true when the step ran and exited 0 */
    public boolean succeeded() { return outcome == WindowOutcome.SUCCEEDED; }
}
