package io.mesh.ledger;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Event;
import io.mesh.docker.Labels;
import io.mesh.wire.DurableFile;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Follows the engine's container events into the ledger (decision 28, "Events are followed with an anchor"). Every
 * container's event, mesh's or not, moves the anchor ({@code ledger/cursor}); only those of containers labelled
 * {@code mesh.module} are written. At start and after a broken stream it asks the engine for the events from the anchor
 * to now (a finite query), and then follows live from that now: when the anchor is not in the answer, dockerd restarted
 * or its 256-event buffer rolled over, and the span from the anchor to the first event it still had is a {@code gap}.
 */
public final class EventFollower implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EventFollower.class);
    /** The anchor file under the ledger's directory. */
    public static final String CURSOR = "cursor";
    /** The anchor is written at most this often (and at close): a few events at most are replayed twice, deduplicated. */
    static final Duration CURSOR_EVERY = Duration.ofSeconds(1);
    /** How long the finite replay query may take. */
    static final Duration REPLAY_WAIT = Duration.ofSeconds(30);
    private static final int SEEN = 4096;

    /**
     * The last event seen, of any container.
     *
     * @param id       container id
     * @param action   the event's action
     * @param timeNano the engine's time of it, in ns since the epoch
     */
    public record Anchor(String id, String action, long timeNano) {
        boolean is(Event e) {
            return id.equals(e.getId()) && action.equals(EventFollower.action(e)) && e.getTimeNano() != null && e.getTimeNano() == timeNano;
        }
    }

    private final DockerClient client;
    private final Ledger ledger;
    private final Path cursor;
    private final Thread thread;
    private final Map<String, Boolean> seen = new LinkedHashMap<>(SEEN, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) { return size() > SEEN; }
    };
    private volatile Anchor anchor;
    private volatile boolean dirty;
    private volatile long lastPersist;
    private volatile boolean closed;
    private volatile ResultCallback.Adapter<Event> live;
    private volatile int subscriptions;

    /**
     * @param client the engine's docker-java client (no response timeout: the stream may be quiet for long)
     * @param ledger this process's ledger
     */
    public EventFollower(DockerClient client, Ledger ledger) {
        this.client = client;
        this.ledger = ledger;
        this.cursor = ledger.dir().resolve(CURSOR);
        this.anchor = readCursor(cursor);
        this.thread = new Thread(this::loop, "mesh-ledger-events");
        thread.setDaemon(true);
    }

    /** Starts following, on a thread of its own. */
    public void start() { thread.start(); }

    /** @return how many times it subscribed (tests) */
    public int subscriptions() { return subscriptions; }

    /** @return the anchor now, or {@code null} */
    public Anchor anchor() { return anchor; }

    private void loop() {
        while (!closed) {
            try {
                follow();
            } catch (InterruptedException e) {
                if (closed) break;
            } catch (RuntimeException e) {
                log.warn("ledger: the engine's events cannot be followed now ({}); trying again", e.toString());
            }
            persist(true);
            if (!closed) sleep(1000);
        }
        persist(true);
    }

    /** One subscription: the replay from the anchor, then live until the stream breaks or {@link #close}. */
    private void follow() throws InterruptedException {
        Instant now = ledger.now(); // the engine's clock: an until ahead of it would hold the replay open until then
        String until = stamp(now.getEpochSecond() * 1_000_000_000L + now.getNano());
        Anchor a = anchor;
        if (a == null) {
            ledger.write(LedgerEntry.follow(now, "the ledger begins: no anchor in " + cursor + "; events from now on"));
        } else {
            List<Event> replay = new ArrayList<>();
            ResultCallback.Adapter<Event> cb = new ResultCallback.Adapter<>() {
                @Override
                public void onNext(Event e) {
                    synchronized (replay) {
                        replay.add(e);
                    }
                }
            };
            client.eventsCmd().withSince(stamp(a.timeNano())).withUntil(until).withEventTypeFilter("container").exec(cb);
            if (!cb.awaitCompletion(REPLAY_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                try {
                    cb.close();
                } catch (IOException ignored) {
                    // closing a stream that did not end
                }
                throw new IllegalStateException("the engine did not answer the events since " + time(a.timeNano()) + " within " + REPLAY_WAIT);
            }
            List<Event> got;
            synchronized (replay) {
                got = new ArrayList<>(replay);
            }
            boolean found = got.stream().anyMatch(a::is);
            Instant anchorAt = time(a.timeNano());
            if (!found) {
                Instant first = got.isEmpty() || got.get(0).getTimeNano() == null ? now : time(got.get(0).getTimeNano());
                if (first.isBefore(anchorAt)) first = anchorAt;
                ledger.write(LedgerEntry.gap(anchorAt, first, "the engine no longer had the last event the ledger saw ("
                        + a.action() + " of " + a.id() + " at " + anchorAt + "): dockerd restarted, or more than its 256 buffered events"
                        + " came, while no agent followed them"));
            }
            ledger.write(LedgerEntry.follow(now, found ? "the engine's buffer reached back to the anchor at " + anchorAt
                    + ": no event was missed (" + got.size() + " replayed)" : "from " + (got.isEmpty() ? "now" : "the engine's oldest event")
                    + "; the span since the anchor at " + anchorAt + " is a gap"));
            for (Event e : got) handle(e);
        }
        // Its own latch: docker-java's awaitCompletion(timeout) closes the stream when it times out (3.7.1).
        java.util.concurrent.CountDownLatch ended = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
        ResultCallback.Adapter<Event> cb = new ResultCallback.Adapter<>() {
            @Override
            public void onNext(Event e) { handle(e); }

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
        live = cb;
        client.eventsCmd().withSince(until).withEventTypeFilter("container").exec(cb);
        subscriptions++;
        try {
            while (!closed && !ended.await(500, TimeUnit.MILLISECONDS)) persist(false);
            if (!closed) {
                Throwable t = failed.get();
                log.warn("ledger: the engine's event stream ended ({}); following again from the anchor", t == null ? "closed by the engine" : t.toString());
            }
        } finally {
            live = null;
            try {
                cb.close();
            } catch (IOException ignored) {
                // the stream is gone either way
            }
        }
    }

    private void handle(Event e) {
        try {
            String action = action(e);
            if (e.getId() == null || action == null || e.getTimeNano() == null) return;
            synchronized (seen) {
                if (seen.put(e.getId() + "|" + action + "|" + e.getTimeNano(), Boolean.TRUE) != null) return;
            }
            Anchor a = anchor;
            if (a == null || e.getTimeNano() >= a.timeNano()) {
                anchor = new Anchor(e.getId(), action, e.getTimeNano());
                dirty = true;
            }
            Map<String, String> attrs = e.getActor() == null || e.getActor().getAttributes() == null ? Map.of() : e.getActor().getAttributes();
            String module = attrs.get(Labels.MODULE);
            // exec and health events are no touch of a container (AuditChecker.TOUCH) and come every few seconds
            if (module == null || action.startsWith("exec_") || action.startsWith("health_status")) return;
            ledger.write(LedgerEntry.event(time(e.getTimeNano()), module, attrs.get("name"), e.getId(), action, attrs.get(Labels.WINDOW),
                    attrs.get("exitCode")));
        } catch (RuntimeException ex) {
            log.debug("ledger: event not recorded: {}", ex.toString());
        }
    }

    private void persist(boolean now) {
        Anchor a = anchor;
        if (!dirty || a == null) return;
        if (!now && System.nanoTime() - lastPersist < CURSOR_EVERY.toNanos()) return;
        try {
            Files.createDirectories(cursor.getParent());
            DurableFile.replace(cursor, Json.bytes(a));
            dirty = false;
            lastPersist = System.nanoTime();
        } catch (IOException | RuntimeException e) {
            log.warn("ledger: anchor not written to {}: {}", cursor, e.toString());
        }
    }

    /** @return the anchor a cursor file holds, or {@code null} (none, or unreadable: the ledger then begins again) */
    static Anchor readCursor(Path cursor) {
        try {
            if (!Files.exists(cursor)) return null;
            Anchor a = Json.readOrNull(Files.readAllBytes(cursor), Anchor.class);
            return a == null || a.id() == null || a.action() == null ? null : a;
        } catch (IOException e) {
            return null;
        }
    }

    /** Stops following and writes the anchor. */
    @Override
    public void close() {
        closed = true;
        ResultCallback.Adapter<Event> cb = live;
        if (cb != null) {
            try {
                cb.close();
            } catch (IOException ignored) {
                // closing
            }
        }
        try {
            thread.join(2000); // the live stream's wait sees closed within 500 ms
            if (thread.isAlive()) { // in the replay's wait: an interrupt ends it
                thread.interrupt();
                thread.join(3000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        persist(true);
    }

    static String action(Event e) {
        return e.getAction() != null ? e.getAction() : e.getStatus();
    }

    static Instant time(long timeNano) {
        return Instant.ofEpochSecond(timeNano / 1_000_000_000L, timeNano % 1_000_000_000L);
    }

    /** @return the engine's {@code since}/{@code until} form of a time: {@code <seconds>.<nanoseconds>} */
    static String stamp(long timeNano) {
        return String.format("%d.%09d", timeNano / 1_000_000_000L, timeNano % 1_000_000_000L);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
