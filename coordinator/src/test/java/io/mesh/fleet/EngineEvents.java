package io.mesh.fleet;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Event;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.httpclient5.ApacheDockerHttpClient;
import io.mesh.docker.Labels;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * One Docker engine's container events, recorded live through that engine's own API (one docker-java event stream on
 * its socket, not through mesh), for containers whose {@code mesh.module} label passes a filter. Evidence for the
 * fleet's history checker.
 *
 * <p>When the engine goes away (a dockerd restart), the stream ends: the recorder notes a {@link Gap} from that moment,
 * pings the engine every few milliseconds until it answers again ({@link Gap#apiUp()}: nothing but dockerd itself can
 * have acted on a container before then), and subscribes again with {@code since} just before the last event it had,
 * so that dockerd replays what it did while starting (its restart policies), from its in-memory buffer. What dockerd
 * did while shutting down, after the stream ended, is lost: events inside a gap before {@code apiUp} are only those
 * replayed. Events are deduplicated (id, action, time) and kept in dockerd's time order.
 *
 * <p>Beside it, a second stream records the {@code connect} and {@code disconnect} of containers on the modules' own
 * networks ({@code <module>_<key>}, decision 31): network events carry no container labels, so they come apart
 * ({@link #networkEvents()}).
 */
final class EngineEvents implements AutoCloseable {
    /**
     * A time the stream was down.
     *
     * @param from   when the stream ended (epoch nanoseconds)
     * @param apiUp  when the engine answered a ping again (epoch nanoseconds): before it, only dockerd acts
     * @param resumed when the stream was subscribed again (epoch nanoseconds)
     */
    record Gap(long from, long apiUp, long resumed) {
        @Override
        public String toString() {
            return "[" + at(from) + " .. api " + at(apiUp) + " .. events " + at(resumed) + "]";
        }
    }

    private final String host;
    private final DockerClient client;
    private final Predicate<String> modules;
    private final List<Event> events = new ArrayList<>();
    private final Set<String> seen = new HashSet<>();
    private final List<Gap> gaps = new ArrayList<>();
    private final Thread thread;
    private volatile boolean closed;
    private volatile boolean subscribed;
    private volatile ResultCallback.Adapter<Event> current;
    private volatile long lastEventNanos;
    /** True for the recorder of network events; the container events' recorder has one of these beside it. */
    private final boolean networks;
    private final EngineEvents networkRecorder;

    private EngineEvents(String host, String dockerHost, Predicate<String> modules, boolean networks) {
        this.host = host;
        this.modules = modules;
        this.networks = networks;
        this.networkRecorder = networks ? null : new EngineEvents(host, dockerHost, modules, true);
        DefaultDockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(dockerHost).build();
        // No response timeout: an event stream may be quiet for minutes.
        this.client = DockerClientImpl.getInstance(config, new ApacheDockerHttpClient.Builder().dockerHost(config.getDockerHost())
                .connectionTimeout(Duration.ofSeconds(5)).maxConnections(4).build());
        this.lastEventNanos = nanos(Instant.now()) - 2_000_000_000L;
        this.thread = new Thread(this::loop, "events-" + host);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Starts recording and waits (bounded, 20 s) until the stream is subscribed.
     *
     * @param host       host id, for messages
     * @param dockerHost the engine's socket URI
     * @param modules    which {@code mesh.module} values to keep
     * @return the recorder
     */
    static EngineEvents record(String host, String dockerHost, Predicate<String> modules) {
        EngineEvents e = new EngineEvents(host, dockerHost, modules, false);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!(e.subscribed && e.networkRecorder.subscribed) && System.nanoTime() < end) sleep(20);
        if (!e.subscribed || !e.networkRecorder.subscribed) {
            e.close();
            throw new IllegalStateException(host + ": could not subscribe to Docker's events within 20 s");
        }
        return e;
    }

    private void loop() {
        Long gapFrom = null;
        long apiUp = 0;
        while (!closed) {
            if (gapFrom != null && apiUp == 0) {
                // the engine is away: ping it often, so that the moment it answers again is known closely
                try {
                    client.pingCmd().exec();
                    apiUp = nanos(Instant.now());
                } catch (RuntimeException e) {
                    sleep(5);
                    continue;
                }
            }
            try {
                // docker-java's awaitCompletion(timeout) closes the stream when it times out: wait on our own latch
                java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(1);
                ResultCallback.Adapter<Event> cb = new ResultCallback.Adapter<>() {
                    @Override
                    public void onNext(Event e) { add(e); }

                    @Override
                    public void onError(Throwable t) {
                        ended.countDown();
                        super.onError(t);
                    }

                    @Override
                    public void onComplete() {
                        ended.countDown();
                        super.onComplete();
                    }
                };
                long since = lastEventNanos - 1_000_000_000L;
                String from = String.format("%d.%09d", since / 1_000_000_000L, since % 1_000_000_000L);
                current = networks
                        ? client.eventsCmd().withSince(from).withEventTypeFilter("network").withEventFilter("connect", "disconnect").exec(cb)
                        : client.eventsCmd().withSince(from).withEventTypeFilter("container").withLabelFilter(Labels.MODULE).exec(cb);
                if (gapFrom != null) {
                    synchronized (gaps) {
                        gaps.add(new Gap(gapFrom, apiUp, nanos(Instant.now())));
                    }
                    gapFrom = null;
                    apiUp = 0;
                }
                subscribed = true;
                while (!closed && !ended.await(500, TimeUnit.MILLISECONDS)) {
                    // streaming
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                // the engine does not answer: the gap goes on
            }
            if (!closed && gapFrom == null && subscribed) {
                gapFrom = nanos(Instant.now());
                apiUp = 0;
            }
            if (!closed) sleep(5);
        }
    }

    private void add(Event e) {
        Map<String, String> attrs = attributes(e);
        String module = networks ? moduleOfNetwork(attrs.get("name")) : attrs.get(Labels.MODULE);
        if (module == null || !modules.test(module)) return;
        String key = e.getId() + "|" + action(e) + "|" + e.getTimeNano();
        synchronized (events) {
            if (!seen.add(key)) return;
            events.add(e);
            if (e.getTimeNano() != null) lastEventNanos = Math.max(lastEventNanos, e.getTimeNano());
        }
    }

    /** @return the module of a network named {@code <module>_<key>}, or {@code null} for any other network */
    private static String moduleOfNetwork(String name) {
        int cut = name == null ? -1 : name.lastIndexOf('_');
        return cut > 0 ? name.substring(0, cut) : null;
    }

    /**
     * @return every {@code connect} and {@code disconnect} of a container on a module's network so far, in dockerd's
     *         time order; each names its container in the attribute {@code container}
     */
    List<Event> networkEvents() { return networkRecorder == null ? List.of() : networkRecorder.all(); }

    /** @return the host id */
    String host() { return host; }

    /** @return every event so far, in dockerd's time order */
    List<Event> all() {
        synchronized (events) {
            List<Event> out = new ArrayList<>(events);
            out.sort(Comparator.comparing(e -> e.getTimeNano() == null ? 0L : e.getTimeNano()));
            return out;
        }
    }

    /** @return the times the stream was down (an engine restart), in order */
    List<Gap> gaps() {
        synchronized (gaps) {
            return List.copyOf(gaps);
        }
    }

    /** @return true while the stream is subscribed (not inside a gap) */
    boolean streaming() { return subscribed && current != null; }

    /** Waits a little for events up to now to arrive (Docker delivers them asynchronously). */
    void settle() { sleep(800); }

    @Override
    public void close() {
        if (networkRecorder != null) networkRecorder.close();
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
        try {
            client.close();
        } catch (Exception ignored) {
            // closing
        }
    }

    // -----------------------------------------------------------------------------------------------------------

    static String action(Event e) { return e.getAction() != null ? e.getAction() : e.getStatus(); }

    static Map<String, String> attributes(Event e) {
        return e.getActor() == null || e.getActor().getAttributes() == null ? Map.of() : e.getActor().getAttributes();
    }

    static String name(Event e) { return attributes(e).get("name"); }

    static long time(Event e) { return e.getTimeNano() == null ? (e.getTime() == null ? 0 : e.getTime() * 1_000_000_000L) : e.getTimeNano(); }

    static long nanos(Instant i) { return i.getEpochSecond() * 1_000_000_000L + i.getNano(); }

    static String at(long nanos) { return Instant.ofEpochSecond(0, nanos).toString(); }

    /** @return one line for an event: time, action, name, short id */
    static String describe(Event e) {
        String id = e.getId() == null ? "" : e.getId().substring(0, Math.min(12, e.getId().length()));
        String extra = "";
        Map<String, String> a = attributes(e);
        if (a.containsKey("exitCode")) extra += " exitCode=" + a.get("exitCode");
        if (a.containsKey("signal")) extra += " signal=" + a.get("signal");
        if (a.containsKey("oldName")) extra += " oldName=" + a.get("oldName");
        return at(time(e)) + " " + action(e) + " " + name(e) + " " + id + extra;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
