package io.mesh.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Event;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * The engine's container events and its clock, as the ledger reads them (decision 28): a finite query between two
 * times, a live stream from a time, and {@code docker info}'s {@code SystemTime}. docker-java stays in this package.
 */
public final class EngineEvents {
    /**
     * One container event.
     *
     * @param id         container id
     * @param action     the event's action ({@code create}, {@code start}, {@code die}, ...)
     * @param timeNano   the engine's time of it, in ns since the epoch
     * @param attributes the actor's attributes: {@code name}, labels, {@code exitCode}
     */
    public record ContainerEvent(String id, String action, long timeNano, Map<String, String> attributes) {}

    /** A live stream; closing it ends it. */
    public interface Live extends AutoCloseable {
        /**
         * @param ms the longest wait, in ms
         * @return true when the stream has ended (the engine closed it or it broke)
         * @throws InterruptedException when interrupted
         */
        boolean awaitEnd(long ms) throws InterruptedException;

        /** @return why the stream ended, or {@code null} (closed by the engine, or not ended) */
        Throwable failure();

        @Override
        void close();
    }

    private final DockerClient client;

    EngineEvents(DockerClient client) { this.client = client; }

    /**
     * The engine's container events from {@code sinceNano} to {@code untilNano}, both included: what its in-memory
     * buffer still has (its last 256 events, and none from before its own start).
     *
     * @param wait the longest wait for the answer
     * @return the events, oldest first
     * @throws TimeoutException     when the engine did not finish answering within {@code wait}
     * @throws InterruptedException when interrupted
     */
    public List<ContainerEvent> between(long sinceNano, long untilNano, Duration wait) throws TimeoutException, InterruptedException {
        List<ContainerEvent> out = new ArrayList<>();
        CountDownLatch ended = new CountDownLatch(1);
        ResultCallback.Adapter<Event> cb = callback(e -> {
            synchronized (out) {
                out.add(e);
            }
        }, ended, new AtomicReference<>());
        client.eventsCmd().withSince(stamp(sinceNano)).withUntil(stamp(untilNano)).withEventTypeFilter("container").exec(cb);
        try {
            if (!ended.await(wait.toMillis(), TimeUnit.MILLISECONDS)) throw new TimeoutException("no end of the engine's events within " + wait);
        } finally {
            close(cb);
        }
        synchronized (out) {
            return List.copyOf(out);
        }
    }

    /**
     * Follows the engine's container events live from {@code sinceNano}.
     *
     * @param onEvent each event, on docker-java's thread
     * @return the stream
     */
    public Live follow(long sinceNano, Consumer<ContainerEvent> onEvent) {
        CountDownLatch ended = new CountDownLatch(1);
        AtomicReference<Throwable> failed = new AtomicReference<>();
        ResultCallback.Adapter<Event> cb = callback(onEvent, ended, failed);
        client.eventsCmd().withSince(stamp(sinceNano)).withEventTypeFilter("container").exec(cb);
        return new Live() {
            // Our own latch: docker-java's awaitCompletion(timeout) closes the stream when it times out (3.7.1).
            @Override
            public boolean awaitEnd(long ms) throws InterruptedException { return ended.await(ms, TimeUnit.MILLISECONDS); }

            @Override
            public Throwable failure() { return failed.get(); }

            @Override
            public void close() { EngineEvents.close(cb); }
        };
    }

    /** @return the engine's time now ({@code docker info}'s {@code SystemTime}), or {@code null} when it gives none */
    public Instant engineTime() {
        String t = client.infoCmd().exec().getSystemTime();
        return t == null || t.isBlank() ? null : OffsetDateTime.parse(t).toInstant();
    }

    private static ResultCallback.Adapter<Event> callback(Consumer<ContainerEvent> onEvent, CountDownLatch ended, AtomicReference<Throwable> failed) {
        return new ResultCallback.Adapter<>() {
            @Override
            public void onNext(Event e) {
                String action = e.getAction() != null ? e.getAction() : e.getStatus();
                if (e.getId() == null || action == null || e.getTimeNano() == null) return;
                Map<String, String> attrs = e.getActor() == null || e.getActor().getAttributes() == null ? Map.of() : e.getActor().getAttributes();
                onEvent.accept(new ContainerEvent(e.getId(), action, e.getTimeNano(), attrs));
            }

            @Override
            public void onError(Throwable t) {
                failed.compareAndSet(null, t);
                ended.countDown();
                super.onError(t);
            }

            @Override
            public void onComplete() {
                ended.countDown();
                super.onComplete();
            }
        };
    }

    private static void close(ResultCallback.Adapter<Event> cb) {
        try {
            cb.close();
        } catch (IOException ignored) {
            // the stream is gone either way
        }
    }

    /** @return Docker's {@code since}/{@code until} form of a time: seconds.nanoseconds */
    static String stamp(long nanos) {
        return (nanos / 1_000_000_000L) + "." + String.format("%09d", nanos % 1_000_000_000L);
    }
}
