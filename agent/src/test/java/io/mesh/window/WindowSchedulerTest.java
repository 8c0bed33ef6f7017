package io.mesh.window;

import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.ScheduleSpec;
import io.mesh.manifest.StepSpec;
import org.junit.jupiter.api.Test;

import java.time.ZonedDateTime;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Cron times (cron-utils, Unix 5 fields) in the schedule's zone, and the scheduler firing them: each cron time at most
 * once (decision 0006), woken early, with the wall clock stepped back or jumping forward, across a restart. The clock
 * is moved by hand ({@link HandClock}); the scheduler looks at it every millisecond, and each check waits until the
 * scheduler has looked at the clock since it moved, so nothing here sleeps for a fixed time.
 */
class WindowSchedulerTest {
    private static ScheduleSpec schedule(String cron, String zone) {
        return new ScheduleSpec(cron, zone, List.of("registry"), new StepSpec("img:1", List.of(), null, null, null, null), "30m");
    }

    @Test
    void nextRunIsInTheSchedulesZone() {
        ZonedDateTime after = ZonedDateTime.parse("2026-11-30T10:00:00Z");
        assertThat(WindowScheduler.next(schedule("30 3 * * *", "UTC"), after).orElseThrow().toInstant())
                .isEqualTo(ZonedDateTime.parse("2026-12-01T03:30:00Z").toInstant());
        // 03:30 in Paris (UTC+1 in winter) is 02:30 UTC
        assertThat(WindowScheduler.next(schedule("30 3 * * *", "Europe/Paris"), after).orElseThrow().toInstant())
                .isEqualTo(ZonedDateTime.parse("2026-12-01T02:30:00Z").toInstant());
        assertThat(WindowScheduler.next(schedule("*/15 * * * 1-5", "UTC"), after).orElseThrow().toInstant())
                .isEqualTo(ZonedDateTime.parse("2026-11-30T10:15:00Z").toInstant());
    }

    @Test
    void firesEveryMinuteScheduleAndStopsWhenTheModuleGoes() throws Exception {
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        List<String> fired = new CopyOnWriteArrayList<>();
        // A clock half a second before a minute: the every-minute schedule fires within a second.
        java.time.Instant nearlyTen = java.time.Instant.parse("2026-11-30T09:59:59.500Z");
        java.time.Clock clock = java.time.Clock.offset(java.time.Clock.systemUTC(), java.time.Duration.between(java.time.Instant.now(), nearlyTen));
        try (WindowScheduler s = new WindowScheduler(timer, (m, sch) -> fired.add(m + "/" + sch), clock)) {
            var spec = new ModuleSpec("store", List.of("host-a"), java.util.Map.of(),
                    java.util.Map.of("gc", schedule("* * * * *", "UTC")));
            s.update("store", spec);
            await().atMost(java.time.Duration.ofSeconds(5)).until(() -> !fired.isEmpty());
            assertThat(fired).containsOnly("store/gc");
            s.update("store", null);
            assertThat(s.nextFire("store", "gc")).as("armed after its module went").isEmpty();
            int n = fired.size();
            Thread.sleep(200); // deliberate: a quiet period in which nothing may fire
            assertThat(fired).hasSize(n);
        } finally {
            timer.shutdownNow();
        }
    }

    /** A wall clock moved by hand; counts how often it is read, so a test can wait until the scheduler has looked. */
    static final class HandClock extends java.time.Clock {
        private final java.util.concurrent.atomic.AtomicReference<java.time.Instant> now;
        private final java.util.concurrent.atomic.AtomicLong reads = new java.util.concurrent.atomic.AtomicLong();

        HandClock(String at) { now = new java.util.concurrent.atomic.AtomicReference<>(java.time.Instant.parse(at)); }

        void set(String at) { now.set(java.time.Instant.parse(at)); }

        void plusMillis(long ms) { now.updateAndGet(t -> t.plusMillis(ms)); }

        long reads() { return reads.get(); }

        @Override public java.time.Instant instant() {
            reads.incrementAndGet();
            return now.get();
        }

        @Override public java.time.ZoneId getZone() { return java.time.ZoneOffset.UTC; }

        @Override public java.time.Clock withZone(java.time.ZoneId zone) { throw new UnsupportedOperationException(); }
    }

