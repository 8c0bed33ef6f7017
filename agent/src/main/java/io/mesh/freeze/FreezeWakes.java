package io.mesh.freeze;

import io.mesh.curator.ZkClock;
import io.mesh.ledger.Ledger;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.utils.ZKPaths;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * When a freeze asks this host's applies again (decision 14): a {@link CuratorCache} on {@code /mesh/freezes}; a
 * freeze that is written, changed or deleted asks its modules (every one, for {@code _all}) now, and again at its
 * end by a timer, so that it ends by itself and the newest revision lands with no new push; a recurring freeze's
 * timers follow it span after span (decision 37). It writes the
 * ledger's freeze lines when the freeze this agent obeys changes (decision 28). Whether a change may land is
 * {@link FreezeGate}'s to say, holding the module lock; this class only wakes.
 */
public final class FreezeWakes implements AutoCloseable {
    /** How long after a freeze's {@code until} its modules are asked again, in ms. */
    private static final long THAW_MARGIN_MS = 100;

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final CuratorCache cache;
    private final ScheduledExecutorService timer;
    private final Ledger ledger;
    private final BooleanSupplier stopping;
    private final Supplier<Set<String>> modules;
    private final Consumer<String> ask;
    private final Consumer<String> thawed;
    private final Runnable askAll;
    /** By freeze node name (a module, or {@code _all}): the timer of its next end or start. */
    private final Map<String, ScheduledFuture<?>> timers = new ConcurrentHashMap<>();
    /** By freeze node name: the rule read last; a timer of another does nothing. */
    private final Map<String, FreezeRecord> rules = new ConcurrentHashMap<>();
    /** The freeze this agent obeys, by freeze node name: a change writes the ledger's freeze lines once. */
    private final Map<String, FreezeRecord> obeyed = new ConcurrentHashMap<>();

    /**
     * @param client   a started Curator client
     * @param paths    the layout
     * @param timer    the daemon's timer (thaws at {@code until})
     * @param ledger   where the freeze lines go
     * @param stopping true once the agent stops: nothing is asked then
     * @param modules  the modules this agent applies
     * @param ask      asks a module's apply again (only called for one of {@code modules})
     * @param thawed   a module a freeze of it ended: its back-off ends, it tries at once
     * @param askAll   asks every module's apply again (a freeze of {@code _all})
     */
    public FreezeWakes(CuratorFramework client, ZkPaths paths, ScheduledExecutorService timer, Ledger ledger, BooleanSupplier stopping,
                       Supplier<Set<String>> modules, Consumer<String> ask, Consumer<String> thawed, Runnable askAll) {
        this.client = client;
        this.paths = paths;
        this.cache = CuratorCache.build(client, paths.freezes());
        this.timer = timer;
        this.ledger = ledger;
        this.stopping = stopping;
        this.modules = modules;
        this.ask = ask;
        this.thawed = thawed;
        this.askAll = askAll;
    }

