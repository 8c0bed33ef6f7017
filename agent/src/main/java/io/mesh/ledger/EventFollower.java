package io.mesh.ledger;

import io.mesh.docker.EngineEvents;
import io.mesh.docker.EngineEvents.ContainerEvent;
import io.mesh.docker.Labels;
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
        boolean is(ContainerEvent e) {
            return id.equals(e.id()) && action.equals(e.action()) && e.timeNano() == timeNano;
        }
    }

    private final EngineEvents engine;
    private final Ledger ledger;
    private final Path cursor;
    private final Map<String, Boolean> seen = new LinkedHashMap<>(SEEN, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) { return size() > SEEN; }
    };
    private volatile Anchor anchor;
    private volatile boolean dirty;
    private volatile long lastPersist;
    private volatile boolean closed;
    private volatile EngineEvents.Live live;
    private volatile int subscriptions;

    /**
     * @param engine the engine's events
     * @param ledger this process's ledger
     */
    public EventFollower(EngineEvents engine, Ledger ledger) {
        this(engine, ledger, null);
    }

    /**
     * @param engine    the engine's events
     * @param ledger    this process's ledger
     * @param scheduler where it follows, a turn each 500 ms (the {@link LedgerKeeper}'s thread: an agent at rest
     *                  keeps few threads, decision 23); its owner shuts it down before {@link #close}. {@code null}:
     *                  a scheduler of its own, shut down by {@link #close}
     */
    public EventFollower(EngineEvents engine, Ledger ledger, java.util.concurrent.ScheduledExecutorService scheduler) {
        this.engine = engine;
        this.ledger = ledger;
        this.cursor = ledger.dir().resolve(CURSOR);
        this.anchor = readCursor(cursor);
        this.own = scheduler == null ? java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "mesh-ledger-events");
            t.setDaemon(true);
            return t;
        }) : null;
        this.scheduler = scheduler != null ? scheduler : own;
    }

    private final java.util.concurrent.ScheduledExecutorService scheduler;
    /** The scheduler it made itself, or {@code null} when its owner's runs it. */
    private final java.util.concurrent.ScheduledExecutorService own;

    /** Starts following, in turns on its scheduler. */
    public void start() { turnIn(0); }

    private void turnIn(long ms) {
        try {
            scheduler.schedule(this::turn, ms, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException shutDown) {
            persist(true); // the keeper closed
        }
    }

    /**
     * One turn: subscribes when there is no stream (the replay's wait holds the
     * scheduler's thread, at most its 30 s), writes the anchor while the stream lasts, and after it ends
     * subscribes again a second later.
     */
    private void turn() {
        if (closed) return;
        long next = 500;
        try {
            EngineEvents.Live l = live;
            if (l == null) {
                EngineEvents.Live stream = subscribe();
                live = stream;
                if (closed) { // closed while it subscribed: close() saw no stream to close
                    live = null;
                    stream.close();
                    return;
                }
            } else if (l.awaitEnd(0)) {
                ended(l);
                next = 1000;
            } else {
                persist(false);
            }
        } catch (InterruptedException e) {
            return; // only the keeper's shutdown interrupts a turn; its close() writes the anchor after
        } catch (RuntimeException e) {
            log.warn("ledger: the engine's events cannot be followed now ({}); trying again", e.toString());
            persist(true);
            next = 1000;
        } catch (Error e) {
            // a scheduled task's Error goes to a Future nobody reads: say it, since no turn follows
            log.error("ledger: the engine's events are no longer followed", e);
            throw e;
        }
        if (!closed) turnIn(next);
    }

    /** @return how many times it subscribed (tests) */
    public int subscriptions() { return subscriptions; }

    /** @return the anchor now, or {@code null} */
    public Anchor anchor() { return anchor; }

    /** Logs why a subscription's stream ended, closes it and writes the anchor. */
    private void ended(EngineEvents.Live stream) {
        Throwable t = stream.failure();
        log.warn("ledger: the engine's event stream ended ({}); following again from the anchor", t == null ? "closed by the engine" : t.toString());
        live = null;
        stream.close();
        persist(true);
    }

    /** @return a live subscription, after the replay of what came since the anchor */
    private EngineEvents.Live subscribe() throws InterruptedException {
        Instant now = ledger.now(); // the engine's clock: an until ahead of it would hold the replay open until then
        Anchor a = anchor;
        if (a == null) {
            ledger.write(LedgerEntry.follow(now, "the ledger begins: no anchor in " + cursor + "; events from now on"));
        } else {
            List<ContainerEvent> got;
            try {
                got = engine.between(a.timeNano(), now.getEpochSecond() * 1_000_000_000L + now.getNano(), REPLAY_WAIT);
            } catch (java.util.concurrent.TimeoutException e) {
                throw new IllegalStateException("the engine did not answer the events since " + time(a.timeNano()) + " within " + REPLAY_WAIT);
            }
            boolean found = got.stream().anyMatch(a::is);
            Instant anchorAt = time(a.timeNano());
            if (!found) {
                Instant first = got.isEmpty() ? now : time(got.get(0).timeNano());
                if (first.isBefore(anchorAt)) first = anchorAt;
                ledger.write(LedgerEntry.gap(anchorAt, first, "the engine no longer had the last event the ledger saw ("
                        + a.action() + " of " + a.id() + " at " + anchorAt + "): dockerd restarted, or more than its 256 buffered events"
                        + " came, while no agent followed them"));
            }
            ledger.write(LedgerEntry.follow(now, found ? "the engine's buffer reached back to the anchor at " + anchorAt
                    + ": no event was missed (" + got.size() + " replayed)" : "from " + (got.isEmpty() ? "now" : "the engine's oldest event")
                    + "; the span since the anchor at " + anchorAt + " is a gap"));
            for (ContainerEvent e : got) handle(e);
        }
        EngineEvents.Live stream = engine.follow(now.getEpochSecond() * 1_000_000_000L + now.getNano(), this::handle);
        subscriptions++;
        return stream;
    }

    private void handle(ContainerEvent e) {
        try {
            String action = e.action();
            synchronized (seen) {
                if (seen.put(e.id() + "|" + action + "|" + e.timeNano(), Boolean.TRUE) != null) return;
            }
            Anchor a = anchor;
            if (a == null || e.timeNano() >= a.timeNano()) {
                anchor = new Anchor(e.id(), action, e.timeNano());
                dirty = true;
            }
            Map<String, String> attrs = e.attributes();
            String module = attrs.get(Labels.MODULE);
            // exec and health events are no touch of a container (AuditChecker.TOUCH) and come every few seconds
            if (module == null || action.startsWith("exec_") || action.startsWith("health_status")) return;
            ledger.write(LedgerEntry.event(time(e.timeNano()), module, attrs.get("name"), e.id(), action, attrs.get(Labels.WINDOW),
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
        EngineEvents.Live l = live;
        if (l != null) l.close();
        live = null;
        if (own != null) { // its owner's scheduler is shut down by its owner, before this (LedgerKeeper.close)
            own.shutdownNow(); // interrupts a replay's wait
            try {
                if (!own.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS)) log.warn("ledger: the event follower's thread did not end within 5 s");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        persist(true);
    }

    /** @return an engine's time in ns since the epoch, as an instant */
    static Instant time(long timeNano) {
        return Instant.ofEpochSecond(timeNano / 1_000_000_000L, timeNano % 1_000_000_000L);
    }

}
