package io.mesh.agent;

import io.mesh.curator.ZkNode;
import io.mesh.docker.IdleThreads;
import io.mesh.manifest.ModuleSpec;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.WindowRequest;
import io.mesh.wire.WindowRequestState;
import io.mesh.wire.WindowResult;
import io.mesh.wire.ZkPaths;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;

/**
 * Runs the windows operators ask for ({@code mesh window run MODULE/SCHEDULE --host H}) on this host: watches
 * {@code /mesh/requests/<host>} (docs/design.md, "Window requests"; {@link WindowRequest}).
 *
 * A {@code requested} node is claimed by a compare-and-set on its version and run through
 * {@link AgentDaemon#runWindow}, exactly like a cron window; a request that does not fit the desired state is
 * {@code done} at once with an {@code error}. The TTL is enforced every {@code ttl / 4} (at most a minute).
 */
public final class WindowRequests implements AutoCloseable {
    /** How long a request may wait to be claimed, and a done request be kept, by default. */
    public static final Duration DEFAULT_TTL = Duration.ofMinutes(10);

    private static final Logger log = LoggerFactory.getLogger(WindowRequests.class);

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final String host;
    private final ProcessRef me;
    private final BiFunction<String, String, Future<WindowResult>> runner;
    private final Duration ttl;
    private final MeshStore store;
    private final CuratorCache cache;
    private final Set<String> claimed = ConcurrentHashMap.newKeySet();
    private final ExecutorService waiters;
    /** Where the TTL sweep is scheduled; it runs on a thread of {@link #waiters}, never on this timer's thread. */
    private final ScheduledExecutorService timer;
    /** Whether {@link #timer} is this object's own (shut down by {@link #close()}) or the daemon's. */
    private final boolean ownTimer;
    private final AtomicBoolean sweeping = new AtomicBoolean();
    private volatile ScheduledFuture<?> sweeps;

    /**
     * @param client a started Curator client
     * @param paths  the layout
     * @param host   this host's id
     * @param me     this process, written as the request's {@code runner}
     * @param runner runs a window: {@code (module, schedule) -> result}, such as {@code daemon::runWindow}
     * @param ttl    see the class comment ({@link #DEFAULT_TTL})
     */
    public WindowRequests(CuratorFramework client, ZkPaths paths, String host, ProcessRef me,
                          BiFunction<String, String, Future<WindowResult>> runner, Duration ttl) {
        this(client, paths, host, me, runner, ttl, null);
    }