    /** Starts the watch. */
    public void start() {
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, after) -> changed(after, false))
                .forDeletes(node -> changed(node, true))
                .build());
        cache.start();
    }

    /**
     * @param name a freeze node's name (a module, or {@code _all})
     * @return whether that freeze is in force, as ZooKeeper says now (the ledger's reconciliation at start); an
     *         unreadable node is obeyed as a freeze (decision 14)
     * @throws Exception from ZooKeeper
     */
    public boolean inForce(String name) throws Exception {
        String path = paths.freeze(name);
        byte[] data = client.checkExists().forPath(path) == null ? null : client.getData().forPath(path);
        if (data == null) return false;
        FreezeRecord f = Json.readOrNull(data, FreezeRecord.class);
        return f == null || f.inForce(ZkClock.earliest(), ZkClock.latest()).isPresent();
    }

    /**
     * A freeze node was written or deleted: its modules are asked again now, which a thaw or a shortened freeze needs,
     * and again at its end. A module still frozen by the other node (its own, or {@code _all}) stays deferred: the
     * apply asks both.
     */
    private void changed(ChildData node, boolean deleted) {
        if (stopping.getAsBoolean() || !ZKPaths.getPathAndNode(node.getPath()).getPath().equals(paths.freezes())) return;
        String name = ZKPaths.getNodeFromPath(node.getPath());
        ScheduledFuture<?> before = timers.remove(name);
        if (before != null) before.cancel(false);
        if (deleted) {
            rules.remove(name);
            thaw(name);
            return;
        }
        FreezeRecord f = node.getData() == null ? null : Json.readOrNull(node.getData(), FreezeRecord.class);
        FreezeRecord rule = node.getData() == null ? null : f == null ? FreezeRecord.unreadable() : f;
        if (rule == null) {
            rules.remove(name);
        } else {
            rules.put(name, rule);
            follow(name, rule);
        }
        askAgain(name);
    }

    /**
     * Obeys what the rule says now and sets the timer of its next change: a span's end (its modules thawed and asked
     * again), or a recurring freeze's next start (its ledger line). Each timer calls this again, so a recurring freeze
     * is followed span after span; a timer of a rule since replaced or deleted does nothing.
     */
    private void follow(String name, FreezeRecord rule) {
        if (stopping.getAsBoolean() || rules.get(name) != rule) return;
        Instant earliest = ZkClock.earliest(), latest = ZkClock.latest();
        FreezeRecord span = rule.inForce(earliest, latest).orElse(null);
        obeyed(name, span);
        Runnable next;
        long ms;
        if (span != null && span.until() != null) {
            // A little past its end (ZooKeeper's clock at its earliest, decision 27), so that the apply's own reading
            // finds the span over.
            ms = delay(earliest, span.until()) + THAW_MARGIN_MS;
            next = () -> {
                if (stopping.getAsBoolean() || rules.get(name) != rule) return;
                follow(name, rule);
                if (!frozenBy(name)) thawed(name);
            };
        } else if (span == null && rule.recurring()) {
            // The next start by ZooKeeper's clock at its latest: the gate holds from then, and the ledger's line with it.
            Instant start = rule.nextStart(latest).orElse(null);
            if (start == null) return; // the recurrence has ended
            ms = delay(latest, start);
            next = () -> follow(name, rule);
        } else {
            return; // no end: in force until thawed
        }
        try {
            timers.put(name, timer.schedule(next, ms, TimeUnit.MILLISECONDS));
        } catch (RejectedExecutionException e) {
            // shutting down
        }
    }

    /**
     * Bounded: a freeze written by hand with an end in the far future would overflow a delay in ms; the reconcile
     * meets it again long before a day has passed.
     *
     * @return ms from {@code now} to {@code at}, 0 to a day
     */
    private static long delay(Instant now, Instant at) {
        Duration left = Duration.between(now, at);
        return left.isNegative() ? 0 : left.compareTo(Duration.ofDays(1)) > 0 ? Duration.ofDays(1).toMillis() : left.toMillis();
    }

    private boolean frozenBy(String name) { return obeyed.containsKey(name); }

    /** The node is gone: its freeze ends now. */
    private void thaw(String name) {
        obeyed(name, null);
        thawed(name);
    }

    /** A freeze ended (deleted, or its end come): the back-off of the modules it froze ends; they try at once. */
    private void thawed(String name) {
        boolean all = FreezeRecord.ALL.equals(name);
        for (String m : all ? Set.copyOf(modules.get()) : Set.of(name)) thawed.accept(m);
        askAgain(name);
    }

    private void askAgain(String name) {
        if (FreezeRecord.ALL.equals(name)) askAll.run();
        else if (modules.get().contains(name)) ask.accept(name);
    }

    /**
     * Writes the ledger's freeze lines when the freeze this agent obeys for a node changes (decision 28): once per
     * change, not per apply; a recurring freeze's lines once per span, the opening's {@code until} the span's end.
     *
     * @param name the freeze node's name (a module, or {@code _all})
     * @param now  the freeze in force now, as {@link FreezeRecord#inForce} answers it, or {@code null}
     */
    private synchronized void obeyed(String name, FreezeRecord now) {
        FreezeRecord was = now == null ? obeyed.remove(name) : obeyed.put(name, now);
        if (Objects.equals(was, now)) return;
        Instant at = ledger.now();
        if (was != null) ledger.write(LedgerEntry.freeze(LedgerKind.FREEZE_CLOSE, at, name, was.by(), was.reason(), was.until()));
        if (now != null) ledger.write(LedgerEntry.freeze(LedgerKind.FREEZE_OPEN, at, name, now.by(), now.reason(), now.until()));
    }

    /** Stops the watch; a pending thaw's request finds the agent stopping and asks nothing. */
    @Override
    public void close() {
        cache.close();
    }
}
