package io.mesh.ledger;

import io.mesh.wire.LedgerEntry;
import io.mesh.wire.ProcessRef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ledger's clock and its written-ahead lines (decision 28): lines are stamped by the engine's clock when it is
 * another than this host's, and a call's line is on disk before {@link Ledger#writeAhead} returns.
 */
class LedgerClockTest {
    @TempDir
    Path state;

    @Test
    void anEngineFiveMinutesAheadStampsTheLinesFiveMinutesAhead() {
        try (Ledger l = Ledger.open(state).engineClock(() -> Instant.now().plus(Duration.ofMinutes(5)))) {
            Duration off = Duration.between(Instant.now(), l.now());
            assertThat(off).isBetween(Duration.ofMinutes(5).minusSeconds(2), Duration.ofMinutes(5).plusSeconds(2));
        }
    }

    @Test
    void aColdFirstReadingIsReadAgain() {
        // a cold process's first call (its connection, its classes) is slower than the bound; the next one is not
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        try (Ledger l = Ledger.open(state).engineClock(() -> {
            if (calls.getAndIncrement() == 0) sleep(400);
            return Instant.now().plus(Duration.ofMinutes(5));
        })) {
            assertThat(calls.get()).isEqualTo(2);
            assertThat(Duration.between(Instant.now(), l.now())).isBetween(Duration.ofMinutes(5).minusSeconds(2), Duration.ofMinutes(5).plusSeconds(2));
        }
    }

    @Test
    void anEngineThatAnswersOnlyLaterIsReadWithinSecondsNotAMinute() throws Exception {
        // an agent started while its engine restarts: no reading at start, the writer reads again every second
        java.util.concurrent.atomic.AtomicBoolean up = new java.util.concurrent.atomic.AtomicBoolean();
        try (Ledger l = Ledger.open(state).engineClock(() -> {
            if (!up.get()) throw new IllegalStateException("dockerd restarting");
            return Instant.now().plus(Duration.ofMinutes(5));
        })) {
            assertThat(Duration.between(Instant.now(), l.now()).abs()).isLessThan(Duration.ofMillis(100));
            up.set(true);
            long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (Duration.between(Instant.now(), l.now()).compareTo(Duration.ofMinutes(4)) < 0 && System.nanoTime() < until) Thread.sleep(50);
            assertThat(Duration.between(Instant.now(), l.now())).isGreaterThan(Duration.ofMinutes(4));
        }
    }

    @Test
    void anEngineThatHangsHoldsNeitherTheStartNorTheLines() {
        long t0 = System.nanoTime();
        try (Ledger l = Ledger.open(state).engineClock(() -> {
            sleep(60_000); // dockerd stopped (SIGSTOP): the call never answers
            return Instant.now();
        })) {
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Ledger.CLOCK_FIRST.plusSeconds(1));
            l.write(LedgerEntry.event(Instant.now(), "m", "m-app", "id", "start", null, null));
            assertThat(l.flush(Duration.ofSeconds(3))).as("lines are written while the engine's clock hangs").isTrue();
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void theSameClockReadTwiceIsNotAnOffset() {
        try (Ledger l = Ledger.open(state).engineClock(() -> Instant.now().plusMillis(120))) {
            Instant before = Instant.now();
            Instant stamp = l.now();
            assertThat(Duration.between(before, stamp)).isLessThan(Duration.ofMillis(100));
        }
    }

    @Test
    void aReadingThatTookLongerThanItsBoundIsNotTaken() {
        // a process stopped for a second mid-reading would otherwise take half the pause for the engine's offset
        try (Ledger l = Ledger.open(state).engineClock(() -> {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return Instant.now();
        })) {
            assertThat(Duration.between(Instant.now(), l.now()).abs()).isLessThan(Duration.ofMillis(100));
        }
    }

    @Test
    void anEngineThatDoesNotAnswerLeavesThisHostsClock() {
        try (Ledger l = Ledger.open(state).engineClock(() -> { throw new IllegalStateException("dockerd down"); })) {
            assertThat(Duration.between(Instant.now(), l.now()).abs()).isLessThan(Duration.ofMillis(100));
        }
    }

    @Test
    void aLineWrittenAheadIsOnDiskWhenWriteAheadReturns() throws Exception {
        try (Ledger l = Ledger.open(state)) {
            for (int i = 0; i < 5; i++) {
                LedgerEntry e = LedgerEntry.call(l.now(), "store", "store-registry", "id" + i, "stop", "push-0000000001", null, null,
                        new ProcessRef(1, "test"));
                long t0 = System.nanoTime();
                boolean onDisk = l.writeAhead(e);
                long ms = (System.nanoTime() - t0) / 1_000_000;
                // not a timing assertion: a batch's 200 ms wait would show here as every call's cost
                System.out.println("writeAhead " + i + ": " + ms + " ms, on disk " + onDisk);
                if (!onDisk) assertThat(l.flush(Duration.ofSeconds(10))).as("a slow disk: the line is on disk later").isTrue();
                assertThat(Files.readString(l.currentFile())).contains("\"containerId\":\"id" + i + "\"");
            }
        }
    }
}
