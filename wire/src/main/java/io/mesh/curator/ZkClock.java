package io.mesh.curator;

import io.mesh.wire.Times;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/**
 * ZooKeeper's clock as this process estimates it: the time every mesh process judges a hold's or a freeze's end by,
 * and the coordinator writes their {@code since} and {@code until} with (SPEC.md "Operator holds": durations are
 * measured from the node's ZooKeeper {@code ctime}, never from one host's clock). A host whose clock is minutes off
 * would otherwise end a freeze or a hold minutes early, or late.
 *
 * <p>The estimate is this host's clock plus an offset learned from the {@code ctime} or {@code mtime} of a node this
 * process wrote, taken as the middle of the local times before and after the write (its error is at most half the
 * round trip). A write that took longer than {@link #MAX_ROUND_TRIP} replaces only an estimate from a slower one: one
 * made while the quorum was lost, or while this process was paused, could put the estimate tens of seconds off, and a
 * hold would then end that much early (the fleet history saw 19 to 23 s); yet as the first, it is still nearer than a
 * host clock minutes off. Before any is taken, the offset is zero: the host's own clock.
 *
 * <p>An end (a freeze's or an operator hold's {@code until}) is judged by {@link #earliest()}, the estimate less its
 * error: it comes a little late, never early. Judged by the estimate, an agent whose offset came from a slow write
 * thawed a freeze 444 ms before its {@code until} and applied a push in that time (failure model row 109).
 */
public final class ZkClock {
    private static final Logger log = LoggerFactory.getLogger(ZkClock.class);
    /** ZooKeeper's time minus this host's, in milliseconds, as last seen. */
    private static final AtomicLong OFFSET_MS = new AtomicLong();
    /** The round trip of the write the offset in force came from, in milliseconds. */
    private static final AtomicLong ROUND_TRIP_MS = new AtomicLong(Long.MAX_VALUE);
    /** {@link System#nanoTime()} of the last observation; 0 before the first. */
    private static volatile long observedAt;
    /** The longest write whose times always teach the offset (its error is at most half of this); a slower one only replaces a slower one. */
    public static final Duration MAX_ROUND_TRIP = Duration.ofSeconds(1);
    /** An offset this large is said once in the log: this host's clock is off. */
    private static final long SAY_OFF_MS = 2_000;

    private ZkClock() {}

    /** @return ZooKeeper's time as this process estimates it, to the millisecond */
    public static Instant now() {
        return Times.now().plusMillis(OFFSET_MS.get());
    }

    /**
     * @return the earliest ZooKeeper's clock may read now, to the millisecond: {@link #now()} less half the round trip
     *         of the write the offset came from (the host's own clock before any)
     */
    public static synchronized Instant earliest() { // the offset and its round trip as one observation set them
        long roundTrip = ROUND_TRIP_MS.get();
        return now().minusMillis(roundTrip == Long.MAX_VALUE ? 0 : (roundTrip + 1) / 2);
    }

    /**
     * @return the latest ZooKeeper's clock may read now, to the millisecond: {@link #now()} plus half the round trip of
     *         the write the offset came from (the host's own clock before any): the clock every start is judged by
     *         (decision 27), so that a recurring freeze is obeyed no later than it begins
     */
    public static synchronized Instant latest() {
        long roundTrip = ROUND_TRIP_MS.get();
        return now().plusMillis(roundTrip == Long.MAX_VALUE ? 0 : (roundTrip + 1) / 2);
    }

    /** @return a {@link Clock} reading {@link #latest()}: the clock every start is judged by */
    public static Clock latestClock() { return reading(ZkClock::latest); }

    /** @return a {@link Clock} reading {@link #earliest()}: the clock every end is judged by */
    public static Clock earliestClock() { return reading(ZkClock::earliest); }

    /** @return a {@link Clock} reading {@link #now()} */
    public static Clock clock() { return reading(ZkClock::now); }

    private static Clock reading(java.util.function.Supplier<Instant> time) {
        return new Clock() {
            @Override public ZoneId getZone() { return ZoneOffset.UTC; }
            @Override public Clock withZone(ZoneId zone) { return this; }
            @Override public Instant instant() { return time.get(); }
        };
    }

    /** @return ZooKeeper's time minus this host's, in milliseconds, as last seen (0 before any) */
    public static long offsetMillis() { return OFFSET_MS.get(); }

    /**
     * @param maxAge how old an observation may be
     * @return true when none was made within {@code maxAge}
     */
    public static boolean stale(Duration maxAge) {
        long at = observedAt;
        return at == 0 || System.nanoTime() - at > maxAge.toNanos();
    }

    /**
     * Learns the offset from a write of this process.
     *
     * @param zkMillis     the node's {@code ctime} or {@code mtime} the write set (ZooKeeper's leader's clock)
     * @param localBefore  this host's clock before the write was sent, epoch ms
     * @param localAfter   this host's clock once it was answered, epoch ms (a write longer than {@link #MAX_ROUND_TRIP}
     *                     replaces only an estimate from a slower one)
     */
    public static synchronized void observe(long zkMillis, long localBefore, long localAfter) {
        long roundTrip = localAfter - localBefore;
        if (zkMillis <= 0 || roundTrip < 0) return;
        if (roundTrip > MAX_ROUND_TRIP.toMillis() && roundTrip > ROUND_TRIP_MS.get()) return;
        ROUND_TRIP_MS.set(roundTrip);
        long offset = zkMillis - (localBefore + roundTrip / 2);
        long was = OFFSET_MS.getAndSet(offset);
        boolean first = observedAt == 0;
        observedAt = System.nanoTime();
        if (Math.abs(offset) >= SAY_OFF_MS && (first || Math.abs(offset - was) >= SAY_OFF_MS)) {
            log.warn("this host's clock is {} ms {} ZooKeeper's: holds and freezes are judged by ZooKeeper's (fix the host's time sync)",
                    Math.abs(offset), offset > 0 ? "behind" : "ahead of");
        }
    }

    /** Forgets every observation (tests of this package: the estimate is this JVM's). */
    static synchronized void forget() {
        OFFSET_MS.set(0);
        ROUND_TRIP_MS.set(Long.MAX_VALUE);
        observedAt = 0;
    }

    /**
     * @param created the stat of a node this process created
     * @param localBefore this host's clock before the create, epoch ms
     */
    public static void observeCreate(Stat created, long localBefore) {
        if (created != null) observe(created.getCtime(), localBefore, System.currentTimeMillis());
    }
}
