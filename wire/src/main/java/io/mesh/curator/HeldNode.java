package io.mesh.curator;

import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One ephemeral node a window publishes ({@code /mesh/held/<host>/<container>} or {@code /mesh/windows/<host>/<module>}),
 * kept while the window runs: made again after its session is lost, as Curator's {@code PersistentNode} does, but
 * <b>never taking over or deleting a node it did not make</b> (docs/decisions/0025-hold-confirmation.md).
 *
 * <p>{@code PersistentNode} meets an existing node by writing its own data over it and deletes it on close, whoever
 * made it: an operator's hold placed while the window's session lapsed, while its host was down, or between the
 * window's check and its publish was overwritten and then deleted. Here a node found at the path is:
 * <ul>
 *   <li>this session's own (a create whose answer was lost): kept;</li>
 *   <li>a persistent node, an operator's hold ({@code mesh hold}): left as it is, the node is {@link #yieldedTo} that hold
 *       until it goes (released), when this node is made again;</li>
 *   <li>another session's ephemeral node (a dead process's, until its session expires): waited out, then made.</li>
 * </ul>
 * {@link #close} deletes the node only if this session made it (its {@code ephemeralOwner}), versioned. States move
 * forward only ({@link State}), by compare-and-set.
 */
public final class HeldNode implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HeldNode.class);

    /** Where a node is. */
    public enum State {
        /** not started */
        LATENT,
        /** made or being made; kept while the session changes */
        STARTED,
        /** closed: never made again */
        CLOSED
    }

    private final CuratorFramework client;
    private final String path;
    private final byte[] data;
    private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
    /** Counted down once the node is first made, or first found held by an operator. */
    private final CountDownLatch firstAnswer = new CountDownLatch(1);
    /** The session that made the node now at the path, 0 when none of this node's. */
    private volatile long ownSession;
    /**
     * The session the last create was sent in, 0 before any: a create whose answer was lost (a connection loss) or
     * had not come at {@link #close} may have made the node all the same.
     */
    private volatile long sentIn;
    private volatile HeldRecord yieldedTo;

    private final ConnectionStateListener connection = (c, s) -> {
        if (s == ConnectionState.RECONNECTED) create(); // a new session lost the ephemeral node; a same one finds its own
    };
    private final Watcher watcher = this::watched;
    private final BackgroundCallback created = (c, e) -> created(e);
    private final BackgroundCallback read = (c, e) -> read(e);

    /**
     * @param client a started Curator client
     * @param path   the node's path; its parent must exist
     * @param data   the node's data
     */
    public HeldNode(CuratorFramework client, String path, byte[] data) {
        this.client = client;
        this.path = path;
        this.data = data.clone();
    }

    /** @return the node's path */
    public String path() { return path; }

    /** @return where this node is */
    public State state() { return state.get(); }

    /**
     * @return the operator's hold found at the path when this node last looked and not made since, else {@code null}:
     *         read from memory, never waiting for ZooKeeper
     */
    public HeldRecord yieldedTo() { return yieldedTo; }

    /** @return true while this session's node is at the path, as far as this process last heard */
    public boolean made() { return ownSession != 0; }

    /** Makes the node, in the background. */
    public void start() {
        if (!state.compareAndSet(State.LATENT, State.STARTED)) throw new IllegalStateException("start() in state " + state.get());
        client.getConnectionStateListenable().addListener(connection);
        create();
    }

    /**
     * Waits for the first answer: the node made, or found held by an operator ({@link #yieldedTo}).
     *
     * @param timeout the longest wait
     * @param unit    its unit
     * @return true when answered in time
     * @throws InterruptedException when interrupted
     */
    public boolean awaitFirstAnswer(long timeout, TimeUnit unit) throws InterruptedException {
        return firstAnswer.await(timeout, unit);
    }

    private boolean active() { return state.get() == State.STARTED; }

    private long session() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    private void create() {
        if (!active()) return;
        try {
            sentIn = session();
            client.create().withMode(CreateMode.EPHEMERAL).inBackground(created).forPath(path, data);
        } catch (Exception e) {
            log.warn("held node {}: create not sent ({}); tried again when ZooKeeper reconnects", path, e.toString());
        }
    }

    private void created(CuratorEvent e) {
        KeeperException.Code code = KeeperException.Code.get(e.getResultCode());
        if (code == KeeperException.Code.OK) {
            long owner = session();
            ownSession = owner;
            yieldedTo = null;
            if (!active()) { // closed while the create was under way: it must not outlive the close (CURATOR-297)
                deleteInBackgroundIfOwn(owner);
                return;
            }
            firstAnswer.countDown();
            watch();
        } else if (code == KeeperException.Code.NODEEXISTS) {
            look();
        } else if (code == KeeperException.Code.NONODE) {
            log.warn("held node {}: its parent is missing; tried again when ZooKeeper reconnects", path);
        } else if (code != KeeperException.Code.CONNECTIONLOSS && code != KeeperException.Code.SESSIONEXPIRED) {
            log.warn("held node {}: create failed ({}); tried again when ZooKeeper reconnects", path, code);
        } // a connection loss: the RECONNECTED listener creates again
    }

    /** Reads the node at the path, watching it, to learn whose it is. */
    private void look() {
        if (!active()) return;
        try {
            client.getData().usingWatcher(watcher).inBackground(read).forPath(path);
        } catch (Exception e) {
            log.warn("held node {}: not read ({}); tried again when ZooKeeper reconnects", path, e.toString());
        }
    }

    /** Watches this node's own node, so that its deletion (by hand, by a session's end) makes it again. */
    private void watch() {
        look();
    }

    private void read(CuratorEvent e) {
        if (!active()) return;
        KeeperException.Code code = KeeperException.Code.get(e.getResultCode());
        if (code == KeeperException.Code.NONODE) {
            ownSession = 0;
            create();
            return;
        }
        if (code != KeeperException.Code.OK) return; // a connection loss: the RECONNECTED listener creates again
        Stat st = e.getStat();
        long mine = session();
        if (st.getEphemeralOwner() != 0 && st.getEphemeralOwner() == mine) {
            ownSession = mine;
            yieldedTo = null;
            firstAnswer.countDown();
            return; // ours; the watch set by this read reports its deletion
        }
        ownSession = 0;
        if (st.getEphemeralOwner() == 0) {
            HeldRecord h = Json.readOrNull(e.getData(), HeldRecord.class);
            // A persistent node here is an operator's hold (or one that does not parse, which still means held).
            yieldedTo = h != null && h.operatorHold() ? h : HeldRecord.unreadable(null, path.substring(path.lastIndexOf('/') + 1));
            log.warn("held node {}: an operator's hold is there; left as it is ({})", path, yieldedTo.reason());
            firstAnswer.countDown();
        }
        // Another session's ephemeral node: the watch set by this read says when it goes.
    }

    private void watched(WatchedEvent e) {
        if (!active()) return;
        if (e.getType() == Watcher.Event.EventType.NodeDeleted) {
            ownSession = 0;
            create();
        } else if (e.getType() == Watcher.Event.EventType.NodeDataChanged || e.getType() == Watcher.Event.EventType.NodeCreated) {
            look();
        }
    }

    /**
     * As {@link #deleteIfOwn}, without blocking the ZooKeeper event thread it is called on; a check or delete that
     * ZooKeeper did not answer is tried again once it does, while {@code owner}'s session lives.
     */
    private void deleteInBackgroundIfOwn(long owner) {
        try {
            client.checkExists().inBackground((c, e) -> {
                Stat st = e.getStat();
                if (unanswered(e)) {
                    deleteOnReconnect(owner);
                } else if (st != null && st.getEphemeralOwner() == owner) {
                    c.delete().withVersion(st.getVersion()).inBackground((c2, d) -> {
                        if (unanswered(d)) deleteOnReconnect(owner);
                    }).forPath(path);
                }
            }).forPath(path);
        } catch (Exception x) {
            log.warn("held node {}: not deleted ({}); it is ephemeral and goes with the session", path, x.toString());
        }
    }

    private static boolean unanswered(CuratorEvent e) {
        KeeperException.Code code = KeeperException.Code.get(e.getResultCode());
        return code == KeeperException.Code.CONNECTIONLOSS || code == KeeperException.Code.OPERATIONTIMEOUT;
    }

    /** Deletes {@code owner}'s node once ZooKeeper answers again, as Curator's guaranteed delete, while that session lives. */
    private void deleteOnReconnect(long owner) {
        log.warn("held node {}: not deleted yet (ZooKeeper did not answer); deleted when it answers again, or it goes with the session", path);
        ConnectionStateListener retry = new ConnectionStateListener() {
            @Override
            public void stateChanged(CuratorFramework c, ConnectionState s) {
                if (!s.isConnected()) return;
                c.getConnectionStateListenable().removeListener(this);
                if (session() == owner) deleteInBackgroundIfOwn(owner);
            }
        };
        client.getConnectionStateListenable().addListener(retry);
        if (client.getZookeeperClient().isConnected() && session() == owner) {
            client.getConnectionStateListenable().removeListener(retry);
            deleteInBackgroundIfOwn(owner);
        }
    }

    /**
     * Deletes the node if {@code owner}'s session made it (versioned).
     *
     * @return true when ZooKeeper answered (deleted, gone, or another's); false when it did not
     */
    private boolean deleteIfOwn(long owner) {
        try {
            Stat st = client.checkExists().forPath(path);
            if (st != null && owner != 0 && st.getEphemeralOwner() == owner) client.delete().withVersion(st.getVersion()).forPath(path);
            return true;
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException gone) {
            return true; // gone, or changed: not ours to delete
        } catch (Exception x) {
            log.warn("held node {}: not deleted yet ({}); deleted when ZooKeeper answers again, or it goes with the session", path, x.toString());
            return false;
        }
    }

    /**
     * Stops keeping the node and deletes it if this session made it (versioned); an operator's hold or another
     * session's node at the path is left as it is. Idempotent.
     */
    @Override
    public void close() {
        if (state.getAndSet(State.CLOSED) == State.CLOSED) return;
        client.getConnectionStateListenable().removeListener(connection);
        // Not known made, the node may be all the same: a create whose answer was lost, or is still on its way (its
        // answer then finds the node closed and deletes it). Whatever this session has at the path is looked for.
        long owner = ownSession != 0 ? ownSession : sentIn;
        ownSession = 0;
        if (owner == 0) return;
        // A window closing after an interrupt still deletes its nodes (an ephemeral node left behind holds the module's
        // applies deferred for as long as the process lives): the interrupt is set again after.
        boolean interrupted = Thread.interrupted();
        try {
            if (deleteIfOwn(owner)) return;
            deleteOnReconnect(owner);
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }
}
