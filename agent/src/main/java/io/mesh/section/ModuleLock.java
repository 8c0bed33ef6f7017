package io.mesh.section;

import io.mesh.curator.LockNodes;
import io.mesh.curator.PersistentParents;
import io.mesh.curator.ZkClock;
import io.mesh.wire.Json;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The module lock: one Curator {@link InterProcessMutex} per module per host, at {@code /mesh/locks/<module>/<host>},
 * taken by every apply and every window of that module on that host, in whichever process runs them.
 *
 * <p>Each lock child (Curator's protected ephemeral-sequential node) carries a {@link LockHolder} as its data, so
 * {@code zkCli} shows who holds the lock (lowest sequence) and who waits.
 *
 * <p>The lock's parent is made persistent before the first acquisition ({@link PersistentParents}); for a host with an
 * identity of its own the coordinators have made it ({@code io.mesh.curator.LockNodes}), and the host may not.
 *
 * <p>Per Curator's documentation, an {@code InterProcessMutex} is owned by the thread that acquired it:
 * {@link #release()} must be called on that thread. One instance serves one acquisition; make a new one per apply
 * or window (they are cheap).
 */
public final class ModuleLock implements AutoCloseable {
    /**
     * Told how long each {@link #acquire(Duration)} waited, for metrics ({@code io.mesh.agent.AgentMetrics}).
     */
    @FunctionalInterface
    public interface WaitObserver {
        /**
         * @param module   module name
         * @param host     host id
         * @param purpose  {@link LockHolder#APPLY} or {@code window:<schedule>}
         * @param waited   how long this acquire call waited
         * @param acquired whether it got the lock
         */
        void waited(String module, String host, String purpose, Duration waited, boolean acquired);
    }

    private static volatile WaitObserver observer;

    /**
     * Sets the process-wide observer of lock waits (one per process: the agent's metrics), or {@code null} for none.
     *
     * @param o the observer; it must return quickly and never throw
     */
    public static void observeWaits(WaitObserver o) { observer = o; }

    private static final Logger log = LoggerFactory.getLogger(ModuleLock.class);
    private final CuratorFramework client;
    private final Mutex mutex;
    private final String module;
    private final String path;
    private final LockHolder holder;
    private volatile boolean held;
    private volatile boolean spent;

    /**
     * @param client  a started Curator client
     * @param paths   the layout
     * @param module  module name
     * @param host    host id
     * @param who     the process taking the lock
     * @param purpose {@link LockHolder#APPLY} or {@link LockHolder#windowPurpose(String)}
     */
    public ModuleLock(CuratorFramework client, ZkPaths paths, String module, String host, ProcessRef who, String purpose) {
        this.client = client;
        this.module = module;
        this.path = paths.lock(module, host);
        this.holder = new LockHolder(host, who.pid(), who.process(), purpose, Times.now());
        this.mutex = new Mutex(client, path, Json.bytes(holder));
    }

    /** Curator's mutex, with the holder's JSON as its lock node's data and its own lock node's path readable. */
    private static final class Mutex extends InterProcessMutex {
        private final byte[] data;

        Mutex(CuratorFramework client, String path, byte[] data) {
            super(client, path);
            this.data = data;
        }

        @Override
        protected byte[] getLockNodeBytes() {
            return data;
        }

        /** @return the lock node the calling thread holds, or {@code null} */
        String ownNode() {
            return getLockPath();
        }
    }

    /** @return the lock's path, {@code /mesh/locks/<module>/<host>} */
    public String path() { return path; }

    /** @return what this lock's node says of its holder */
    public LockHolder holder() { return holder; }

    /**
     * Waits for the lock at most {@code wait}.
     *
     * @param wait how long to wait; zero to try once
     * @return true when acquired
     * @throws Exception from ZooKeeper (connection loss, session expiry) as Curator throws it
     */
    public boolean acquire(Duration wait) throws Exception {
        // After releaseWith, Curator's mutex still counts this thread as its holder: it would "re-enter" without a node.
        if (spent) throw new IllegalStateException("this ModuleLock was released with releaseWith; make a new one");
        long t0 = System.nanoTime();
        AtomicInteger users = USERS.computeIfAbsent(path, p -> new AtomicInteger());
        users.incrementAndGet();
        boolean ok = false;
        try {
            try {
                PersistentParents.ensure(client, path);
            } catch (KeeperException.NoAuthException e) {
                // A host's identity may not make its own lock node (SPEC "Identities"): the coordinators make it.
                throw new IllegalStateException(path + " is missing and host " + holder.host() + " may not make it: the coordinators "
                        + "make each registered host's module-lock node (at each push naming the host, at their start, and at "
                        + "mesh-coordinator credentials " + holder.host() + "); push the module again or restart a coordinator", e);
            }
            long before = System.currentTimeMillis();
            ok = mutex.acquire(Math.max(0, wait.toMillis()), TimeUnit.MILLISECONDS);
            if (ok && ZkClock.stale(CLOCK_EVERY)) observeClock(before, System.currentTimeMillis());
            if (!ok && users.get() == 1) removeOrphans();
        } finally {
            if (!ok) users.decrementAndGet();
        }
        held = ok;
        WaitObserver o = observer;
        if (o != null) {
            try {
                o.waited(module, holder.host(), holder.purpose(), Duration.ofNanos(System.nanoTime() - t0), ok);
            } catch (RuntimeException ignored) {
                // metrics never break a lock
            }
        }
        return ok;
    }

    /** How often a process that takes locks learns ZooKeeper's clock again from its own lock node ({@link ZkClock}). */
    private static final Duration CLOCK_EVERY = Duration.ofMinutes(1);

    /**
     * Learns ZooKeeper's clock from this lock's node, made between {@code before} and {@code after} (the acquire: a
     * lock that was waited for, or a create that waited for the quorum, teaches nothing, {@link ZkClock#MAX_ROUND_TRIP}):
     * a process that judges holds and freezes (an apply, a window, a hold's stop) does so by ZooKeeper's clock, not its
     * host's. One read, at most once a minute; a failure leaves the last estimate.
     */
    private void observeClock(long before, long after) {
        try {
            String own = mutex.ownNode();
            org.apache.zookeeper.data.Stat st = own == null ? null : client.checkExists().forPath(own);
            if (st != null) ZkClock.observe(st.getCtime(), before, after);
        } catch (Exception e) {
            log.debug("lock {}: ZooKeeper's clock not read: {}", path, e.toString());
        }
    }

    /** @return true when this instance holds the lock */
    public boolean isHeld() { return held && mutex.isAcquiredInThisProcess(); }

    /**
     * Releases the lock; a no-op when not held. Must run on the thread that acquired it.
     *
     * @throws Exception from ZooKeeper when the lock node cannot be deleted (Curator then leaves it to the
     *                   session: it is ephemeral)
     */
    public void release() throws Exception {
        if (!held) return;
        held = false;
        try {
            mutex.release();
        } finally {
            USERS.get(path).decrementAndGet();
        }
    }

    /**
     * Releases the lock in the same ZooKeeper transaction ({@code multi}) as {@code op}, an apply's report
     * (docs/decisions/0005-persistent-parents-and-report-with-release.md). A failed transaction may still have been
     * applied with its answer lost, so the caller checks ({@code MeshStore.landed}) before it writes again, then
     * calls {@link #release()}. After a successful call this instance is done: {@link #acquire} refuses. Must run on
     * the thread that acquired the lock.
     *
     * @param op the operation to commit with the release (for example a {@code setData} at an expected version)
     * @return the transaction's results, {@code op}'s first; {@code null} when the transaction failed or the lock is
     *         not held by this thread
     * @throws Exception other than {@link KeeperException} (interrupted, for one), as Curator throws it
     */
    public List<CuratorTransactionResult> releaseWith(CuratorOp op) throws Exception {
        if (!held) return null;
        String node = mutex.ownNode();
        if (node == null) return null;
        List<CuratorTransactionResult> results;
        try {
            results = client.transaction().forOperations(op, client.transactionOp().delete().forPath(node));
        } catch (KeeperException e) {
            log.debug("lock {} and {} not committed together ({}); written and released one after the other", node, op, e.toString());
            return null;
        }
        // The node is gone: this instance is done. (Curator's own release would now try to delete it again.)
        held = false;
        spent = true;
        USERS.get(path).decrementAndGet();
        return results;
    }

    /**
     * How many {@code ModuleLock}s of this JVM are acquiring or holding each lock path. Only when this one is alone
     * can a lock child of this session be known to belong to nobody.
     */
    private static final Map<String, AtomicInteger> USERS = new ConcurrentHashMap<>();

    /**
     * Deletes the lock children that this client's own session created but that no acquisition of this JVM owns: the
     * node of a protected create whose answer was lost. Curator deletes those in the background
     * ({@code FindAndDeleteProtectedNodeInBackground}, CURATOR-45), but gives up when its retries run out, and then the
     * node blocks the lock for as long as the session lives (failure model, row 11). Called after an
     * acquisition timed out while this instance was the only one of this JVM on this path, so any child of this
     * session is nobody's. Errors are ignored: the next attempt looks again.
     */
    private void removeOrphans() {
        try {
            long session = client.getZookeeperClient().getZooKeeper().getSessionId();
            for (String child : client.getChildren().forPath(path)) {
                String node = ZKPaths.makePath(path, child);
                Stat stat = client.checkExists().forPath(node);
                if (stat != null && stat.getEphemeralOwner() == session && USERS.get(path).get() == 1) {
                    log.warn("deleting lock node {}: made by this process's session, owned by no acquisition (a create whose answer was lost)", node);
                    client.delete().guaranteed().forPath(node);
                }
            }
        } catch (Exception e) {
            log.debug("looking for orphan children of {}: {}", path, e.toString());
        }
    }

    /** Same as {@link #release()}, for try-with-resources. */
    @Override
    public void close() throws Exception {
        release();
    }

    /**
     * Reads who holds and who waits for a module lock; {@link LockHolder#read}, which the coordinator uses too.
     *
     * @param client a started Curator client
     * @param paths  the layout
     * @param module module name
     * @param host   host id
     * @return holder first, then waiters in order; empty when nobody holds it
     * @throws Exception from ZooKeeper
     */
    public static List<LockHolder> holders(CuratorFramework client, ZkPaths paths, String module, String host) throws Exception {
        return LockNodes.holders(client, paths, module, host);
    }
}
