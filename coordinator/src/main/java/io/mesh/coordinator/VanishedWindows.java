package io.mesh.coordinator;

import io.mesh.wire.WindowRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The window nodes ({@code {root}/windows/<host>/<module>}, ephemeral) this coordinator saw go, with what they said:
 * the last known window of an agent killed mid-window (kill -9), whose window and agent nodes ZooKeeper deletes
 * together when its session expires, leaving nothing that says its containers are still stopped. A window that ended
 * as it should records itself in its report's {@code lastWindow}, so {@link FleetStatus} shows a vanished window only
 * for a host without an agent node and whose report does not name it as ended ("agent offline; last known ...").
 *
 * <p>One Curator {@link CuratorCache} on {@code {root}/windows}, in memory only: a coordinator started after the
 * window went knows only what the host's last report says (docs/decisions/0022-status-from-a-cache.md). A window node created
 * again for the same host and module replaces the memory. Thread-safe.
 */
final class VanishedWindows implements AutoCloseable {
    private final CuratorCache cache;
    private final ZkPaths paths;
    /** By {@code host/module}: the last window node deleted there and not created since. */
    private final Map<String, WindowRecord> gone = new ConcurrentHashMap<>();

    /**
     * @param client a started Curator client
     * @param paths  the layout
     */
    VanishedWindows(CuratorFramework client, ZkPaths paths) {
        this.paths = paths;
        this.cache = CuratorCache.build(client, paths.windows());
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreates(n -> { String k = key(n); if (k != null) gone.remove(k); })
                .forDeletes(this::deleted)
                .build());
    }

    /** Starts watching. */
    void start() { cache.start(); }

    @Override
    public void close() { cache.close(); }

    /** @return by {@code host/module}, each window node deleted and not created again since, as it last read */
    Map<String, WindowRecord> vanished() { return new TreeMap<>(gone); }

    private void deleted(ChildData node) {
        String k = key(node);
        if (k == null || node.getData() == null) return;
        try {
            WindowRecord r = ZkReads.parse(node.getPath(), node.getData(), WindowRecord.class);
            if (r != null) gone.put(k, r);
        } catch (RuntimeException notAWindow) {
            // data that is no window record: nothing to remember
        }
    }

    /** @return {@code host/module} for a window node's path, {@code null} for the root or a host's node */
    private String key(ChildData node) {
        String path = node.getPath();
        if (!path.startsWith(paths.windows() + "/")) return null;
        String rest = path.substring(paths.windows().length() + 1);
        return rest.indexOf('/') > 0 && rest.indexOf('/') == rest.lastIndexOf('/') ? rest : null;
    }
}
