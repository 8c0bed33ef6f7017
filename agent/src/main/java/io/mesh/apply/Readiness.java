package io.mesh.apply;

import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.RunState;
import io.mesh.wire.ContainerSpec;
import io.mesh.wire.ReadySpec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Whether a created or recreated container counts (SPEC.md, "Health and readiness"; design in
 * docs/decisions/0010-readiness.md): healthy (with a healthcheck, its own or its image's) or running (without one)
 * for {@code ready.min-healthy}, without a restart, by {@code ready.deadline}. One inspect every {@link #POLL}.
 */
final class Readiness {
    /** Time between two inspects of a container that is not ready yet. */
    static final Duration POLL = Duration.ofMillis(200);
    /** Log lines a not-ready container's reasons carry. */
    static final int LOG_LINES = 5;

    /**
     * @param ready   true when the container counts
     * @param state   the last inspect
     * @param reasons why it does not count (its exit code or health output, then its last log lines); empty when ready
     */
    record Verdict(boolean ready, RunState state, List<String> reasons) {}

    private final ContainerRuntime docker;

    Readiness(ContainerRuntime docker) {
        this.docker = docker;
    }

    /**
     * Waits until the container is ready, or is not and cannot be: it exited or restarted, Docker calls it
     * {@code unhealthy}, or the deadline passed. Called right after the container's start.
     *
     * @param id   the container, just started
     * @param spec its spec ({@code ready}, {@code healthcheck})
     * @return the verdict
     * @throws IllegalStateException when interrupted (the apply is cut; the caller reverts)
     */
    Verdict await(String id, ContainerSpec spec) {
        ReadySpec ready = spec.readiness();
        long minHealthy = ready.minHealthyTime().toNanos();
        long start = System.nanoTime();
        long deadline = start + ready.deadlineTime().toNanos();
        RunState first = docker.runState(id);
        long okSince = -1;
        RunState s = first;
        while (true) {
            if (!s.running() || s.restartCount() != first.restartCount() || !Objects.equals(s.startedAt(), first.startedAt())) {
                String restarted = s.restartCount() == first.restartCount() ? "" : ", and Docker restarted it by its restart policy";
                return notReady(id, s, "not ready: exited" + (s.exitCode() == null ? "" : " (" + s.exitCode() + ")") + " "
                        + seconds(System.nanoTime() - start) + " after its start" + restarted);
            }
            if ("unhealthy".equals(s.health())) {
                return notReady(id, s, "not ready: unhealthy" + (s.healthOutput() == null ? "" : ": " + s.healthOutput()));
            }
            long now = System.nanoTime();
            boolean ok = RunState.NO_HEALTH.equals(s.health()) || "healthy".equals(s.health());
            if (!ok) {
                okSince = -1;
            } else if (okSince < 0) {
                okSince = now;
            }
            if (ok && now - okSince >= minHealthy) return new Verdict(true, s, List.of());
            if (now >= deadline) {
                return notReady(id, s, "not ready by its deadline (" + ready.deadlineTime().toSeconds() + "s): health " + s.health()
                        + (s.healthOutput() == null ? "" : ": " + s.healthOutput()));
            }
            long wait = Math.min(POLL.toNanos(), Math.max(0, (ok ? okSince + minHealthy : deadline) - now));
            try {
                TimeUnit.NANOSECONDS.sleep(Math.max(wait, 1_000_000L));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for container " + id + " to be ready", e);
            }
            s = docker.runState(id);
        }
    }

    private Verdict notReady(String id, RunState s, String why) {
        List<String> reasons = new ArrayList<>();
        reasons.add(why);
        for (String line : docker.logTail(id, LOG_LINES)) reasons.add("log: " + line);
        return new Verdict(false, s, reasons);
    }

    private static String seconds(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.1fs", nanos / 1e9);
    }
}
