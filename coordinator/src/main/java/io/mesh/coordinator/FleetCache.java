package io.mesh.coordinator;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.data.Stat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The coordinator's copy of the subtrees whose size grows with the fleet ({@code /mesh/reports}, {@code /mesh/agents},
 * {@code /mesh/progress},
 * {@code /mesh/rollouts}), of those every status request reads whole ({@code /mesh/desired}, {@code /mesh/drains})
 * and of the push nodes, which are written once:
 * one Curator {@link CuratorCache} per subtree, each kept current by one persistent recursive watch, so that a status
 * request costs ZooKeeper nothing whatever the number of hosts (docs/benchmark-notes.md, B7). Each node's record is parsed once per
 * version, and each node's children are indexed, so that a request reads memory only.
 *
 * <p>What it serves may trail ZooKeeper by the time a watch event takes to arrive (milliseconds), and while the
 * coordinator is disconnected it serves what it last saw; until every subtree has loaded, and for any path outside
 * them, it reads ZooKeeper itself. Nothing that decides a write reads through it.
 */
final class FleetCache implements NodeSource, AutoCloseable {
    /** Where the cache is in its life: reads go to ZooKeeper until {@link #READY}. */
    enum State { LATENT, LOADING, READY, CLOSED }

    private final NodeSource direct;
    private final List<String> roots;
    private final List<CuratorCache> caches = new ArrayList<>();
    private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
    private final AtomicInteger loading;
    private final CountDownLatch loaded = new CountDownLatch(1);
    /** Children's names by parent path, for every node under a root (and the roots). */
    private final Map<String, NavigableSet<String>> children = new ConcurrentHashMap<>();
    /** The record last parsed from each node, with the data it was parsed from. */
    private final Map<String, Parsed> parsed = new ConcurrentHashMap<>();
    /** Counts every change seen in any subtree; see {@link #generation()}. */
    private final AtomicLong generation = new AtomicLong();

    private record Parsed(ChildData from, Class<?> type, Object value) {}

    /**
     * @param client a started Curator client
     * @param roots  the subtrees to keep, such as {@code /mesh/reports}
     */
    FleetCache(CuratorFramework client, List<String> roots) {
        this.direct = ZkReads.direct(client);
        this.roots = List.copyOf(roots);
        this.loading = new AtomicInteger(roots.size());
        for (String root : this.roots) {
            CuratorCache cache = CuratorCache.build(client, root);
            cache.listenable().addListener(CuratorCacheListener.builder()
                    .forCreates(this::created)
                    .forDeletes(this::deleted)
                    .forInitialized(this::initialized)
                    .forChanges((before, after) -> generation.incrementAndGet())
                    .build());
            caches.add(cache);
        }
    }

    /** Starts loading every subtree; reads go to ZooKeeper until all have loaded. */
    void start() {
        if (!state.compareAndSet(State.LATENT, State.LOADING)) throw new IllegalStateException("already " + state.get());
        caches.forEach(CuratorCache::start);
    }

    /**
     * @param wait how long to wait at most
     * @return true when every subtree has loaded (reads are served from memory from then on)
     * @throws InterruptedException when interrupted while waiting
     */
    boolean awaitLoaded(Duration wait) throws InterruptedException {
        return loaded.await(wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * A number that grows with every create, change and delete the cache sees (CuratorCache calls its listeners after it
     * stored the change, so what is read after this number was taken is at least as new as the number says). Equal
     * numbers, read while {@link State#READY}, mean nothing under the subtrees changed between the reads: an answer
     * derived from them may be kept until the number moves (docs/decisions/0022-status-from-a-cache.md).
     *
     * @return the count of changes so far; -1 until every subtree has loaded (reads go to ZooKeeper until then)
     */
    @Override
    public long generation() { return state.get() == State.READY ? generation.get() : -1; }

    /** @return where the cache is in its life */
    State state() { return state.get(); }

    @Override
    public void close() {
        if (state.getAndSet(State.CLOSED) == State.CLOSED) return;
        caches.forEach(CuratorCache::close);
    }

    @Override
    public List<String> children(String path) throws Exception {
        if (cacheOf(path) == null) return direct.children(path);
        NavigableSet<String> names = children.get(path);
        return names == null ? List.of() : List.copyOf(names);
    }

    @Override
    public <T> T read(String path, Class<T> type) throws Exception {
        CuratorCache cache = cacheOf(path);
        if (cache == null) return direct.read(path, type);
        ChildData data = cache.get(path).orElse(null);
        if (data == null) return null;
        Parsed p = parsed.get(path);
        // CuratorCache keeps a new ChildData for each version it sees: the same instance is the same data.
        if (p != null && p.from() == data && p.type() == type) return type.cast(p.value());
        T value = ZkReads.parse(path, data.getData(), type);
        parsed.put(path, new Parsed(data, type, value));
        return value;
    }

    /**
     * Whether a read of {@code path} through this cache now gives what ZooKeeper held when {@code now} was read: for
     * tests that write a node and then ask the coordinator at once.
     *
     * @param path a node's path
     * @param now  the node's stat as read from ZooKeeper; {@code null} for a node that does not exist
     * @return true when the read is served from ZooKeeper itself, or the cache holds that version (or its absence)
     */
    boolean serves(String path, Stat now) {
        CuratorCache cache = cacheOf(path);
        if (cache == null) return true;
        ChildData data = cache.get(path).orElse(null);
        ZKPaths.PathAndNode pn = ZKPaths.getPathAndNode(path);
        NavigableSet<String> siblings = children.get(pn.getPath());
        boolean listed = siblings != null && siblings.contains(pn.getNode());
        if (now == null) return data == null && !listed;
        return data != null && data.getStat().getMzxid() >= now.getMzxid() && (roots.contains(path) || listed);
    }

    /** @return the loaded cache holding {@code path}; {@code null} when none does, or not all have loaded */
    private CuratorCache cacheOf(String path) {
        if (state.get() != State.READY) return null;
        for (int i = 0; i < roots.size(); i++) {
            String root = roots.get(i);
            if (path.equals(root) || path.startsWith(root + "/")) return caches.get(i);
        }
        return null;
    }

    private void initialized() {
        if (loading.decrementAndGet() == 0 && state.compareAndSet(State.LOADING, State.READY)) loaded.countDown();
    }

    // Each handler moves the generation last, after the index: a reader that sees the new number sees the change.

    private void created(ChildData node) {
        String path = node.getPath();
        if (!roots.contains(path)) {
            ZKPaths.PathAndNode pn = ZKPaths.getPathAndNode(path);
            children.computeIfAbsent(pn.getPath(), k -> new ConcurrentSkipListSet<>()).add(pn.getNode());
        }
        generation.incrementAndGet();
    }

    private void deleted(ChildData node) {
        String path = node.getPath();
        parsed.remove(path);
        children.remove(path);
        if (!roots.contains(path)) {
            ZKPaths.PathAndNode pn = ZKPaths.getPathAndNode(path);
            NavigableSet<String> siblings = children.get(pn.getPath());
            if (siblings != null) siblings.remove(pn.getNode());
        }
        generation.incrementAndGet();
    }
}