    /**
     * @param timer where the TTL sweep is scheduled, such as the daemon's ({@link AgentDaemon#timer()}), so that an
     *              agent at rest keeps no thread of its own for it; {@code null} for one of this object's own
     * @see #WindowRequests(CuratorFramework, ZkPaths, String, ProcessRef, BiFunction, Duration)
     */
    public WindowRequests(CuratorFramework client, ZkPaths paths, String host, ProcessRef me,
                          BiFunction<String, String, Future<WindowResult>> runner, Duration ttl, ScheduledExecutorService timer) {
        this.client = client;
        this.paths = paths;
        this.host = host;
        this.me = me;
        this.runner = runner;
        this.ttl = ttl;
        this.store = new MeshStore(client, paths);
        this.cache = CuratorCache.build(client, paths.requests(host));
        this.waiters = IdleThreads.onDemand("window-request");
        this.ownTimer = timer == null;
        this.timer = timer != null ? timer : Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "window-request-sweeper");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Creates {@code /mesh/requests/<host>} when missing, settles what a previous run left, and starts watching.
     *
     * @throws Exception from ZooKeeper
     */
    public void start() throws Exception {
        // Looked at first: ZooKeeper checks the right to create under the parent before whether the node exists, and a host
        // identity may not create under /mesh/requests (mesh-coordinator credentials made its node: SPEC "Identities").
        if (client.checkExists().forPath(paths.requests(host)) == null) {
            try {
                client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(paths.requests(host), "{}".getBytes());
            } catch (KeeperException.NodeExistsException ignored) {
                // made meanwhile
            }
        }
        sweep(true);
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, after) -> consider(after))
                .build());
        cache.start();
        long every = Math.max(1000, Math.min(60_000, ttl.toMillis() / 4));
        // Off the timer's thread: a sweep waits on ZooKeeper, the daemon's timers must not. One sweep at a time.
        sweeps = timer.scheduleWithFixedDelay(() -> {
            if (!sweeping.compareAndSet(false, true)) return;
            try {
                waiters.execute(() -> {
                    try {
                        sweep(false);
                    } catch (Exception e) {
                        log.warn("window requests of host={}: sweep failed: {}", host, e.toString());
                    } finally {
                        sweeping.set(false);
                    }
                });
            } catch (RejectedExecutionException e) {
                sweeping.set(false); // closing
            }
        }, every, every, TimeUnit.MILLISECONDS);
    }

    private String nameOf(String path) {
        if (!ZKPaths.getPathAndNode(path).getPath().equals(paths.requests(host))) return null;
        String name = ZKPaths.getNodeFromPath(path);
        return name.startsWith(ZkPaths.WINDOW_REQUEST_PREFIX) ? name : null;
    }

    private void consider(ChildData node) {
        String name = nameOf(node.getPath());
        if (name == null) return;
        WindowRequest req = Json.readOrNull(node.getData(), WindowRequest.class);
        if (req == null || req.state() != WindowRequestState.REQUESTED || !claimed.add(name)) return;
        waiters.submit(() -> run(name, node.getPath(), req, node.getStat().getVersion()));
    }

    /** Claims, runs and completes one request; on a thread of {@link #waiters}. */
    private void run(String name, String path, WindowRequest req, int version) {
        try {
            if (req.requestedAt() != null && req.requestedAt().plus(ttl).isBefore(Times.now())) {
                finish(path, req, null, "expired: not picked up within " + ttl.toMinutes() + "m of being requested; ask again");
                return;
            }
            WindowRequest running = req.running(me, Times.now());
            byte[] claim = Json.bytes(running);
            try {
                client.setData().withVersion(version).forPath(path, claim);
            } catch (KeeperException.BadVersionException e) {
                // Curator retries a write after a connection loss, and the first try may have committed: then the claim
                // is this agent's, and a return would leave the request running for good (the sweep settles only other
                // processes' claims; FleetHistoryIT seed -2426020023631631511). Else another change won: leave it.
                ZkNode now = ZkNode.read(client, path);
                if (now == null || !Arrays.equals(now.data(), claim)) return;
            } catch (KeeperException.NoNodeException e) {
                return; // cancelled meanwhile
            }
            String refusal = refusal(req);
            if (refusal != null) {
                log.warn("window request {} host={} module={} schedule={} refused: {}", name, host, req.module(), req.schedule(), refusal);
                finish(path, running, null, refusal);
                return;
            }
            log.info("window request {} host={} module={} schedule={} by={} running", name, host, req.module(), req.schedule(),
                    req.by() == null ? "-" : req.by().process());
            WindowResult result;
            try {
                result = runner.apply(req.module(), req.schedule()).get();
            } catch (ExecutionException e) {
                finish(path, running, null, "the window crashed: " + e.getCause());
                return;
            }
            finish(path, running, result, null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("window request {} host={}: {}", name, host, e.toString());
        } finally {
            claimed.remove(name);
        }
    }

    /** @return why the request cannot run on this host, or null */
    private String refusal(WindowRequest req) throws Exception {
        if (req.module() == null || req.schedule() == null) return "the request names no module or no schedule";
        DesiredRecord d;
        try {
            d = store.desired(req.module());
        } catch (MeshStore.InvalidNodeException e) {
            return e.getMessage();
        }
        if (d == null) return "module " + req.module() + " has no desired state (push it first)";
        ModuleSpec spec = d.spec();
        if (!spec.runsOn(host)) return "module " + req.module() + " does not run on host " + host + " (its hosts: " + spec.hosts() + ")";
        if (!spec.schedules().containsKey(req.schedule())) {
            return "module " + req.module() + " has no schedule '" + req.schedule() + "'; it has " + spec.schedules().keySet();
        }
        return null;
    }

    private void finish(String path, WindowRequest req, WindowResult result, String error) throws Exception {
        try {
            client.setData().forPath(path, Json.bytes(req.done(Times.now(), result, error)));
        } catch (KeeperException.NoNodeException e) {
            log.info("window request {} was deleted before its result was written", path);
        }
    }

    /** Settles stale requests; at start also those a previous run left {@code running}. */
    private void sweep(boolean atStart) throws Exception {
        List<String> names;
        try {
            names = client.getChildren().forPath(paths.requests(host));
        } catch (KeeperException.NoNodeException e) {
            return;
        }
        Instant now = Times.now();
        for (String name : names) {
            if (!name.startsWith(ZkPaths.WINDOW_REQUEST_PREFIX) || claimed.contains(name)) continue;
            String path = paths.request(host, name);
            ZkNode node = ZkNode.read(client, path);
            if (node == null) continue;
            Stat stat = node.stat();
            WindowRequest req = node.as(WindowRequest.class);
            try {
                if (req == null) {
                    if (Instant.ofEpochMilli(stat.getMtime()).plus(ttl).isBefore(now)) client.delete().withVersion(stat.getVersion()).forPath(path);
                } else if (req.state() == WindowRequestState.DONE) {
                    Instant at = req.finishedAt() != null ? req.finishedAt() : Instant.ofEpochMilli(stat.getMtime());
                    if (at.plus(ttl).isBefore(now)) client.delete().withVersion(stat.getVersion()).forPath(path);
                } else if (req.state() == WindowRequestState.RUNNING && (atStart || req.runner() == null || req.runner().pid() != me.pid())) {
                    // Another process's: one agent runs per host, so its runner is gone (killed after it claimed the
                    // request; a start sweep that ZooKeeper did not answer left it to this one; FleetHistoryIT seed
                    // -5845951470219882833).
                    client.setData().withVersion(stat.getVersion()).forPath(path, Json.bytes(req.done(now, null,
                            "the agent running it (pid " + (req.runner() == null ? "?" : req.runner().pid())
                                    + ") stopped before the window ended; the window may have run: it is finished from its journal"
                                    + " (see lastWindow in the module's report, outcome recovered)")));
                } else if (req.state() == WindowRequestState.REQUESTED && req.requestedAt() != null && req.requestedAt().plus(ttl).isBefore(now)) {
                    client.setData().withVersion(stat.getVersion()).forPath(path, Json.bytes(req.done(now, null,
                            "expired: not picked up within " + ttl.toMinutes() + "m of being requested; ask again")));
                }
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException raced) {
                // changed meanwhile: the next sweep sees it again
            }
        }
    }

    /** Stops watching; a window in progress keeps running in the daemon, and its result is written when it ends (bounded wait). */
    @Override
    public void close() {
        cache.close();
        if (sweeps != null) sweeps.cancel(false);
        if (ownTimer) timer.shutdownNow();
        waiters.shutdown();
        try {
            if (!waiters.awaitTermination(10, TimeUnit.SECONDS)) waiters.shutdownNow();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
