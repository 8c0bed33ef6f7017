package io.mesh.wire;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.CreateMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The held registry: the one home of {@code /mesh/held/<host>/<container>} (and of the window node published with
 * it), for the agent and the coordinator alike. A window publishes ({@link #publish}); every reader reads through
 * {@link #read} or {@link #readAll}, where a node whose data does not parse still means held (issue 11 rule 8).
 *
 * <p>The nodes are Curator {@link PersistentNode}s in {@code EPHEMERAL} mode, so that they come back by themselves
 * after the window's process gets a new ZooKeeper session, and vanish with the process. Their parents,
 * {@code /mesh/windows/<host>} and {@code /mesh/held/<host>}, are persistent ({@link PersistentParents}).
 */
public final class HeldRegistry implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HeldRegistry.class);
    private final List<PersistentNode> nodes = new ArrayList<>();
    private final List<String> nodePaths = new ArrayList<>();
    private final String window;

    /**
     * The held containers of one host, by Docker name.
     *
     * @param client a started Curator client
     * @param paths  the layout
     * @param host   host id
     * @return each held node's record; one whose data does not parse reads as {@link HeldRecord#unreadable}
     * @throws Exception from ZooKeeper
     */
    public static Map<String, HeldRecord> read(CuratorFramework client, ZkPaths paths, String host) throws Exception {
        Map<String, HeldRecord> out = new LinkedHashMap<>();
        List<String> names;
        try {
            names = client.getChildren().forPath(paths.held(host));
        } catch (KeeperException.NoNodeException e) {
            return out;
        }
        for (String name : names.stream().sorted().toList()) {
            byte[] data;
            try {
                data = client.getData().forPath(paths.held(host, name));
            } catch (KeeperException.NoNodeException e) {
                continue; // released meanwhile
            }
            HeldRecord h = Json.readOrNull(data, HeldRecord.class);
            out.put(name, h != null ? h : HeldRecord.unreadable(host, name));
        }
        return out;
    }

    /**
     * @param client a started Curator client
     * @param paths  the layout
     * @return every held container on every host, sorted by host then container
     * @throws Exception from ZooKeeper
     */
    public static List<HeldRecord> readAll(CuratorFramework client, ZkPaths paths) throws Exception {
        List<HeldRecord> out = new ArrayList<>();
        for (String host : children(client, paths.held())) out.addAll(read(client, paths, host).values());
        return out;
    }

    /**
     * @return how many containers are held on every host, counted without reading the nodes' data
     * @throws Exception from ZooKeeper
     */
    public static int count(CuratorFramework client, ZkPaths paths) throws Exception {
        int n = 0;
        for (String host : children(client, paths.held())) n += children(client, paths.held(host)).size();
        return n;
    }

    private static List<String> children(CuratorFramework client, String path) throws Exception {
        try {
            return client.getChildren().forPath(path).stream().sorted().toList();
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    private HeldRegistry(String window) { this.window = window; }

    /**
     * Creates the window node and one held node per container, and waits for all of them.
     *
     * @param client   a started Curator client
     * @param paths    the layout
     * @param host     host id
     * @param module   module name
     * @param schedule schedule name
     * @param window   window id
     * @param since    when the window opened
     * @param held     (Docker name, container id) of each held container
     * @param by       the process running the window
     * @param wait     how long to wait for the nodes to be confirmed
     * @return the published nodes; close them to delete them
     * @throws IllegalStateException when a parent cannot be made, or a node is not confirmed in time (every node is
     *                               deleted again then)
     * @throws InterruptedException  when interrupted while waiting
     */
    public static HeldRegistry publish(CuratorFramework client, ZkPaths paths, String host, String module, String schedule, String window, Instant since,
                             List<String[]> held, ProcessRef by, Duration wait) throws InterruptedException {
        for (String parent : List.of(paths.windows(host), paths.held(host))) {
            try {
                PersistentParents.ensure(client, parent);
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("could not create " + parent + ": " + e, e);
            }
        }
        HeldRegistry h = new HeldRegistry(window);
        try {
            List<String> names = held.stream().map(x -> x[0]).toList();
            h.add(client, paths.window(host, module), Json.bytes(new WindowRecord(host, module, schedule, window, since, names, by)));
            for (String[] c : held) {
                h.add(client, paths.held(host, c[0]),
                        Json.bytes(new HeldRecord(host, module, c[0], c[1], schedule, window, since, by)));
            }
            for (int i = 0; i < h.nodes.size(); i++) {
                if (!h.nodes.get(i).waitForInitialCreate(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("could not create " + h.nodePaths.get(i) + " within " + wait.toSeconds() + "s");
                }
            }
            return h;
        } catch (InterruptedException | RuntimeException e) {
            h.close();
            throw e;
        }
    }

    private void add(CuratorFramework client, String path, byte[] data) {
        PersistentNode n = new PersistentNode(client, CreateMode.EPHEMERAL, false, path, data);
        nodes.add(n);
        nodePaths.add(path);
        n.start();
    }

    /**
     * Deletes every node on a thread of its own, for a caller that holds the host fence and must not wait for
     * ZooKeeper. A closed {@code PersistentNode} never comes back (CURATOR-297: one closed before its create answered
     * deletes what the create made).
     */
    public void closeInBackground() {
        Thread t = new Thread(this::close, "held-nodes-close-" + window);
        t.setDaemon(true);
        t.start();
    }

    /** Deletes every node (best effort: they are ephemeral and go with the session anyway). */
    @Override
    public void close() {
        for (PersistentNode n : nodes) {
            try {
                n.close();
            } catch (IOException | RuntimeException e) {
                log.warn("window {}: a node was not deleted cleanly ({}); it is ephemeral and goes with the session", window, e.getMessage());
            }
        }
        nodes.clear();
    }
}
