package io.mesh.docker;

/**
 * A container's state from one inspect, reduced to what judging its readiness needs (SPEC.md, "Health and
 * readiness").
 *
 * @param running      Docker's {@code State.Running}
 * @param status       Docker's {@code State.Status}: {@code running}, {@code restarting}, {@code exited} ...
 * @param restartCount how often Docker restarted it by its restart policy
 * @param startedAt    Docker's {@code State.StartedAt}: changes with every start
 * @param exitCode     its last exit code, {@code null} when it never exited
 * @param health       {@code healthy}, {@code unhealthy}, {@code starting}, or {@code none} without a healthcheck
 * @param healthOutput the last health check's output, trimmed, or {@code null}
 * @param imageId      the image the container runs ({@code sha256:...})
 * @param failingStreak Docker's {@code State.Health.FailingStreak}: the health checks failed in a row; 0 without a
 *                     healthcheck (shown in the apply's progress, docs/decisions/0032-apply-progress.md)
 */
public record RunState(boolean running, String status, int restartCount, String startedAt, Integer exitCode,
                       String health, String healthOutput, String imageId, int failingStreak) {
    /** A state without a failing streak (a runtime that does not tell it). */
    public RunState(boolean running, String status, int restartCount, String startedAt, Integer exitCode,
                    String health, String healthOutput, String imageId) {
        this(running, status, restartCount, startedAt, exitCode, health, healthOutput, imageId, 0);
    }

    /** {@code health} of a container without a healthcheck. */
    public static final String NO_HEALTH = "none";
}