    /** A scheduler on a hand clock that looks at the clock every millisecond, recording the cron time of each fire. */
    private static final class Rig implements AutoCloseable {
        final HandClock clock;
        final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        final List<java.time.Instant> fired = new CopyOnWriteArrayList<>();
        final WindowScheduler scheduler;

        Rig(HandClock clock, java.nio.file.Path stateDir) {
            this.clock = clock;
            WindowScheduler[] self = new WindowScheduler[1];
            // The callback runs after the scheduler has recorded the time it fires: that is the time fired.
            self[0] = new WindowScheduler(timer, (m, sch) -> fired.add(self[0].lastFired(m, sch).orElseThrow()),
                    clock, stateDir, java.time.Duration.ofMillis(1));
            scheduler = self[0];
        }

        void arm(String cron) {
            scheduler.update("store", new ModuleSpec("store", List.of("host-a"), java.util.Map.of(),
                    java.util.Map.of("gc", schedule(cron, "UTC"))));
        }

        /** Waits until the scheduler has looked at the clock twice since now: whatever the first look decided is done. */
        void settle() {
            long from = clock.reads();
            await().atMost(java.time.Duration.ofSeconds(5)).pollInterval(java.time.Duration.ofMillis(1))
                    .until(() -> clock.reads() >= from + 2);
        }

        java.time.Instant next() { return scheduler.nextFire("store", "gc").orElseThrow(); }

        @Override public void close() {
            scheduler.close();
            timer.shutdownNow();
        }
    }

    private static java.time.Instant at(String t) { return java.time.Instant.parse(t); }

    /** The bug this class had: a timer waking a millisecond early computed the same cron time again and fired twice. */
    @Test
    void aTimerWokenEarlyWaitsAndFiresTheCronTimeOnce() {
        HandClock clock = new HandClock("2026-12-01T03:29:59.999Z"); // frozen a millisecond early
        try (Rig r = new Rig(clock, null)) {
            r.arm("30 3 * * *");
            assertThat(r.next()).isEqualTo(at("2026-12-01T03:30:00Z"));
            for (int i = 0; i < 20; i++) r.settle(); // woken early, again and again
            assertThat(r.fired).isEmpty();

            clock.set("2026-12-01T03:30:00Z");
            await().atMost(java.time.Duration.ofSeconds(5)).until(() -> !r.fired.isEmpty());
            for (int i = 0; i < 20; i++) r.settle(); // the clock stays on the cron time
            assertThat(r.fired).containsExactly(at("2026-12-01T03:30:00Z"));
            assertThat(r.next()).isEqualTo(at("2026-12-02T03:30:00Z"));
        }
    }

    /** NTP steps the clock back 10 minutes after 03:30 fired: 03:30 comes round again on the wall clock, and is not fired. */
    @Test
    void aClockSteppedBackDoesNotFireTheSameTimeAgain() {
        HandClock clock = new HandClock("2026-12-01T03:29:59.990Z");
        try (Rig r = new Rig(clock, null)) {
            r.arm("30 3 * * *");
            clock.set("2026-12-01T03:30:00.020Z");
            await().atMost(java.time.Duration.ofSeconds(5)).until(() -> r.fired.size() == 1);

            clock.set("2026-12-01T03:20:00.020Z"); // stepped back
            r.settle();
            assertThat(r.next()).isEqualTo(at("2026-12-02T03:30:00Z"));
            for (long ms = 0; ms <= 11 * 60_000; ms += 30_000) { // the wall clock runs over 03:30 again
                clock.plusMillis(30_000);
                r.settle();
            }
            assertThat(r.fired).containsExactly(at("2026-12-01T03:30:00Z"));
            assertThat(r.next()).isEqualTo(at("2026-12-02T03:30:00Z"));
        }
    }

    /** The same across a restart: the last fired time is kept under the state dir, so a new process does not fire it again. */
    @Test
    void aRestartAfterTheClockSteppedBackDoesNotFireTheSameTimeAgain(@org.junit.jupiter.api.io.TempDir java.nio.file.Path state) {
        HandClock clock = new HandClock("2026-12-01T03:29:59.990Z");
        try (Rig r = new Rig(clock, state)) {
            r.arm("30 3 * * *");
            clock.set("2026-12-01T03:30:00.020Z");
            await().atMost(java.time.Duration.ofSeconds(5)).until(() -> r.fired.size() == 1);
        }
        assertThat(state.resolve("cron/store/gc")).hasContent("2026-12-01T03:30:00Z\n");

        clock.set("2026-12-01T03:25:00Z"); // the agent restarts after NTP stepped the clock back
        try (Rig r = new Rig(clock, state)) {
            r.arm("30 3 * * *");
            assertThat(r.next()).isEqualTo(at("2026-12-02T03:30:00Z"));
            clock.set("2026-12-01T03:30:00.020Z");
            for (int i = 0; i < 20; i++) r.settle();
            assertThat(r.fired).isEmpty();
        }
    }

