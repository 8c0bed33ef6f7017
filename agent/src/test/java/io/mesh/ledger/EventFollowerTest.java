package io.mesh.ledger;

import io.mesh.testing.TestDocker;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The anchor rule on a real engine (decision 28): an anchor the engine no longer has (dockerd restarted, or its
 * 256-event buffer rolled over; here, an anchor no engine ever had) makes the span since it a gap, and the follower
 * then follows live.
 */
@Tag("slow")
class EventFollowerTest {
    @TempDir
    Path state;

    /** The keeper's scheduler, when the follower runs on one (as in the agent); shut down before the follower closes. */
    private java.util.concurrent.ScheduledExecutorService scheduler;

    private EventFollower follower(Ledger ledger, boolean onScheduler) {
        if (!onScheduler) return new EventFollower(TestDocker.engine().events(), ledger);
        scheduler = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        return new EventFollower(TestDocker.engine().events(), ledger, scheduler);
    }

    private void close(EventFollower f) {
        if (scheduler != null) scheduler.shutdownNow(); // as LedgerKeeper.close does
        f.close();
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "on a scheduler: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void anAnchorTheEngineNoLongerHasIsAGapFromItsTime(boolean onScheduler) throws Exception {
        Instant anchorAt = Instant.now().minusSeconds(30);
        long nanos = anchorAt.getEpochSecond() * 1_000_000_000L + anchorAt.getNano();
        Files.createDirectories(state.resolve(Ledger.DIR));
        Files.write(state.resolve(Ledger.DIR).resolve(EventFollower.CURSOR),
                Json.bytes(new EventFollower.Anchor("0".repeat(64), "die", nanos)));
        try (Ledger ledger = Ledger.open(state)) {
            EventFollower f = follower(ledger, onScheduler);
            f.start();
            try {
                await().atMost(Duration.ofSeconds(20)).until(() -> f.subscriptions() > 0);
            } finally {
                close(f);
            }
            ledger.flush(Duration.ofSeconds(5));
        }
        List<LedgerEntry> lines = LedgerFiles.of(state).all();
        LedgerEntry gap = lines.stream().filter(e -> e.kind() == LedgerKind.GAP).findFirst().orElseThrow();
        assertThat(gap.at()).isEqualTo(EventFollower.time(nanos));
        assertThat(gap.end()).isAfterOrEqualTo(gap.at());
        assertThat(gap.reason()).contains("dockerd restarted").contains("256");
        assertThat(lines).anyMatch(e -> e.kind() == LedgerKind.FOLLOW && e.reason().contains("is a gap"));
    }

    @org.junit.jupiter.params.ParameterizedTest(name = "on a scheduler: {0}")
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void noAnchorBeginsTheLedgerWithNoGapAndKeepsOneSubscription(boolean onScheduler) throws Exception {
        try (Ledger ledger = Ledger.open(state)) {
            EventFollower f = follower(ledger, onScheduler);
            f.start();
            try {
                await().atMost(Duration.ofSeconds(20)).until(() -> f.subscriptions() > 0);
                Thread.sleep(2500); // a stream that ended would be subscribed again within 1.5 s
                assertThat(f.subscriptions()).isEqualTo(1);
            } finally {
                close(f);
            }
            ledger.flush(Duration.ofSeconds(5));
        }
        List<LedgerEntry> lines = LedgerFiles.of(state).all();
        assertThat(lines).noneMatch(e -> e.kind() == LedgerKind.GAP);
        assertThat(lines.stream().filter(e -> e.kind() == LedgerKind.FOLLOW)).hasSize(1);
        assertThat(lines.get(0).reason()).startsWith("the ledger begins");
    }
}
