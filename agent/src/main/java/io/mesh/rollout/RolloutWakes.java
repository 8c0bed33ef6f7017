package io.mesh.rollout;

import io.mesh.curator.RolloutNodes;
import io.mesh.wire.Json;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.utils.ZKPaths;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * When this host's apply of a module should look at its rollout again (decision 13): the agent's copy of
 * {@code /mesh/rollouts} (a {@link CuratorCache}), the moves seen in it, the freed rollout slots, and this host's turn
 * at a freed place ({@link RolloutGate#turnDelayMs}). It asks for an apply only when a move may let this host act
 * ({@link #mayAct}); {@link RolloutGate} then decides, under the module's lock, what the apply does. Beside the gate,
 * so that the agent's daemon only wires it.
 */
public final class RolloutWakes implements AutoCloseable {
    /** How long a move of a rollout waits for the moves that come with it before this host looks, in milliseconds. */
    public static final long LOOK_DELAY_MS = 50;

    private final ZkPaths paths;
    private final String host;
    private final ScheduledExecutorService timer;
    private final Predicate<String> applied;
    private final Consumer<String> apply;
    private final CuratorCache cache;
    private volatile boolean closed;
    /** Modules with a look at their rollout scheduled ({@link #moved}). */
    private final Set<String> looks = ConcurrentHashMap.newKeySet();
    /** Each host node of a rollout as last parsed, with the cache's data it was parsed from (one parse per version). */
    private final Map<String, ParsedHost> parsed = new ConcurrentHashMap<>();
    /** The rollout each module was last seen at by {@link #moved}: a fold of a move seen already wakes no one. */
    private final Map<String, RolloutRecord> seen = new ConcurrentHashMap<>();
    /** Modules with an apply scheduled because their rollout's gate was blocked ({@link #gateBlocked}): one at a time. */
    private final Set<String> gateWakes = ConcurrentHashMap.newKeySet();
    /** By module, the end of the soak a wake is scheduled for ({@link #wakeAfterSoak}): one wake per soak. */
    private final Map<String, java.time.Instant> soaks = new ConcurrentHashMap<>();

    private record ParsedHost(ChildData from, RolloutHostRecord record) {}

    /**
     * @param client  a started Curator client
     * @param paths   the layout
     * @param host    this host's id
     * @param timer   where looks wait (the daemon's timer)
     * @param applied whether this host applies a module (a move of another module's rollout is not its business)
     * @param apply   asks for an apply of a module
     */
    public RolloutWakes(CuratorFramework client, ZkPaths paths, String host, ScheduledExecutorService timer, Predicate<String> applied,
                        Consumer<String> apply) {
        this.paths = paths;
        this.host = host;
        this.timer = timer;
        this.applied = applied;
        this.apply = apply;
        this.cache = CuratorCache.build(client, paths.rollouts());
    }

    /** Starts watching the rollouts. */
    public void start() {
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, after) -> moved(after))
                .forDeletes(node -> parsed.remove(node.getPath()))
                .build());
        cache.start();
    }

    /**
     * A module's rollout moved (its node, or a host's node under it): this host applies the module again when the
     * move may let it act (a slot may be free for it, the rollout was reverted or aborted, or it is done and this host
     * joined late); not for moves that change nothing for it, since every host sees every move of every host, and each
     * move is seen twice (the host's node, then a coordinator's fold of it). The rollout is derived from this cache's
     * copy of the node and its children; the apply reads ZooKeeper again.
     */
    private void moved(ChildData node) {
        if (closed || !node.getPath().startsWith(paths.rollouts() + "/")) return;
        String rel = node.getPath().substring(paths.rollouts().length() + 1);
        String module = rel.contains("/") ? rel.substring(0, rel.indexOf('/')) : rel;
        if (!applied.test(module)) return;
        // A wave's moves come in bursts (each host's, then a fold): look once per burst, not once per node, since each
        // look derives the rollout from every host's node.
        if (!looks.add(module)) return;
        try {
            timer.schedule(() -> {
                looks.remove(module);
                look(module, null);
            }, LOOK_DELAY_MS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopped) {
            looks.remove(module);
        }
    }

    /**
     * This host's rollout gate was blocked as it would have begun ({@link RolloutGate#wakeOnGate}): nothing moves when
     * the gate opens, so this host applies again after {@link RolloutGate#GATE_AGAIN}, and asks it again then.
     *
     * @param module the module whose rollout gate was blocked
     */
    public void gateBlocked(String module) {
        if (closed) return;
        // One wake per module: every apply that finds the gate blocked asks for one (a move's, a reconcile's), and each
        // wake's own apply asks for the next; more than one would each renew itself while the gate is blocked.
        if (!gateWakes.add(module)) return;
        try {
            timer.schedule(() -> {
                gateWakes.remove(module);
                apply.accept(module);
            }, RolloutGate.GATE_AGAIN.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopped) {
            gateWakes.remove(module);
        }
    }

    /**
     * A rollout whose hosts last done soak ({@code rollout.soak}) lets the next hosts begin when the soak ends, and
     * nothing moves then: this host looks at that time, as after a move, if it has not begun.
     */
    private void wakeAfterSoak(String module, RolloutRecord r) {
        java.time.Instant until = r.soakUntil();
        if (until == null || !until.isAfter(Times.now()) || r.done().contains(host) || r.applying().contains(host)) return;
        if (until.equals(soaks.put(module, until))) return; // woken then already
        try {
            timer.schedule(() -> {
                soaks.remove(module, until);
                RolloutNodes nodes = cached(module);
                RolloutRecord now = nodes == null ? null : nodes.view();
                if (now != null && mayAct(now, host)) inTurn(module, now);
            }, java.time.Duration.between(Times.now(), until).toMillis() + 1, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopped) {
            soaks.remove(module, until);
        }
    }

    /**
     * A lease of a module's rollout slots was given back after this host found them all taken: it looks at the rollout
     * as after a move whose place it may take, in its turn ({@link RolloutGate#turnDelayMs}): every host that lost to
     * the lease is woken by it, and only the ones that fit the free places should try at once. Runs on the timer, not
     * ZooKeeper's event thread.
     *
     * @param module the module whose rollout slots changed
     */
    public void slotLeasesChanged(String module) {
        if (closed || !applied.test(module)) return;
        try {
            timer.execute(() -> {
                RolloutNodes nodes = cached(module);
                RolloutRecord r = nodes == null ? null : nodes.view();
                if (r == null || mayAct(r, host)) inTurn(module, r);
            });
        } catch (RejectedExecutionException stopped) {
            // stopping
        }
    }

    /**
     * @param module       the module whose rollout moved
     * @param applyingThen null for the look a move asks for; for the later look of a host whose turn had not come
     *                     ({@link RolloutGate#turnDelayMs}), the hosts applying when the place it looks for was freed:
     *                     when another host has begun since, that place was taken, and the next freed one asks again
     */
    public void look(String module, List<String> applyingThen) {
        if (closed) return;
        RolloutNodes nodes = cached(module);
        RolloutRecord r = nodes == null ? null : nodes.view();
        // Only a move's look records what was seen: a later turn's look run between a burst reaching the cache and the
        // burst's own look would make that look take the burst for a fold already seen (and no host would try for the
        // place it freed; RolloutWakeTest).
        if (r != null && applyingThen == null) wakeAfterSoak(module, r);
        RolloutRecord before = r == null || applyingThen != null ? null : seen.put(module, r);
        if (applyingThen == null && r != null && r.sameProgress(before) && Objects.equals(r.push(), before.push())) return; // a fold of what was seen already
        if (r != null && !mayAct(r, host)) return;
        if (r != null && applyingThen != null && !applyingThen.containsAll(r.applying())) return;
        if (applyingThen != null) apply.accept(module); // the later look: its turn has come
        else inTurn(module, r);
    }

    /**
     * Applies the module now when this host's turn at a freed place has come ({@link RolloutGate#turnDelayMs}; at once
     * without a rollout), else looks again when it comes, trying then only if no host began meanwhile.
     */
    private void inTurn(String module, RolloutRecord r) {
        long turn = r == null ? 0 : RolloutGate.turnDelayMs(r, host);
        if (turn == 0) {
            apply.accept(module);
            return;
        }
        List<String> applyingNow = r.applying();
        try {
            timer.schedule(() -> look(module, applyingNow), turn, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException stopped) {
            // stopping
        }
    }

    /**
     * @param module a module
     * @return its rollout node and its hosts' nodes as this agent's copy of {@code /mesh/rollouts} holds them (the
     *         hosts' nodes that {@link RolloutNodes#counts}); {@code null} when it holds no rollout node of the module
     */
    public RolloutNodes cached(String module) {
        String parent = paths.rollout(module);
        ChildData p = cache.get(parent).orElse(null);
        if (p == null || p.getData() == null) return null;
        Map<String, RolloutNodes.Child> children = new TreeMap<>();
        cache.stream().filter(c -> ZKPaths.getPathAndNode(c.getPath()).getPath().equals(parent) && c.getData() != null).forEach(c -> {
            String h = ZKPaths.getNodeFromPath(c.getPath());
            ParsedHost ph = parsed.get(c.getPath());
            // CuratorCache keeps a new ChildData for each version it sees: the same instance is the same data.
            if (ph == null || ph.from() != c) {
                ph = new ParsedHost(c, Json.readOrNull(c.getData(), RolloutHostRecord.class));
                parsed.put(c.getPath(), ph);
            }
            RolloutHostRecord record = ph.record();
            if (RolloutNodes.counts(h, record)) children.put(h, new RolloutNodes.Child(record, c.getStat()));
        });
        return new RolloutNodes(Json.readOrNull(p.getData(), RolloutRecord.class), p.getStat(), Collections.unmodifiableMap(children));
    }

    /** @return true when a rollout in this state may let {@code host} do something it could not before */
    static boolean mayAct(RolloutRecord r, String host) {
        return switch (RolloutGate.decide(r, host).decision()) {
            case APPLY -> !r.done().contains(host);
            case APPLY_IN_WAVE -> !r.applying().contains(host) && (r.maxParallel() == null || r.applying().size() < r.maxParallel());
            case WAIT -> false;
            case KEEP_PREVIOUS -> true;
        };
    }

    /** Stops watching; looks scheduled do nothing. Idempotent. */
    @Override
    public void close() {
        closed = true;
        cache.close();
    }
}
