package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonIgnore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.KeeperException;

import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Data of each child of a module lock ({@code /mesh/locks/<module>/<host>/_c_...-lock-...}), so that {@code zkCli}
 * shows who holds the lock (the lowest sequence) and who waits.
 *
 * @param host    host id
 * @param pid     process id of the holder or waiter
 * @param process short description of that process
 * @param purpose {@code apply} or {@code window:<schedule>}
 * @param since   when it asked for the lock
 */
public record LockHolder(String host, long pid, String process, String purpose, Instant since) {
    /** Purpose of an apply. */
    public static final String APPLY = "apply";

    /** @return the purpose of a window of that schedule, {@code window:<schedule>} */
    public static String windowPurpose(String schedule) { return "window:" + schedule; }

    /** @return true when the purpose is a window's (not part of the node's JSON) */
    @JsonIgnore
    public boolean isWindow() { return purpose != null && purpose.startsWith("window:"); }

    /**
     * Reads who holds and who waits for a module lock: the agent's messages about a long wait, the coordinator's
     * {@code GET /v1/locks}.
     *
     * @param client a started Curator client
     * @param paths  the layout
     * @param module module name
     * @param host   host id
     * @return holder first, then waiters in order; empty when nobody holds it. Unreadable children are skipped.
     * @throws Exception from ZooKeeper
     */
    public static List<LockHolder> read(CuratorFramework client, ZkPaths paths, String module, String host) throws Exception {
        String lockPath = paths.lock(module, host);
        Collection<String> nodes;
        try {
            nodes = new InterProcessMutex(client, lockPath).getParticipantNodes();
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
        List<LockHolder> out = new ArrayList<>();
        for (String node : nodes) {
            try {
                out.add(Json.read(client.getData().forPath(node), LockHolder.class));
            } catch (KeeperException.NoNodeException | UncheckedIOException e) {
                // released meanwhile, or not ours
            }
        }
        return out;
    }
}