    /**
     * Decision 0006: a cron time that passed while the agent was down does not run late when it starts (03:40 after
     * 03:30); it is logged as missed and the schedule waits for its next time.
     */
    @Test
    void aTimeMissedWhileTheAgentWasDownDoesNotRunLateAndIsLogged(@org.junit.jupiter.api.io.TempDir java.nio.file.Path state) {
        HandClock clock = new HandClock("2026-11-30T03:29:59.990Z");
        try (Rig r = new Rig(clock, state)) {
            r.arm("30 3 * * *");
            clock.set("2026-11-30T03:30:00.010Z");
            await().atMost(java.time.Duration.ofSeconds(5)).until(() -> r.fired.size() == 1);
        }
        clock.set("2026-12-01T03:40:00Z"); // down from 03:00 to 03:40 the next day
        try (Logs logs = new Logs(); Rig r = new Rig(clock, state)) {
            r.arm("30 3 * * *");
            for (int i = 0; i < 20; i++) r.settle();
            assertThat(r.fired).isEmpty();
            assertThat(r.next()).isEqualTo(at("2026-12-02T03:30:00Z"));
            assertThat(logs.lines()).anySatisfy(l -> assertThat(l)
                    .contains("store/gc", "cron time 2026-12-01T03:30:00Z missed", "not running", "last fired 2026-11-30T03:30:00Z"));
        }
    }

    /** A running agent whose clock jumps forward over a cron time (or that was frozen past it) skips it, saying so. */
    @Test
    void aTimeTheClockJumpedOverIsMissedNotRunLate() {
        HandClock clock = new HandClock("2026-12-01T03:29:00Z");
        try (Logs logs = new Logs(); Rig r = new Rig(clock, null)) {
            r.arm("30 3 * * *");
            r.settle();
            clock.set("2026-12-01T04:10:00Z");
            for (int i = 0; i < 20; i++) r.settle();
            assertThat(r.fired).isEmpty();
            assertThat(r.next()).isEqualTo(at("2026-12-02T03:30:00Z"));
            assertThat(logs.lines()).anySatisfy(l -> assertThat(l).contains("store/gc", "cron time 2026-12-01T03:30:00Z missed"));
        }
    }

    /**
     * An every-minute schedule while the clock moves in uneven steps, sometimes back by up to 3 s (the timer wakes early
     * and late): every minute fires exactly once, in order, and never twice in a row for the same time.
     */
    @Test
    void everyCronTimeFiresOnceWhileTheClockJittersBackAndForth() {
        java.util.Random random = new java.util.Random(6);
        HandClock clock = new HandClock("2026-12-01T09:59:30Z");
        try (Rig r = new Rig(clock, null)) {
            r.arm("* * * * *");
            for (int i = 0; i < 700; i++) {
                clock.plusMillis(random.nextInt(10) == 0 ? -random.nextInt(3_000) : random.nextInt(1_500));
                r.settle();
            }
            java.time.Instant end = clock.instant();
            List<java.time.Instant> minutes = new java.util.ArrayList<>();
            for (java.time.Instant t = at("2026-12-01T10:00:00Z"); !t.isAfter(end); t = t.plusSeconds(60)) minutes.add(t);
            assertThat(minutes).hasSizeGreaterThan(3);
            assertThat(r.fired).containsExactlyElementsOf(minutes);
        }
    }

    /** Captures WindowScheduler's log lines (Logback, the agent's SLF4J binding). */
    private static final class Logs implements AutoCloseable {
        private final ch.qos.logback.classic.Logger logger =
                (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(WindowScheduler.class);
        private final ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> appender =
                new ch.qos.logback.core.read.ListAppender<>();

        Logs() {
            appender.start();
            logger.addAppender(appender);
        }

        List<String> lines() {
            synchronized (appender.list) {
                return appender.list.stream().map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage).toList();
            }
        }

        @Override public void close() { logger.detachAppender(appender); }
    }
}
