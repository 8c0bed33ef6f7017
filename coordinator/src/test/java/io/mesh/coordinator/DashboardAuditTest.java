package io.mesh.coordinator;

import io.mesh.wire.AuditReport;
import io.mesh.wire.AuditReport.Item;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The page's "Last 24 hours" section ({@link Dashboard#auditSection()}): none given, asked once a minute, a source that
 * throws or is slow, and the rest of the page rendering all the same.
 */
class DashboardAuditTest {
    static final Instant T0 = Instant.parse("2026-12-06T08:00:00Z");

    /** A clock the test moves. */
    static final class Hand extends Clock {
        volatile Instant now = T0;

        @Override public ZoneId getZone() { return ZoneOffset.UTC; }

        @Override public Clock withZone(ZoneId zone) { return this; }

        @Override public Instant instant() { return now; }
    }

    static List<AuditReport> oneWindow(Instant from, Instant to) {
        return List.of(new AuditReport("h1", from, to, from, List.of(new Item("window", "w-1", "m1", "sweep", null, null,
                to.minus(Duration.ofHours(2)), to.minus(Duration.ofHours(1)), List.of("m1-app"), 1, 1, "ok")), List.of(), null));
    }

    static FleetStatus.Fleet emptyFleet() {
        return new FleetStatus.Fleet(T0, List.of(), List.of(), List.of(), List.of(), List.of(), List.of());
    }

    @Test
    void withNoSourceTheSectionSaysAuditUnavailable() {
        String page = new Dashboard().page(emptyFleet());
        assertThat(page).contains("<section id=\"audit\"><h2>Last 24 hours</h2>", "audit unavailable", "id=\"hosts\"");
    }

    @Test
    void theAuditIsAskedForTheLast24HoursAtMostOnceAMinute() {
        Hand clock = new Hand();
        List<Instant[]> asked = new ArrayList<>();
        Dashboard d = new Dashboard((from, to) -> {
            synchronized (asked) { asked.add(new Instant[]{from, to}); }
            return oneWindow(from, to);
        }, clock, Dashboard.AUDIT_CACHE, Duration.ofSeconds(5));
        String first = d.fragment(emptyFleet());
        assertThat(first).contains("data-module=\"m1\"", ">window sweep</span>", "href=\"/v1/audit?since=2026-12-05T08:00:00Z&amp;until=2026-12-06T08:00:00Z\"");
        clock.now = T0.plusSeconds(59);
        assertThat(d.fragment(emptyFleet())).contains(">window sweep</span>");
        assertThat(asked).hasSize(1);
        assertThat(asked.get(0)).containsExactly(T0.minus(Duration.ofHours(24)), T0);

        clock.now = T0.plusSeconds(60);
        assertThat(d.fragment(emptyFleet())).contains(">window sweep</span>");
        assertThat(asked).hasSize(2);
        assertThat(asked.get(1)[1]).isEqualTo(T0.plusSeconds(60));
    }

    @Test
    void aSourceThatThrowsIsSaidAndTheRestOfThePageRenders() {
        Hand clock = new Hand();
        AtomicInteger calls = new AtomicInteger();
        Dashboard d = new Dashboard((from, to) -> {
            if (calls.incrementAndGet() == 2) throw new IllegalStateException("ZooKeeper <lost>");
            return oneWindow(from, to);
        }, clock, Dashboard.AUDIT_CACHE, Duration.ofSeconds(5));
        assertThat(d.page(emptyFleet())).contains(">window sweep</span>").doesNotContain("audit failed");
        clock.now = T0.plusSeconds(61);
        String page = d.page(emptyFleet());
        // The failure is said (escaped), the last audit that answered is still shown, and so is the rest of the page.
        assertThat(page).contains("id=\"audit-failed\"", "The audit failed", "ZooKeeper &lt;lost&gt;", ">window sweep</span>",
                "id=\"hosts\"", "id=\"pushes\"", "</footer>");
        // A failure is kept as long as an answer: the next refresh does not ask again at once.
        clock.now = T0.plusSeconds(62);
        assertThat(d.page(emptyFleet())).contains("The audit failed");
        assertThat(calls.get()).isEqualTo(2);
    }

    @Test
    void aSlowSourceDoesNotHoldThePageAndALaterRefreshShowsItsAnswer() throws Exception {
        CountDownLatch answer = new CountDownLatch(1);
        AtomicInteger calls = new AtomicInteger();
        Dashboard d = new Dashboard((from, to) -> {
            calls.incrementAndGet();
            if (!answer.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("the test never answered");
            return oneWindow(from, to);
        }, new Hand(), Dashboard.AUDIT_CACHE, Duration.ofMillis(200));
        long start = System.nanoTime();
        String page = d.page(emptyFleet());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
        assertThat(page).contains("id=\"audit-asking\"", "a later refresh shows it", "id=\"hosts\"");
        // Refreshes meanwhile do not ask again.
        assertThat(d.fragment(emptyFleet())).contains("id=\"audit-asking\"");
        assertThat(calls.get()).isEqualTo(1);
        answer.countDown();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(d.fragment(emptyFleet())).contains(">window sweep</span>").doesNotContain("audit-asking"));
        assertThat(calls.get()).isEqualTo(1);
    }

    @Test
    void aSourceGivenLaterIsUsed() {
        Dashboard d = new Dashboard();
        assertThat(d.fragment(emptyFleet())).contains("audit unavailable");
        d.auditSource(DashboardAuditTest::oneWindow);
        assertThat(d.fragment(emptyFleet())).contains(">window sweep</span>").doesNotContain("audit unavailable");
        d.auditSource(null);
        assertThat(d.fragment(emptyFleet())).contains("audit unavailable");
    }
}
