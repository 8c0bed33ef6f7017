package io.mesh.docker;

import io.mesh.wire.Json;
import io.mesh.wire.ReadySpec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Whether a created or recreated container counts (SPEC.md, "Health and readiness"; design in
 * docs/decisions/0010-readiness.md): healthy (with a healthcheck, its own or its image's) or running (without one)
 * for {@code ready.min-healthy}, without a restart, by {@code ready.deadline}. One inspect every {@link #POLL}. Used by
 * the apply after a create or recreate, and by a window after it started its held containers again.
 */
public final class Readiness {
    /** Time between two inspects of a container that is not ready yet. */
    static final Duration POLL = Duration.ofMillis(200);
    /** The reason of a verdict that {@code giveUp} ended. */
    public static final String NOT_AWAITED = "readiness not awaited further";
    /** Log lines a not-ready container's reasons carry. */
    public static final int LOG_LINES = 5;

    /**
     * @param ready   true when the container counts
     * @param state   the last inspect
     * @param reasons why it does not count (its exit code or health output, then its last log lines); empty when ready
     */
    public record Verdict(boolean ready, RunState state, List<String> reasons) {}

    private final ContainerRuntime docker;

    /** @param docker the runtime the caller may use (the section's guarded or fenced one) */
    public Readiness(ContainerRuntime docker) {
        this.docker = docker;
    }

    /**
     * @param labels a container's labels
     * @return the {@code ready} it was created with ({@link Labels#READY}); the defaults when it has none (created
     *         before the label existed, or without {@code ready}) or it cannot be read
     */
    public static ReadySpec labelled(java.util.Map<String, String> labels) {
        String json = labels.get(Labels.READY);
        if (json == null || json.isEmpty()) return ReadySpec.DEFAULT;
        try {
            ReadySpec r = Json.read(json.getBytes(java.nio.charset.StandardCharsets.UTF_8), ReadySpec.class);
            r.minHealthyTime();
            r.deadlineTime();
            return r;
        } catch (RuntimeException e) {
            return ReadySpec.DEFAULT;
        }
    }

    /**
     * Waits until the container is ready, or is not and cannot be: it exited or restarted, Docker calls it
     * {@code unhealthy}, or the deadline passed. Called right after the container's start.
     *
     * @param id    the container, just started
     * @param ready its {@code ready} (its healthcheck, if any, is Docker's: read from its state)
     * @return the verdict
     * @throws IllegalStateException when interrupted (the apply is cut; the caller reverts)
     */
    public Verdict await(String id, ReadySpec ready) {
        return await(id, ready, () -> false);
    }

    /**
     * As {@link #await(String, ReadySpec)}, ending early, not ready, once {@code giveUp} says so (asked at each look).
     *
     * @param id     the container, just started
     * @param ready  its {@code ready}
     * @param giveUp true when the caller no longer waits (a window giving its containers back as the agent stops)
     * @return the verdict; not ready with the reason {@code readiness not awaited further} when {@code giveUp} ended it
     */
    public Verdict await(String id, ReadySpec ready, BooleanSupplier giveUp) {
        long minHealthy = ready.minHealthyTime().toNanos();
        long start = System.nanoTime();
        long deadline = start + ready.deadlineTime().toNanos();
        RunState first = docker.runState(id);
        long okSince = -1;
        RunState s = first;
        while (true) {
            if (!s.running() || s.restartCount() != first.restartCount() || !Objects.equals(s.startedAt(), first.startedAt())) {
                // A container Docker restarted and that runs again shows exit code 0: its last exit code is gone.
                boolean knownExit = !s.running() && s.exitCode() != null;
                String restarted = s.restartCount() == first.restartCount() ? "" : ", and Docker restarted it by its restart policy";
                return notReady(id, s, "not ready: exited" + (knownExit ? " (" + s.exitCode() + ")" : "") + " "
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
            if (giveUp.getAsBoolean()) return new Verdict(false, s, List.of(NOT_AWAITED + " after " + seconds(now - start)));
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
