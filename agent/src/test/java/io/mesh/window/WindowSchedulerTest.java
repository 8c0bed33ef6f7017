package io.mesh.window;

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

/** Cron times (cron-utils, Unix 5 fields) in the schedule's zone, and the scheduler firing them. */
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
            var spec = new io.mesh.manifest.ModuleSpec("store", List.of("host-a"), java.util.Map.of(),
                    java.util.Map.of("gc", schedule("* * * * *", "UTC")));
            s.update("store", spec);
            await().atMost(java.time.Duration.ofSeconds(5)).until(() -> !fired.isEmpty());
            assertThat(fired).containsOnly("store/gc");
            s.update("store", null);
            int n = fired.size();
            Thread.sleep(200);
            assertThat(fired).hasSize(n);
        } finally {
            timer.shutdownNow();
        }
    }
}
