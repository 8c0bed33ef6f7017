package io.mesh.curator;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Keeps the parents of mesh's short-lived znodes persistent: {@code /mesh/locks/<module>/<host>} (the lock children),
 * {@code /mesh/held/<host>} and {@code /mesh/windows/<host>}. Curator's recipes would make them container znodes,
 * which ZooKeeper deletes within a minute of their last child, so that every later apply or window paid several
 * quorum writes to make them again (docs/decisions/0005-persistent-parents-and-report-with-release.md).
 *
 * <p>Mesh's parents carry {@code "{}"} as data: ZooKeeper does not tell a client whether a znode is a container, so
 * that is how they are told from a recipe's, which are used as they are until the server deletes them. What is known
 * is remembered per Curator client under a watch, so each path costs one read per process until it changes, goes, or
 * the connection is lost. Parents are made with the client's ACL provider.
 */
public final class PersistentParents {
    private static final Logger log = LoggerFactory.getLogger(PersistentParents.class);
    private static final byte[] EMPTY_JSON = "{}".getBytes(StandardCharsets.UTF_8);
    private static final Map<CuratorFramework, Known> KNOWN = Collections.synchronizedMap(new WeakHashMap<>());

    /** What one client knows: parents that are mesh's, and one watcher per path (ZooKeeper keeps one per watcher). */
    private static final class Known {
        final Set<String> paths = ConcurrentHashMap.newKeySet();
        final Map<String, CuratorWatcher> watchers = new ConcurrentHashMap<>();

        CuratorWatcher watcher(String path) {
            return watchers.computeIfAbsent(path, p -> event -> paths.remove(p));
        }
    }

    private PersistentParents() {}

    /**
     * Makes {@code path} a persistent znode unless it is known to be one already.
     *
     * @param client a started Curator client
     * @param path   an absolute znode path, such as {@code /mesh/locks/store/host-1}
     * @throws Exception from ZooKeeper (connection loss, session expiry, no permission), as Curator throws it
     */
    public static void ensure(CuratorFramework client, String path) throws Exception {
        Known known = KNOWN.computeIfAbsent(client, c -> new Known());
        if (known.paths.contains(path)) return;
        byte[] data;
        try {
            data = client.getData().usingWatcher(known.watcher(path)).forPath(path);
        } catch (KeeperException.NoNodeException missing) {
            try {
                create(client, path);
            } catch (KeeperException.NodeExistsException raced) {
                return; // made meanwhile, by another process or a recipe: looked at again next time
            }
            known.paths.add(path);
            if (client.checkExists().usingWatcher(known.watcher(path)).forPath(path) == null) known.paths.remove(path);
            return;
        }
        if (Arrays.equals(data, EMPTY_JSON)) {
            known.paths.add(path);
        } else {
            log.debug("{} was not made by mesh (most likely a container znode of a Curator recipe); used as it is, and made persistent once ZooKeeper has deleted it", path);
        }
    }

    /** Creates {@code path} and the missing levels above it, persistent, with {@code "{}"}. */
    private static void create(CuratorFramework client, String path) throws Exception {
        try {
            client.create().withMode(CreateMode.PERSISTENT).forPath(path, EMPTY_JSON);
        } catch (KeeperException.NoNodeException noParent) {
            try {
                create(client, ZKPaths.getPathAndNode(path).getPath());
            } catch (KeeperException.NodeExistsException raced) {
                // made meanwhile
            }
            client.create().withMode(CreateMode.PERSISTENT).forPath(path, EMPTY_JSON);
        }
    }

    /**
     * Deletes {@code path} when it has no child, and forgets it (a module that no longer runs on this host leaves no
     * lock parent behind). A parent with children (someone waits for the lock), or already gone, is left as it is.
     *
     * @param client a started Curator client
     * @param path   the parent to delete
     * @return true when this call deleted it
     * @throws Exception from ZooKeeper other than {@code NotEmpty} and {@code NoNode}
     */
    public static boolean deleteIfEmpty(CuratorFramework client, String path) throws Exception {
        try {
            client.delete().forPath(path);
            return true;
        } catch (KeeperException.NotEmptyException | KeeperException.NoNodeException e) {
            return false;
        } finally {
            Known known = KNOWN.get(client); // the watch forgets it too; this makes it sure at once
            if (known != null) known.paths.remove(path);
        }
    }
}
