package io.mesh.window;

import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowRecord;
import io.mesh.zk.MeshStore;
import io.mesh.zk.PersistentParents;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The window node and the held nodes of one window: Curator {@link PersistentNode}s in {@code EPHEMERAL} mode, so
 * that they come back by themselves after the window's process gets a new ZooKeeper session, and vanish with the
 * process. {@link #publish} returns only once every node is confirmed created. Their parents,
 * {@code /mesh/windows/<host>} and {@code /mesh/held/<host>}, are persistent ({@link PersistentParents}).
 */
final class HeldNodes implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HeldNodes.class);
    private final List<PersistentNode> nodes = new ArrayList<>();
    private final List<String> paths = new ArrayList<>();
    private final String window;

    private HeldNodes(String window) { this.window = window; }

    /**
     * Creates the window node and one held node per container, and waits for all of them.
     *
     * @param store    ZooKeeper access
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
    static HeldNodes publish(MeshStore store, String host, String module, String schedule, String window, Instant since,
                             List<String[]> held, ProcessRef by, Duration wait) throws InterruptedException {
        for (String parent : List.of(store.paths().windows(host), store.paths().held(host))) {
            try {
                PersistentParents.ensure(store.client(), parent);
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("could not create " + parent + ": " + e, e);
            }
        }
        HeldNodes h = new HeldNodes(window);
        try {
            List<String> names = held.stream().map(x -> x[0]).toList();
            h.add(store, store.paths().window(host, module), Json.bytes(new WindowRecord(host, module, schedule, window, since, names, by)));
            for (String[] c : held) {
                h.add(store, store.paths().held(host, c[0]),
                        Json.bytes(new HeldRecord(host, module, c[0], c[1], schedule, window, since, by)));
            }
            for (int i = 0; i < h.nodes.size(); i++) {
                if (!h.nodes.get(i).waitForInitialCreate(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new IllegalStateException("could not create " + h.paths.get(i) + " within " + wait.toSeconds() + "s");
                }
            }
            return h;
        } catch (InterruptedException | RuntimeException e) {
            h.close();
            throw e;
        }
    }

    private void add(MeshStore store, String path, byte[] data) {
        PersistentNode n = new PersistentNode(store.client(), CreateMode.EPHEMERAL, false, path, data);
        nodes.add(n);
        paths.add(path);
        n.start();
    }

    /**
     * Deletes every node on a thread of its own, for a caller that holds the host fence and must not wait for
     * ZooKeeper. A closed {@code PersistentNode} never comes back (CURATOR-297: one closed before its create answered
     * deletes what the create made).
     */
    void closeInBackground() {
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
