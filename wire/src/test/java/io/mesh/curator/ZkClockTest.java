package io.mesh.curator;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ZkClock} learns ZooKeeper's time only from quick writes. The offsets here stay within a few milliseconds of
 * the truth (this machine's ZooKeeper is this machine's clock), so other tests of this JVM are not thrown off.
 */
class ZkClockTest {
    @Test
    void aSlowWriteTeachesNothingAndAQuickOneDoes() {
        long now = System.currentTimeMillis();
        ZkClock.observe(now + 3, now - 5, now + 5);
        assertThat(ZkClock.offsetMillis()).isEqualTo(3);

        // A write that took 46 s (the quorum lost, or this process paused in it): its middle is 23 s from its ctime.
        ZkClock.observe(now + 1_000, now - 46_000, now);
        assertThat(ZkClock.offsetMillis()).as("kept").isEqualTo(3);

        ZkClock.observe(now + 1, now - 400, now + 400);
        assertThat(ZkClock.offsetMillis()).as("a write within the bound").isEqualTo(1);
        ZkClock.observe(now, now, now);
        assertThat(ZkClock.offsetMillis()).isZero();
    }

    /** A host clock minutes off with only slow writes so far: the slow write's estimate beats none, until a quicker one. */
    @Test
    void theFirstWriteTeachesEvenWhenSlowAndOnlyAQuickerOneReplacesIt() {
        ZkClock.forget();
        long now = System.currentTimeMillis();
        ZkClock.observe(now + 300_010, now - 3_000, now + 3_000);
        assertThat(ZkClock.offsetMillis()).isEqualTo(300_010);
        ZkClock.observe(now + 300_000 + 20_000, now - 40_000, now);
        assertThat(ZkClock.offsetMillis()).as("a slower write does not replace it").isEqualTo(300_010);
        ZkClock.observe(now + 2, now - 2, now + 2);
        assertThat(ZkClock.offsetMillis()).as("a quicker one does").isEqualTo(2);
        ZkClock.observe(now, now, now);
    }

    /**
     * The fleet history's case: a write of 888 ms whose ctime was stamped as it was answered (ZooKeeper's clock is this
     * host's). The estimate reads 444 ms ahead, and a freeze judged by it ended that early; {@link ZkClock#earliest()}
     * is never ahead of ZooKeeper's clock, so an end judged by it comes late, never early.
     */
    @Test
    void anEndIsJudgedByTheEarliestZooKeepersClockMayRead() {
        long now = System.currentTimeMillis();
        ZkClock.observe(now, now - 888, now);
        assertThat(ZkClock.offsetMillis()).as("the estimate, half a round trip ahead").isEqualTo(444);
        long before = System.currentTimeMillis();
        java.time.Instant earliest = ZkClock.earliest();
        long after = System.currentTimeMillis();
        assertThat(earliest.toEpochMilli()).as("never ahead of ZooKeeper's clock").isLessThanOrEqualTo(after);
        assertThat(earliest.toEpochMilli()).as("late by no more than the error").isGreaterThanOrEqualTo(before - 1);
        assertThat(ZkClock.earliestClock().instant()).isBeforeOrEqualTo(ZkClock.now().minusMillis(443));

        ZkClock.forget();
        assertThat(Math.abs(ZkClock.earliest().toEpochMilli() - System.currentTimeMillis())).as("before any write: the host's clock").isLessThan(50);
        ZkClock.observe(now, now, now);
    }
}
