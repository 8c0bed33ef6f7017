package io.mesh.hold;

import io.mesh.curator.HeldRegistry;
import io.mesh.curator.PersistentParents;
import io.mesh.curator.ZkNode;
import io.mesh.curator.ZkClock;
import io.mesh.docker.IdleThreads;
import io.mesh.manifest.ModuleSpec;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.DrainRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * An agent's side of drains ({@code mesh drain HOST}; SPEC.md "The rest of the operator's stack";
 * docs/decisions/0037-recurring-freezes-drains-and-one-budget.md): while {@code /mesh/drains/<host>} is in force,
 * every container of every module desired on this host carries an operator's hold placed from it
 * ({@link DrainRecord#hold()}, marked {@code drain}); everything a hold does then follows from {@link OperatorHolds}:
 * the confirmation under the module lock, the {@code --stop}, a window skipped, the same container started at the end.
 * A container a window holds now gets its hold when the window has ended (also a window a dead process left journalled
 * open: once an apply has recovered it), and a container a later push adds gets one too: the holds are looked at again
 * every {@link #AGAIN} while the drain lasts. When the drain ends (undrained, or
 * past its {@code until}) the drain's holds are deleted; the apply after each release starts what they stopped.
 */
public final class HostDrains implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HostDrains.class);
    /** How often the holds are looked at while a drain lasts. */
    static final Duration AGAIN = Duration.ofSeconds(2);

    private final MeshStore store;
    private final String host;
    private final ProcessRef process;
    private final ScheduledExecutorService timer;
    private final Supplier<Set<String>> modules;
    private final java.util.function.Predicate<String> windowOpen;
    private final CuratorCache cache;
    /** One look at a time, off the cache's thread. */
    private final ExecutorService looks;
    private volatile ScheduledFuture<?> next;
    private volatile boolean closed;

    /**
     * @param store   ZooKeeper access
     * @param host    this host's id
     * @param process this process, as the holds' {@code by}
     * @param timer   the daemon's timer (the next look)
     * @param modules the modules this agent applies
     * @param windowOpen whether a window of a module is journalled open on this host: its recovery, by an apply, gives
     *                   its containers back first, and the drain's holds come after (a hold placed before the recovery
     *                   would keep a container the dead window stopped stopped: the fleet history saw it)
     */
    public HostDrains(MeshStore store, String host, ProcessRef process, ScheduledExecutorService timer, Supplier<Set<String>> modules,
                      java.util.function.Predicate<String> windowOpen) {
        this.windowOpen = windowOpen;
        this.store = store;
        this.host = host;
        this.process = process;
        this.timer = timer;
        this.modules = modules;
        this.cache = CuratorCache.build(store.client(), store.paths().drain(host));
        this.looks = IdleThreads.serial("drains-" + host);
    }

    /** Starts watching the host's drain node; a drain already there is met at once. */
    public void start() {
        cache.listenable().addListener(CuratorCacheListener.builder().forAll((type, before, after) -> lookSoon()).build());
        cache.start();
        lookSoon();
    }

    private void lookSoon() {
        if (closed) return;
        try {
            looks.submit(this::look);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    /** Makes the holds match the drain: placed while it lasts, deleted once it has ended. */
    private void look() {
        if (closed) return;
        try {
            ZkNode node = ZkNode.read(store.client(), store.paths().drain(host));
            DrainRecord drain = node == null ? null : node.as(DrainRecord.class);
            if (node != null && drain == null) drain = DrainRecord.unreadable();
            if (drain != null && drain.inForceAt(ZkClock.earliest())) {
                place(drain, node.version());
                ScheduledFuture<?> was = next;
                if (was != null) was.cancel(false);
                next = timer.schedule(this::lookSoon, AGAIN.toMillis(), TimeUnit.MILLISECONDS);
            } else {
                end();
            }
        } catch (RejectedExecutionException e) {
            // the daemon is stopping
        } catch (Exception e) {
            log.warn("drain of host {}: holds not matched to it yet ({}); trying again in {}s", host, e.toString(), AGAIN.toSeconds());
            try {
                next = timer.schedule(this::lookSoon, AGAIN.toMillis(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException stopping) {
                // stopping
            }
        }
    }

    /** Places the drain's hold on each container of the host's modules that no operator holds. */
    private void place(DrainRecord drain, int version) throws Exception {
        Map<String, HeldRecord> held = store.held(host);
        for (String module : Set.copyOf(modules.get())) {
            DesiredRecord d = store.desired(module);
            if (d == null || d.tombstone() || d.spec() == null || windowOpen.test(module)) continue; // a window first: the next look
            if (!place(store, host, process, d.spec(), drain, version, held)) return; // the drain changed: the next look
        }
    }

    /**
     * Places the drain's hold on each container of a module that has no held node; a window's node is left (its
     * container gets the hold once the window ends). Also called by an apply holding the module's lock, before it
     * plans: a container a push adds to a drained host is held before it is made. Each hold is made in one transaction
     * with a check of the drain node's version: a drain undrained since it was read places nothing (a reviewer found a
     * hold an apply made after the undrain, whose {@code --stop} stopped its container again for good).
     *
     * @param spec    the module's desired spec (nothing when it does not run on {@code host})
     * @param drain   the host's drain in force
     * @param version the version of the drain node it was read from
     * @param held    the host's held nodes in force
     * @return false when the drain node is no longer the one read (nothing more was placed); else true
     * @throws Exception from ZooKeeper
     */
    public static boolean place(MeshStore store, String host, ProcessRef process, ModuleSpec spec, DrainRecord drain, int version,
                                Map<String, HeldRecord> held) throws Exception {
        if (!spec.runsOn(host)) return true;
        boolean parent = false;
        for (String name : spec.containers().keySet()) {
            String container = spec.dockerName(name);
            if (held.containsKey(container)) continue; // an operator's hold in force, or a window's until it ends
            if (!parent) {
                PersistentParents.ensure(store.client(), store.paths().held(host));
                parent = true;
            }
            HeldRecord hold = HeldRecord.operator(host, spec.module(), container, null, process, drain.hold());
            try {
                store.client().transaction().forOperations(
                        store.client().transactionOp().check().withVersion(version).forPath(store.paths().drain(host)),
                        store.client().transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(store.paths().held(host, container),
                                Json.bytes(hold)));
                log.info("drain of host {}: {} held ({})", host, container, drain.describe());
            } catch (KeeperException.NodeExistsException e) {
                log.debug("drain of host {}: {} not held yet: it has a held node", host, container);
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
                log.info("drain of host {}: changed or undrained since it was read; {} not held", host, container);
                return false;
            }
        }
        return true;
    }

    /** The drain ended: its holds go, and each release applies its module (OperatorHolds). */
    private void end() throws Exception {
        for (HeldRecord h : HeldRegistry.read(store.client(), store.paths(), host).values()) {
            if (!h.operatorHold() || !h.hold().ofDrain()) continue;
            try {
                if (HeldRegistry.release(store.client(), store.paths(), host, h.container()) != null) {
                    log.info("drain of host {} ended: {} released", host, h.container());
                }
            } catch (HeldRegistry.AlreadyHeldException e) {
                // a window's node now: not the drain's
            }
        }
    }

    /** Stops watching; the holds stay as they are (the next agent of the host matches them again). */
    @Override
    public void close() {
        closed = true;
        cache.close();
        ScheduledFuture<?> was = next;
        if (was != null) was.cancel(false);
        looks.shutdownNow();
    }
}
