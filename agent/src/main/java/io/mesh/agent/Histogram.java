package io.mesh.agent;

import io.mesh.wire.PromText;

import java.util.Arrays;

/**
 * A Prometheus histogram of durations in seconds: cumulative buckets, sum and count. Thread-safe.
 */
public final class Histogram {
    /** Bucket bounds in seconds, from a lock wait of 10 ms to a window of an hour. */
    public static final double[] SECONDS = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600};

    private final double[] bounds;
    private final long[] counts;
    private double sum;
    private long count;

    /** A histogram with the {@link #SECONDS} buckets. */
    public Histogram() { this(SECONDS); }

    /** @param bounds ascending upper bounds (the {@code +Inf} bucket is implicit) */
    public Histogram(double[] bounds) {
        this.bounds = bounds.clone();
        this.counts = new long[bounds.length];
    }

    /** @param seconds one observation; negative values count as 0 */
    public synchronized void observe(double seconds) {
        double v = Math.max(0, seconds);
        for (int i = 0; i < bounds.length; i++) if (v <= bounds[i]) counts[i]++;
        sum += v;
        count++;
    }

    /** @return how many observations */
    public synchronized long count() { return count; }

    /** @return the sum of the observations */
    public synchronized double sum() { return sum; }

    /**
     * Appends the {@code _bucket}, {@code _sum} and {@code _count} lines (no HELP/TYPE).
     *
     * @param out    where to write
     * @param name   metric name such as {@code mesh_apply_duration_seconds}
     * @param labels label pairs without braces such as {@code outcome="applied"}, or empty
     */
    public synchronized void render(PromText out, String name, String labels) {
        String sep = labels.isEmpty() ? "" : labels + ",";
        for (int i = 0; i < bounds.length; i++) {
            out.sample(name + "_bucket", sep + "le=\"" + PromText.number(bounds[i]) + "\"", counts[i]);
        }
        out.sample(name + "_bucket", sep + "le=\"+Inf\"", count);
        out.sample(name + "_sum", labels, sum);
        out.sample(name + "_count", labels, count);
    }

    @Override
    public synchronized String toString() { return "Histogram" + Arrays.toString(counts) + " sum=" + sum + " count=" + count; }
}
