package io.mesh.curator;

import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * {@link #read} or {@link #readAll}, where a node whose data does not parse still means held (failure model row 22), and
 * so does one whose {@code host} or {@code container} differs from its path: under per-host identities a host writes
 * only under its own path, so the path is the truth (docs/decisions/0019-host-identities.md).
 *
 * <p>A window's nodes are {@link HeldNode}s: ephemeral, made again by themselves after the window's process gets a
 * new ZooKeeper session, gone with the process, and never taking over or deleting a node they did not make (an
 * operator's hold found at a path is left as it is: {@link #operatorHolding}). An operator's hold
 * ({@code mesh hold}, {@link #hold}) is a plain persistent node instead, written by the coordinator, released by
 * {@link #release} or deleted by its host's agent once expired ({@link #deleteExpired}); {@link #inForce} is what an
 * apply or a window obeys. Their parents,
 * {@code /mesh/windows/<host>} and {@code /mesh/held/<host>}, are persistent ({@link PersistentParents}).
 */
public final class HeldRegistry implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HeldRegistry.class);
    private final List<HeldNode> nodes = new ArrayList<>();
    private final String window;

    /**
     * The held containers of one host, by Docker name.
     *
     * @param client a started Curator client
     * @param paths  the layout
     * @param host   host id
     * @return each held node's record; one whose data does not parse, or names another host or container than its
     *         path, reads as {@link HeldRecord#unreadable} of its path
     * @throws Exception from ZooKeeper
     */
    public static Map<String, HeldRecord> read(CuratorFramework client, ZkPaths paths, String host) throws Exception {
        List<String> names;
        try {
            names = client.getChildren().forPath(paths.held(host));
        } catch (KeeperException.NoNodeException e) {
            return new LinkedHashMap<>();
        }
        return read(client, paths, host, names);
    }

    /**
     * The held nodes of one host whose names are known (the children of {@code /mesh/held/<host>} read by the caller),
     * their data read in one round trip: ZooKeeper's {@code multi} of reads (3.6 or later on the servers).
     *
     * @param client a started Curator client
     * @param paths  the layout
     * @param host   host id
     * @param names  the held nodes' names (Docker container names); one gone meanwhile is left out (released)
     * @return as {@link #read(CuratorFramework, ZkPaths, String)}, in the order of the names sorted
     * @throws Exception from ZooKeeper
     */
    public static Map<String, HeldRecord> read(CuratorFramework client, ZkPaths paths, String host, List<String> names) throws Exception {
        Map<String, HeldRecord> out = new LinkedHashMap<>();
        if (names.isEmpty()) return out;
        List<String> sorted = names.stream().sorted().toList();
        List<OpResult> results = MultiRead.of(client, sorted.stream().map(n -> Op.getData(paths.held(host, n))).toList());
        for (int i = 0; i < sorted.size(); i++) {
            OpResult r = results.get(i);
            if (MultiRead.missing(r, paths.held(host, sorted.get(i)))) continue; // released meanwhile
            out.put(sorted.get(i), recordAt(((OpResult.GetDataResult) r).getData(), host, sorted.get(i)));
        }
        return out;
    }

    /**
     * @return the record in {@code data} when it parses and names {@code host} and {@code container}, the node's path;
     *         else {@link HeldRecord#unreadable} of that path (still held: a host may forge its own node's data, not
     *         another host's path)
     */
    private static HeldRecord recordAt(byte[] data, String host, String container) {
        HeldRecord h = Json.readOrNull(data, HeldRecord.class);
        if (h != null && host.equals(h.host()) && container.equals(h.container())) return h;
        return HeldRecord.unreadable(host, container);
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

    /**
     * The held containers of one host that an apply or a window must obey now: {@link #read}, less the operator holds
     * whose {@code until} has passed (an expired hold holds nothing, even before its host's agent deletes its node).
     *
     * @param now the time to judge expiry at
     * @return each held node in force, by Docker name
     * @throws Exception from ZooKeeper
     */
    public static Map<String, HeldRecord> inForce(CuratorFramework client, ZkPaths paths, String host, Instant now) throws Exception {
        return inForce(read(client, paths, host), now);
    }

    /**
     * @param held held nodes as {@link #read} gives them (changed in place)
     * @param now  the time to judge expiry at
     * @return {@code held} less the operator holds whose {@code until} has passed ({@link #inForce(CuratorFramework,
     *         ZkPaths, String, Instant)})
     */
    public static Map<String, HeldRecord> inForce(Map<String, HeldRecord> held, Instant now) {
        held.values().removeIf(h -> h.expiredAt(now));
        return held;
    }

    /**
     * Which window holds some of {@code names}, for a report that defers to it: the first of them held by a window
     * (not by an operator, whose hold is no window).
     *
     * @param held  held nodes by Docker name
     * @param names Docker names of the containers an apply met held
     * @return the first such window's held node; {@code null} when every one is an operator's hold (or none is known)
     */
    public static HeldRecord windowHolding(Map<String, HeldRecord> held, List<String> names) {
        for (String n : names) {
            HeldRecord h = held.get(n);
            if (h != null && !h.operatorHold()) return h;
        }
        return null;
    }

    /** Why {@link #hold} wrote nothing: the container already has a held node. */
    public static final class AlreadyHeldException extends Exception {
        private final HeldRecord existing;

        AlreadyHeldException(HeldRecord existing, String message) {
            super(message);
            this.existing = existing;
        }

        /** @return the node already there ({@link HeldRecord#unreadable} when unreadable, null when it went meanwhile) */
        public HeldRecord existing() { return existing; }
    }

    /**
     * Writes an operator's hold ({@code mesh hold}) as a persistent node: it outlives every session and restart, and
     * ends by {@link #release}, or at its {@code until} (the host's agent deletes it then, {@link #deleteExpired}).
     * Refused, writing nothing, when the container already has a held node (a window's, or another operator hold
     * still in force); an expired operator hold is replaced (versioned: whoever else changed it meanwhile wins).
     *
     * @param record a record made by {@link HeldRecord#operator}
     * @throws AlreadyHeldException naming the window or operator hold already there
     * @throws Exception            from ZooKeeper
     */
    public static void hold(CuratorFramework client, ZkPaths paths, HeldRecord record) throws Exception {
        if (!record.operatorHold()) throw new IllegalArgumentException("not an operator hold: " + record);
        PersistentParents.ensure(client, paths.held(record.host()));
        String path = paths.held(record.host(), record.container());
        try {
            long before = System.currentTimeMillis();
            org.apache.zookeeper.data.Stat st = new org.apache.zookeeper.data.Stat();
            client.create().storingStatIn(st).withMode(CreateMode.PERSISTENT).forPath(path, Json.bytes(record));
            ZkClock.observeCreate(st, before); // the next hold's since is ZooKeeper's time to the round trip
            return;
        } catch (KeeperException.NodeExistsException e) {
            // read below
        }
        ZkNode node = ZkNode.read(client, path);
        if (node == null) {
            throw new AlreadyHeldException(null, record.container() + " on " + record.host() + " was being held or released meanwhile; try again");
        }
        HeldRecord there = recordAt(node.data(), record.host(), record.container());
        // This very record: Curator's retry of a create whose answer a lost connection took met the node that create
        // made (its since, by and process make it this call's own). Answering "already held" would leave a hold its
        // operator was told was refused.
        if (there.equals(record)) return;
        if (there.operatorHold() && there.expiredAt(ZkClock.earliest())) {
            try {
                client.setData().withVersion(node.version()).forPath(path, Json.bytes(record));
                return;
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException raced) {
                throw new AlreadyHeldException(null, record.container() + " on " + record.host() + " changed meanwhile; try again");
            }
        }
        throw new AlreadyHeldException(there, record.container() + " on " + record.host() + " is already " + there.reason());
    }

    /**
     * Deletes an operator's hold ({@code mesh release}). A window's held node is never deleted here: it ends with its
     * window.
     *
     * @return the hold deleted; {@code null} when there was none
     * @throws AlreadyHeldException when the node is a window's (nothing deleted)
     * @throws Exception            from ZooKeeper
     */
    public static HeldRecord release(CuratorFramework client, ZkPaths paths, String host, String container) throws Exception {
        String path = paths.held(host, container);
        ZkNode node = ZkNode.read(client, path);
        if (node == null) return null;
        HeldRecord there = recordAt(node.data(), host, container);
        if (!there.operatorHold()) {
            throw new AlreadyHeldException(there, container + " on " + host + " is " + there.reason() + ", not by an operator: it ends with its window");
        }
        try {
            client.delete().withVersion(node.version()).forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
        return there;
    }

    /** Why {@link #releaseStale} deleted nothing: the node is an operator's hold, or a live session's. */
    public static final class NotStaleException extends Exception {
        private final HeldRecord existing;

        NotStaleException(HeldRecord existing, String message) {
            super(message);
            this.existing = existing;
        }

        /** @return the node as read ({@link HeldRecord#unreadable} when unreadable) */
        public HeldRecord existing() { return existing; }
    }

    /**
     * Deletes a held node that nothing owns ({@code mesh release HOST CONTAINER --stale}, SPEC.md "Operator holds"): a
     * persistent node that is not an operator's hold, such as one made by hand with a window's data, or with data
     * that cannot be read. Its path is the truth, as for every reader: a node whose data names another host or
     * container reads as unreadable of its path, and is stale unless a live session owns it.
     * Never deleted here: an operator's hold (that ends with {@link #release}), and an ephemeral node, which exists
     * only while the session that made it lives (its window runs, or its process died less than a session timeout
     * ago), and goes with it.
     *
     * @return the node deleted, as read; {@code null} when there was none
     * @throws NotStaleException naming what owns the node and what to do instead; nothing deleted
     * @throws Exception         from ZooKeeper
     */
    public static HeldRecord releaseStale(CuratorFramework client, ZkPaths paths, String host, String container) throws Exception {
        String path = paths.held(host, container);
        ZkNode node = ZkNode.read(client, path);
        if (node == null) return null;
        HeldRecord there = recordAt(node.data(), host, container);
        if (there.operatorHold()) {
            throw new NotStaleException(there, container + " on " + host + " is " + there.reason() + ": an operator's hold, not stale; "
                    + "end it with mesh release " + host + " " + container + " (without --stale)");
        }
        long owner = node.stat().getEphemeralOwner();
        if (owner != 0) {
            boolean window = !HeldRecord.UNREADABLE.equals(there.window());
            throw new NotStaleException(there, path + " is an ephemeral node of the live ZooKeeper session 0x" + Long.toHexString(owner)
                    + (window ? ": its window " + there.window() + " (schedule " + there.schedule() + ") runs; wait for it to end"
                    : ": the process that made it still runs; it goes when that process ends")
                    + " (a dead process's node goes once its session expires, within " + MeshZk.SESSION_TIMEOUT.toSeconds() + " s)");
        }
        try {
            client.delete().withVersion(node.version()).forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return null;
        } catch (KeeperException.BadVersionException e) {
            throw new NotStaleException(null, path + " changed while it was read; look at it again (mesh held) before removing it");
        }
        return there;
    }

    /**
     * Deletes an operator hold whose {@code until} has passed, only if its node is still the one read (versioned):
     * an operator who placed a new hold meanwhile keeps it. The host's agent calls it.
     *
     * @param now the time to judge expiry at
     * @return true when this call deleted it
     * @throws Exception from ZooKeeper
     */
    public static boolean deleteExpired(CuratorFramework client, ZkPaths paths, String host, String container, Instant now) throws Exception {
        String path = paths.held(host, container);
        ZkNode node = ZkNode.read(client, path);
        HeldRecord h = node == null ? null : node.as(HeldRecord.class);
        if (h == null || !h.expiredAt(now)) return false;
        try {
            client.delete().withVersion(node.version()).forPath(path);
            return true;
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
            return false;
        }
    }

    /**
     * Records in an operator hold that its container was stopped ({@code --stop}), versioned, so that no agent stops it
     * again after a restart.
     *
     * @param read the hold as read before the stop
     * @param at   when it was stopped
     * @return true when recorded; false when the node changed or went meanwhile (released, or replaced)
     * @throws Exception from ZooKeeper
     */
    public static boolean markStopped(CuratorFramework client, ZkPaths paths, HeldRecord read, Instant at) throws Exception {
        return rewrite(client, paths, read, read.hold().stoppedAt(at));
    }

    /**
     * Confirms an operator hold: from this write on it is in force (SPEC.md "Operator holds"). Only the host's agent
     * calls it, inside the module's critical section, fenced (docs/decisions/0025-hold-confirmation.md). Versioned: a
     * hold released or replaced since {@code read} is left as it is.
     *
     * @param read the hold as read holding the module lock
     * @param at   the confirmation's time
     * @return the hold as confirmed; {@code null} when the node changed or went meanwhile
     * @throws Exception from ZooKeeper
     */
    public static HeldRecord confirm(CuratorFramework client, ZkPaths paths, HeldRecord read, Instant at) throws Exception {
        HeldRecord.OperatorHold confirmed = read.hold().confirmedAt(at);
        return rewrite(client, paths, read, confirmed) ? withHold(read, confirmed) : null;
    }

    /** Writes {@code hold} into the node of {@code read} if its data is still {@code read} (versioned). */
    private static boolean rewrite(CuratorFramework client, ZkPaths paths, HeldRecord read, HeldRecord.OperatorHold hold) throws Exception {
        String path = paths.held(read.host(), read.container());
        ZkNode node = ZkNode.read(client, path);
        HeldRecord now = node == null ? null : node.as(HeldRecord.class);
        if (now == null || !read.equals(now)) return false;
        try {
            client.setData().withVersion(node.version()).forPath(path, Json.bytes(withHold(now, hold)));
            return true;
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
            return false;
        }
    }

    private static HeldRecord withHold(HeldRecord h, HeldRecord.OperatorHold hold) {
        return new HeldRecord(h.host(), h.module(), h.container(), h.containerId(), null, null, h.since(), h.by(), hold);
    }

    private HeldRegistry(String window) { this.window = window; }

    /** Why {@link #publish} stopped nothing: an operator holds some of the window's containers. */
    public static final class HeldByOperatorException extends IllegalStateException {
        private final List<HeldRecord> holds;

        HeldByOperatorException(List<HeldRecord> holds) {
            super("held by operator: " + String.join(", ", holds.stream().map(h -> h.container() + " (" + h.reason() + ")").toList())
                    + "; nothing was stopped");
            this.holds = List.copyOf(holds);
        }

        /** @return the operators' holds met */
        public List<HeldRecord> holds() { return holds; }
    }

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
     * @throws HeldByOperatorException when an operator's hold is at one of the held paths (it is left as it is; every
     *                                 node this call made is deleted again)
     * @throws IllegalStateException   when a parent cannot be made, or a node is not confirmed in time (every node is
     *                                 deleted again then)
     * @throws InterruptedException    when interrupted while waiting
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
        HeldRegistry h = startInBackground(client, paths, host, module, schedule, window, since, held, by);
        try {
            long end = System.nanoTime() + wait.toNanos();
            for (HeldNode n : h.nodes) {
                if (!n.awaitFirstAnswer(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    throw new IllegalStateException("could not create " + n.path() + " within " + wait.toSeconds() + "s");
                }
            }
            List<HeldRecord> operators = h.nodes.stream().map(HeldNode::yieldedTo).filter(java.util.Objects::nonNull).toList();
            if (!operators.isEmpty()) throw new HeldByOperatorException(operators);
            return h;
        } catch (InterruptedException | RuntimeException e) {
            h.close();
            throw e;
        }
    }

    /**
     * Starts making the window node and one held node per container, and returns at once, never waiting for
     * ZooKeeper: for a recovery, whose give-back must not wait for it, while every process still sees the dead window's
     * containers held until they run again (SPEC.md "ZooKeeper layout"). The parents are the dead window's, already
     * there. Nodes are made as {@link #publish}'s are: an operator's hold found at a path is left as it is
     * ({@link #operatorHolding}).
     *
     * @return the nodes being made; close them to delete them
     */
    public static HeldRegistry startInBackground(CuratorFramework client, ZkPaths paths, String host, String module, String schedule,
                                                 String window, Instant since, List<String[]> held, ProcessRef by) {
        HeldRegistry h = new HeldRegistry(window);
        List<String> names = held.stream().map(x -> x[0]).toList();
        h.add(client, paths.window(host, module), Json.bytes(new WindowRecord(host, module, schedule, window, since, names, by)));
        for (String[] c : held) {
            h.add(client, paths.held(host, c[0]), Json.bytes(new HeldRecord(host, module, c[0], c[1], schedule, window, since, by)));
        }
        return h;
    }

    private void add(CuratorFramework client, String path, byte[] data) {
        HeldNode n = new HeldNode(client, path, data);
        nodes.add(n);
        n.start();
    }

    /**
     * The operator's hold that this window's node of {@code container} found at its path (placed while the window's
     * session lapsed), as this process last heard: read from memory, never waiting for ZooKeeper, so that a window
     * giving its containers back may ask it (SPEC.md "Operator holds": an operator's hold outranks a window).
     *
     * @param container Docker name
     * @return the hold, or {@code null}
     */
    public HeldRecord operatorHolding(String container) {
        for (HeldNode n : nodes) {
            HeldRecord h = n.yieldedTo();
            if (h != null && h.operatorHold() && n.path().endsWith("/" + container)) return h;
        }
        return null;
    }

    /**
     * Deletes every node on a thread of its own, for a caller that holds the host fence and must not wait for
     * ZooKeeper. A closed {@link HeldNode} never comes back (one closed before its create answered deletes what the
     * create made).
     */
    public void closeInBackground() {
        Thread t = new Thread(this::close, "held-nodes-close-" + window);
        t.setDaemon(true);
        t.start();
    }

    /** Deletes every node this window made (best effort: they are ephemeral and go with the session anyway). */
    @Override
    public void close() {
        for (HeldNode n : nodes) {
            try {
                n.close();
            } catch (RuntimeException e) {
                log.warn("window {}: a node was not deleted cleanly ({}); it is ephemeral and goes with the session", window, e.getMessage());
            }
        }
        nodes.clear();
    }
}
