package io.mesh.docker;

import io.mesh.manifest.ReadySpec;
import io.mesh.wire.Json;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

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
    /** How far before the readiness wait began its die events are asked for (the start came just before it). */
    static final Duration EVENTS_MARGIN = Duration.ofSeconds(2);
    /** How long the die event of an exit an inspect already showed is waited for. */
    static final Duration EVENTS_WAIT = Duration.ofSeconds(1);
    /** How far back a crash-looping container's die events are read. */
    static final Duration CRASH_LOOP_SPAN = Duration.ofMinutes(10);
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
        return await(id, ready, giveUp, s -> {});
    }

    /**
     * As {@link #await(String, ReadySpec, BooleanSupplier)}, telling {@code looked} each inspect that did not end the
     * wait (the apply's progress, docs/decisions/0032-apply-progress.md).
     *
     * @param looked told the state of each look after which the wait goes on; must not throw
     */
    public Verdict await(String id, ReadySpec ready, BooleanSupplier giveUp, Consumer<RunState> looked) {
        long minHealthy = ready.minHealthyTime().toNanos();
        long start = System.nanoTime();
        // Docker's event times have the engine's clock (this host's); a margin for a start Docker stamped just before.
        Instant since = Instant.now().minus(EVENTS_MARGIN);
        long deadline = start + ready.deadlineTime().toNanos();
        RunState first = docker.runState(id);
        long okSince = -1;
        RunState s = first;
        while (true) {
            if (!s.running() || s.restartCount() != first.restartCount() || !Objects.equals(s.startedAt(), first.startedAt())) {
                boolean restarted = s.restartCount() != first.restartCount();
                Integer code = lastExitCode(id, s, since, restarted);
                return notReady(id, s, "not ready: exited" + (code != null ? " (" + code + ")" : "") + " "
                        + seconds(System.nanoTime() - start) + " after its start"
                        + (restarted ? ", and Docker restarted it by its restart policy" : ""));
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
            looked.accept(s);
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

    /**
     * The exit code of a container's last exit since {@code since}: from its {@code die} events, which keep it (an
     * inspect shows 0 once a restart policy started the container again), else from the inspect when it has not
     * restarted. Docker records the event just after the state an inspect shows, so a restarted container's events are
     * asked again for up to {@link #EVENTS_WAIT}.
     *
     * @param s         the inspect that showed it exited or restarted
     * @param restarted true when Docker restarted it since: the inspect's exit code is not its exit's
     * @return the code, or {@code null} when neither knows it
     */
    private Integer lastExitCode(String id, RunState s, Instant since, boolean restarted) {
        long giveUp = System.nanoTime() + EVENTS_WAIT.toNanos();
        while (true) {
            List<ContainerRuntime.Exit> exits = docker.exits(id, since, Instant.now());
            if (!exits.isEmpty()) return exits.get(exits.size() - 1).code();
            if (!restarted && !s.running() && s.exitCode() != null) return s.exitCode();
            if (System.nanoTime() >= giveUp) return restarted || s.running() ? null : s.exitCode();
            try {
                TimeUnit.MILLISECONDS.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
    }

    /**
     * @param docker the runtime
     * @param id     a container Docker keeps restarting (planned {@code CRASH_LOOP})
     * @return {@code exited (N) at T}, with how often it exited in the last {@link #CRASH_LOOP_SPAN}, from its
     *         {@code die} events; {@code null} when Docker's events no longer have any
     */
    public static String lastExits(ContainerRuntime docker, String id) {
        Instant now = Instant.now();
        List<ContainerRuntime.Exit> exits = docker.exits(id, now.minus(CRASH_LOOP_SPAN), now);
        if (exits.isEmpty()) return null;
        ContainerRuntime.Exit last = exits.get(exits.size() - 1);
        return "exited (" + last.code() + ")" + (last.at() == null ? "" : " at " + last.at().truncatedTo(java.time.temporal.ChronoUnit.MILLIS))
                + (exits.size() > 1 ? ", " + exits.size() + " exits in the last " + CRASH_LOOP_SPAN.toMinutes() + " minutes" : "");
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
