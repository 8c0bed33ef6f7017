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
 */
public record WindowResult(String schedule, String window, Instant startedAt, Instant finishedAt, WindowOutcome outcome,
                           Integer exitCode, List<String> held, List<String> logTail, String error) {
    /** How many of the step's last log lines are kept. */
    public static final int LOG_LINES = 20;

    /** @return true when the step ran and exited 0 */
    public boolean succeeded() { return outcome == WindowOutcome.SUCCEEDED; }
}
