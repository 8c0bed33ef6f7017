package io.mesh.apply;

import io.mesh.docker.PullLayers;
import io.mesh.docker.RunState;
import io.mesh.manifest.ReadySpec;

import io.mesh.docker.IdleThreads;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * What one apply is doing while it is not done, as one line (docs/decisions/0032-apply-progress.md): the pulls,
 * readiness waits and lock or fence waits under way, by key, joined. Rate-limited: nothing is written in the apply's
 * first {@link #GRACE} (most applies are done by then), then at most one write per {@link #INTERVAL}, and only when
 * the line changed; a pull's layer events or a readiness poll only update memory, and a line not due yet is written
 * when it is, if it still stands. Thread-safe: the containers of one
 * apply are changed at once, and a pull tells its layers on docker-java's callback thread.
 */
final class ApplyProgress {
    /** An apply done sooner writes no progress at all. */
    static final Duration GRACE = Duration.ofSeconds(1);
    /** At most one write per module in this long. */
    static final Duration INTERVAL = Duration.ofSeconds(1);
    /** At most this many activities are named in the line; the rest are counted. */
    static final int SHOWN = 2;

    /** Where the line goes: a write and a clear that never block the apply ({@link ProgressNode}). */
    interface Sink {
        /** @param detail the line, never empty */
        void write(String detail);

        /** Removes what was written. */
        void clear();
    }

    /** Progress that goes nowhere and keeps nothing: an execution that is not an {@link Applier}'s (a plan's, a test's). */
    static final ApplyProgress NONE = new ApplyProgress(new Sink() {
        @Override public void write(String detail) {}
        @Override public void clear() {}
    }, System::nanoTime);

    private final Sink sink;
    private final LongSupplier nanos;
    private final long begun;
    private final boolean writesLater;
    private final Map<String, String> doing = new LinkedHashMap<>();
    private long lastWrite;
    private String written;
    /** A write waiting until it is due ({@link #later}), or {@code null}. */
    private ScheduledFuture<?> pending;

    /**
     * @param sink  where the line goes
     * @param nanos a monotonic clock in nanoseconds ({@code System::nanoTime}; a test's own)
     */
    ApplyProgress(Sink sink, LongSupplier nanos) {
        this(sink, nanos, false);
    }

    /**
     * @param sink        where the line goes
     * @param nanos       a monotonic clock in nanoseconds
     * @param writesLater true: a line not due yet is written when it is due ({@link #later}); needs {@code nanos} to be
     *                    {@code System::nanoTime}, the clock the writes are scheduled by
     */
    ApplyProgress(Sink sink, LongSupplier nanos, boolean writesLater) {
        this.sink = sink;
        this.nanos = nanos;
        this.begun = nanos.getAsLong();
        this.writesLater = writesLater;
    }

    /**
     * Sets what the apply is doing under {@code key} (a container, an image, {@code lock}), and writes the line when a
     * write is due.
     *
     * @param key  what it is about; one activity per key
     * @param text such as {@code pulling busybox:1.36 (2 of 3 layers)}
     */
    synchronized void doing(String key, String text) {
        if (this == NONE) return; // shared by every execution that reports nowhere: it keeps nothing
        doing.remove(key); // the newest activity last, where the line keeps it when it is cut
        doing.put(key, text);
        flush();
    }

    /** @param key an activity that ended; the line drops it at its next write */
    synchronized void done(String key) {
        doing.remove(key);
    }

    /**
     * @return true when a changed line would be written now: callers that must read something to say it (who holds
     *         the lock) ask first
     */
    synchronized boolean due() {
        long now = nanos.getAsLong();
        return now - begun >= GRACE.toNanos() && (written == null || now - lastWrite >= INTERVAL.toNanos());
    }

    /** @return the line as it would be written now; empty when nothing is under way */
    synchronized String line() {
        StringBuilder b = new StringBuilder();
        int n = 0;
        for (String text : doing.values()) {
            if (n++ == SHOWN) break;
            if (b.length() > 0) b.append("; ");
            b.append(text);
        }
        if (doing.size() > SHOWN) b.append("; and ").append(doing.size() - SHOWN).append(" more");
        return b.toString();
    }

    /** Removes the written line, once the apply is done (its report written, or given up); nothing when none was. */
    synchronized void clear() {
        if (pending != null) pending.cancel(false);
        pending = null;
        doing.clear();
        if (written != null) sink.clear();
        written = null;
    }

    private void flush() {
        String line = line();
        if (line.isEmpty() || line.equals(written)) return;
        if (!due()) {
            if (writesLater) later();
            return;
        }
        sink.write(line);
        written = line;
        lastWrite = nanos.getAsLong();
    }

    /**
     * Writes the line once it is due, when nothing tells this progress again before then: an activity begun in the
     * apply's first second that blocks with no event of its own (a stop waiting out its stop-timeout, a pull of an image
     * dockerd sends no layers of) would otherwise never be said.
     */
    private void later() {
        if (pending != null && !pending.isDone()) return;
        long now = nanos.getAsLong();
        long dueAt = Math.max(begun + GRACE.toNanos(), written == null ? 0 : lastWrite + INTERVAL.toNanos());
        pending = LATER.schedule(() -> {
            synchronized (this) {
                pending = null;
                flush();
            }
        }, Math.max(1, dueAt - now), TimeUnit.NANOSECONDS);
    }

    /**
     * One thread for every apply's later writes, only while one is waiting (it ends {@link IdleThreads#IDLE} after the
     * last: decision 23).
     */
    private static final ScheduledThreadPoolExecutor LATER = IdleThreads.timer("apply-progress");

    /** @return {@code pulling IMAGE (n of m layers)}; {@code pulling IMAGE} before dockerd named a layer */
    static String pulling(String image, PullLayers layers) {
        int total = layers == null ? 0 : layers.total();
        return "pulling " + image + (total == 0 ? "" : " (" + layers.done() + " of " + total + " layers)");
    }

    /**
     * @param container the container's Docker name
     * @param s         its last inspect
     * @param ready     its {@code ready}
     * @return {@code waiting for C: health starting, 2 failed checks}; without a healthcheck
     *         {@code waiting for C: running, ready after min-healthy 10s}
     */
    static String waitingFor(String container, RunState s, ReadySpec ready) {
        String what;
        if (RunState.NO_HEALTH.equals(s.health())) {
            what = s.status() + ", ready after min-healthy " + ready.minHealthyTime().toSeconds() + "s";
        } else if ("healthy".equals(s.health())) {
            // healthy already: what is left is the ready rule's time, not a check
            what = "healthy, ready once healthy for " + ready.minHealthyTime().toSeconds() + "s (min-healthy)";
        } else {
            what = "health " + s.health() + (s.failingStreak() <= 0 ? ""
                    : ", " + s.failingStreak() + " failed check" + (s.failingStreak() == 1 ? "" : "s"));
        }
        return "waiting for " + container + ": " + what;
    }

    /**
     * @param container    the container's Docker name
     * @param graceSeconds its stop timeout: how long Docker waits for it to exit before it kills it
     * @return {@code stopping C (it has up to Ns to exit)}
     */
    static String stopping(String container, int graceSeconds) {
        return "stopping " + container + " (it has up to " + graceSeconds + "s to exit)";
    }

    /** @param holder who holds the module lock (a window, a process), or {@code null} when unknown */
    static String lock(String holder) {
        return "waiting for the module lock" + (holder == null || holder.isBlank() ? "" : " (held by " + holder + ")");
    }

    /** @param holder who holds the host fence, or {@code null} when unknown */
    static String fence(String holder) {
        return "waiting for the fence" + (holder == null || holder.isBlank() ? "" : " (held by " + holder + ")");
    }
}
