package io.mesh.testing;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Event;
import com.github.dockerjava.api.model.HostConfig;
import io.mesh.docker.Labels;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.awaitility.Awaitility.await;

/**
 * Records Docker's container events live, from the moment it is made, for containers whose {@code mesh.module}
 * label passes a filter. Unlike {@link TestDocker#events}, which asks dockerd's in-memory buffer afterwards (bounded,
 * and emptied when dockerd restarts), this keeps every event while it runs, and subscribes again after dockerd
 * restarts. Events are deduplicated and kept in dockerd's time order.
 */
public final class DockerEvents implements AutoCloseable {
    /** The {@code mesh.module} label of the containers {@link #settle()} makes: no module's, and never recorded. */
    private static final String MARKER = "mesh-events-marker-";
    private final Predicate<String> modules;
    private final Set<String> markersSeen = ConcurrentHashMap.newKeySet();
    private final List<Event> events = new ArrayList<>();
    private final Set<String> seen = new HashSet<>();
    private final Thread thread;
    private volatile boolean closed;
    private volatile ResultCallback.Adapter<Event> current;
    private volatile long lastSecond;

    /** How long an event is kept, or null for the recorder's whole life. */
    private final Duration retention;

    private DockerEvents(Predicate<String> modules, Duration retention) {
        this.modules = modules;
        this.retention = retention;
        this.lastSecond = Instant.now().getEpochSecond() - 1;
        this.thread = new Thread(this::loop, "docker-events");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Starts recording.
     *
     * @param modules which {@code mesh.module} label values to keep
     * @return the recorder; close it when done
     */
    public static DockerEvents record(Predicate<String> modules) {
        return record(modules, null);
    }

    /**
     * Starts recording, keeping each event for {@code retention} only: a recorder that lives as long as the JVM.
     *
     * @param modules   which {@code mesh.module} label values to keep
     * @param retention how long an event is kept after dockerd's time of it
     * @return the recorder
     */
    public static DockerEvents record(Predicate<String> modules, Duration retention) {
        DockerEvents d = new DockerEvents(modules, retention);
        d.awaitSubscribed();
        return d;
    }

    /** @return a recorder of one module's events */
    public static DockerEvents record(String module) { return record(module::equals); }

    private volatile boolean subscribed;

    private void awaitSubscribed() {
        await("a subscription to Docker's events").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                .until(() -> subscribed);
    }

    private void loop() {
        while (!closed) {
            try {
                java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(1);
                ResultCallback.Adapter<Event> cb = new ResultCallback.Adapter<>() {
                    @Override
                    public void onNext(Event e) { add(e); }

                    @Override
                    public void onComplete() {
                        ended.countDown();
                        super.onComplete();
                    }

                    @Override
                    public void onError(Throwable t) {
                        ended.countDown();
                        super.onError(t);
                    }
                };
                current = TestDocker.engine().client().eventsCmd()
                        .withSince(String.valueOf(lastSecond))
                        .withEventTypeFilter("container")
                        .withLabelFilter(Labels.MODULE)
                        .exec(cb);
                subscribed = true;
                // Our own latch, not cb.awaitCompletion(timeout): docker-java closes the stream when that times out,
                // and each new subscription would lean on dockerd's 256-event buffer again.
                while (!closed && !ended.await(500, TimeUnit.MILLISECONDS)) {
                    // streaming
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                // dockerd restarting: subscribe again below
            }
            if (!closed) sleep(250);
        }
    }

    private void add(Event e) {
        Map<String, String> attrs = e.getActor() == null || e.getActor().getAttributes() == null ? Map.of() : e.getActor().getAttributes();
        String module = attrs.get(Labels.MODULE);
        if (module != null && module.startsWith(MARKER)) markersSeen.add(module);
        if (module == null || !modules.test(module)) return;
        String key = e.getId() + "|" + TestDocker.action(e) + "|" + e.getTimeNano();
        synchronized (events) {
            if (!seen.add(key)) return;
            events.add(e);
            if (retention != null && events.size() % 2048 == 0) prune();
            if (e.getTime() != null) lastSecond = Math.max(lastSecond, e.getTime() - 1);
        }
    }

    /** Drops events older than the retention; called with {@link #events} locked. */
    private void prune() {
        long oldest = (Instant.now().getEpochSecond() - retention.toSeconds()) * 1_000_000_000L;
        events.removeIf(e -> e.getTimeNano() != null && e.getTimeNano() < oldest);
        seen.clear();
        for (Event e : events) seen.add(e.getId() + "|" + TestDocker.action(e) + "|" + e.getTimeNano());
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** @return every event so far, in dockerd's time order */
    public List<Event> all() {
        synchronized (events) {
            List<Event> out = new ArrayList<>(events);
            out.sort(Comparator.comparing(e -> e.getTimeNano() == null ? 0L : e.getTimeNano()));
            return out;
        }
    }

    /**
     * @param from start (inclusive)
     * @return events at or after {@code from}
     */
    public List<Event> since(Instant from) {
        long ns = from.getEpochSecond() * 1_000_000_000L + from.getNano();
        return all().stream().filter(e -> e.getTimeNano() != null && e.getTimeNano() >= ns).toList();
    }

    /**
     * Waits until every event up to now has arrived (Docker delivers them asynchronously, in order): makes a marker
     * container (created, never started, then removed) and waits, bounded, until its {@code create} event has come.
     */
    public void settle() {
        String marker = MARKER + UUID.randomUUID();
        DockerClient docker = TestDocker.engine().client();
        String id = docker.createContainerCmd(TestDocker.BUSYBOX).withCmd("true").withLabels(Map.of(Labels.MODULE, marker))
                .withHostConfig(HostConfig.newHostConfig().withNetworkMode("none")).exec().getId();
        try {
            await("Docker's event of " + marker).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10))
                    .until(() -> markersSeen.contains(marker));
        } finally {
            docker.removeContainerCmd(id).withForce(true).exec();
        }
    }

    /**
     * @param events events
     * @return one line per event: time, action, name, short id, for failure messages
     */
    public static String describe(List<Event> events) {
        StringBuilder b = new StringBuilder();
        for (Event e : events) {
            b.append(Instant.ofEpochSecond(0, e.getTimeNano() == null ? 0 : e.getTimeNano())).append(' ')
                    .append(TestDocker.action(e)).append(' ').append(TestDocker.name(e)).append(' ')
                    .append(e.getId() == null ? "" : e.getId().substring(0, Math.min(12, e.getId().length()))).append('\n');
        }
        return b.toString();
    }

    /** Stops recording. */
    @Override
    public void close() {
        closed = true;
        ResultCallback.Adapter<Event> cb = current;
        if (cb != null) {
            try {
                cb.close();
            } catch (Exception ignored) {
                // closing
            }
        }
        thread.interrupt();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
