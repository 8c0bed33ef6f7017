package io.mesh.agent;

import io.mesh.curator.MeshZk;
import io.mesh.curator.PersistentParents;
import io.mesh.curator.ZkClock;
import io.mesh.curator.ZkNode;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.Json;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code /mesh/agents/<host>}: the ephemeral node that says this process is the agent of its host
 * ({@link AgentRecord}). {@link #claim()} creates it, or refuses with {@link HostTakenException} before anything is
 * written; once claimed it is kept, and {@code onTaken} runs when another agent has the host. The rule:
 * docs/design.md, "One agent per host".
 */
public final class AgentNode implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AgentNode.class);
    /** Beyond the session timeout, how long a claim waits for a dead agent's node: ZooKeeper expires sessions on its ticks. */
    public static final Duration EXPIRY_MARGIN = Duration.ofSeconds(5);

    /** Another live agent has this host: the message names it and says what to do. */
    public static final class HostTakenException extends RuntimeException {
        private final transient AgentRecord holder;

        HostTakenException(String message, AgentRecord holder) {
            super(message);
            this.holder = holder;
        }

        /** @return the agent that has the host, when its node could be read */
        public Optional<AgentRecord> holder() { return Optional.ofNullable(holder); }
    }

    private final CuratorFramework client;
    private final String host;
    private final String path;
    private final byte[] data;
    private final Runnable onTaken;
    private volatile boolean active;
    /** Said once: the node's parent is gone (an empty tree) and this process waits for it. */
    private volatile boolean waitingForParent;
    private volatile boolean claimed;

    /**
     * @param client  a started client
     * @param path    {@code /mesh/agents/<host>}
     * @param me      this agent's record
     * @param onTaken runs (once, on a Curator thread) when another agent took the host after this one had it
     */
    public AgentNode(CuratorFramework client, String path, AgentRecord me, Runnable onTaken) {
        this.client = client;
        this.host = me.host();
        this.path = path;
        this.data = Json.bytes(me);
        this.onTaken = onTaken;
    }

    /** @return true once {@link #claim()} succeeded */
    public boolean claimed() { return claimed; }

    /**
     * Makes this process the agent of its host, or refuses: at once when the node's pid runs on this machine (and
     * started before the node's {@code startedAt}); after waiting up to the session timeout plus
     * {@link #EXPIRY_MARGIN} for the node to go when it belongs to a process that does not run here.
     *
     * @throws HostTakenException naming the agent that has the host: nothing was written
     * @throws Exception          ZooKeeper's errors
     */
    public synchronized void claim() throws Exception {
        if (claimed) return;
        Duration wait = expiryWait();
        long deadline = 0;
        boolean announced = false;
        while (true) {
            PersistentParents.ensure(client, parentOf(path));
            try {
                long before = System.currentTimeMillis();
                org.apache.zookeeper.data.Stat st = new org.apache.zookeeper.data.Stat();
                client.create().storingStatIn(st).withMode(CreateMode.EPHEMERAL).forPath(path, data);
                ZkClock.observeCreate(st, before); // holds' and freezes' ends are judged by ZooKeeper's clock
                if (announced) log.info("agent host={}: the node of the previous agent went; this process is the host's agent now", host);
                break;
            } catch (KeeperException.NodeExistsException e) {
                // someone has it: look who
            }
            ZkNode node = ZkNode.read(client, path);
            if (node == null) continue; // went between the create and the read
            byte[] bytes = node.data();
            Stat stat = node.stat();
            if (stat.getEphemeralOwner() == sessionId()) break; // this session made it (a retried create)
            AgentRecord holder = parse(bytes);
            String who = describe(holder, bytes, stat);
            if (runsHere(holder)) {
                throw new HostTakenException("host " + host + " already has a live agent: " + who + "; stop it first, or use another --host", holder);
            }
            if (deadline == 0) deadline = System.nanoTime() + wait.toNanos();
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new HostTakenException("host " + host + " already has an agent: " + who + ", which does not run on this machine, "
                        + "and its ZooKeeper session stayed alive for " + wait.toSeconds() + "s, so it is live (on another machine?); "
                        + "stop it first, or use another --host", holder);
            }
            if (!announced) {
                log.warn("agent host={}: {} belongs to {}, which does not run on this machine; waiting up to {}s for its ZooKeeper "
                        + "session to expire (an agent killed with kill -9 leaves its node until then)", host, path, who, wait.toSeconds());
                announced = true;
            }
            awaitChange(left);
        }
        claimed = true;
        active = true;
        client.getConnectionStateListenable().addListener(reconnected);
        watch();
    }

    private static String parentOf(String path) {
        return path.substring(0, path.lastIndexOf('/'));
    }

    private Duration expiryWait() {
        Duration session = MeshZk.SESSION_TIMEOUT;
        try {
            session = Duration.ofMillis(Math.max(session.toMillis(), client.getZookeeperClient().getZooKeeper().getSessionTimeout()));
        } catch (Exception e) {
            // not connected: mesh's own session timeout, which every mesh process asks for
        }
        return session.plus(EXPIRY_MARGIN);
    }

    private long sessionId() throws Exception {
        return client.getZookeeperClient().getZooKeeper().getSessionId();
    }

    /** Waits up to {@code nanos} for the node to change or go (a watch), whichever comes first. */
    private void awaitChange(long nanos) throws Exception {
        CountDownLatch changed = new CountDownLatch(1);
        Stat s = client.checkExists().usingWatcher((CuratorWatcher) e -> changed.countDown()).forPath(path);
        if (s != null) changed.await(nanos, TimeUnit.NANOSECONDS);
    }

    private static AgentRecord parse(byte[] bytes) {
        try {
            return Json.read(bytes, AgentRecord.class);
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static String describe(AgentRecord holder, byte[] bytes, Stat stat) {
        String session = "ZooKeeper session 0x" + Long.toHexString(stat.getEphemeralOwner());
        if (holder == null) {
            return "a process whose node reads '" + new String(bytes == null ? new byte[0] : bytes, StandardCharsets.UTF_8)
                    + "' (" + session + ")";
        }
        return "pid " + holder.pid() + ", started at " + holder.startedAt() + ", mesh " + holder.version() + " (" + session + ")";
    }

    /**
     * @return true when the holder's pid runs on this machine and started before its node said it did (a later
     *         process with a reused pid started after the holder died, so after its {@code startedAt})
     */
    static boolean runsHere(AgentRecord holder) {
        if (holder == null) return false;
        Optional<ProcessHandle> p = ProcessHandle.of(holder.pid());
        if (p.isEmpty() || !p.get().isAlive()) return false;
        Optional<Instant> start = p.get().info().startInstant();
        return holder.startedAt() == null || start.isEmpty() || !start.get().isAfter(holder.startedAt().plusSeconds(2));
    }

    private final ConnectionStateListener reconnected = (c, state) -> {
        if (state == ConnectionState.RECONNECTED && active) keep();
    };

    private final CuratorWatcher watcher = (WatchedEvent e) -> {
        if (active && e.getType() == Watcher.Event.EventType.NodeDeleted) keep();
    };

    private void watch() {
        try {
            client.checkExists().usingWatcher(watcher).inBackground((c, e) -> {
                if (e.getResultCode() == KeeperException.Code.NONODE.intValue() && active) keep();
            }).forPath(path);
        } catch (Exception e) {
            log.warn("agent host={}: cannot watch {}: {}", host, path, e.getMessage());
        }
    }

    /** After a lost session or a delete: make the node again, unless another agent has it now. */
    private void keep() {
        try {
            // Parents too, on open ACLs: an ensemble that lost its tree and started empty has no /mesh/agents. A host's
            // identity makes none (MeshZk.asHost): it waits for them (created() looks again every 2 s).
            (MeshZk.asHost(client) ? client.create() : client.create().creatingParentsIfNeeded())
                    .withMode(CreateMode.EPHEMERAL).inBackground((BackgroundCallback) this::created).forPath(path, data);
        } catch (Exception e) {
            log.warn("agent host={}: cannot make {} again: {}", host, path, e.getMessage());
        }
    }

    private void created(CuratorFramework c, CuratorEvent e) throws Exception {
        if (!active) return;
        if (e.getResultCode() == KeeperException.Code.OK.intValue()) {
            log.info("agent host={}: {} made again", host, path);
            watch();
        } else if (e.getResultCode() == KeeperException.Code.NODEEXISTS.intValue()) {
            c.getData().inBackground((CuratorFramework c2, CuratorEvent r) -> {
                if (!active) return;
                if (r.getResultCode() == KeeperException.Code.NONODE.intValue()) {
                    keep();
                } else if (r.getResultCode() == KeeperException.Code.OK.intValue()) {
                    if (r.getStat().getEphemeralOwner() == sessionId()) {
                        watch(); // ours (the session came back)
                        return;
                    }
                    if (Arrays.equals(r.getData(), data)) {
                        // This process's own node, of the session it lost: Curator declares a session lost after its
                        // timeout on its own clock, and the ensemble may not have expired it yet (a quorum that came
                        // back after the timeout). Not another agent: delete it, then make it again.
                        log.info("agent host={}: {} is still this process's node of its lost session; making it again", host, path);
                        c2.delete().withVersion(r.getStat().getVersion()).inBackground((c3, d) -> {
                            if (!active) return;
                            if (d.getResultCode() == KeeperException.Code.NOAUTH.intValue()) {
                                // A host identity may create under /mesh/agents but not delete (decision 19): the old
                                // session's node goes when the ensemble expires it; look again in a second, not in a loop.
                                CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS).execute(() -> { if (active) keep(); });
                            } else {
                                keep();
                            }
                        }).forPath(path);
                        return;
                    }
                    active = false;
                    log.error("agent host={}: another agent took this host while this process had no ZooKeeper session: {}; "
                            + "this one stops (one agent per host)", host, describe(parse(r.getData()), r.getData(), r.getStat()));
                    onTaken.run();
                }
            }).forPath(path);
        } else if (e.getResultCode() == KeeperException.Code.NONODE.intValue()) {
            // no /mesh/agents: the tree is empty and this host's identity does not make it (decision 39 item 6)
            if (!waitingForParent) {
                waitingForParent = true;
                log.warn("agent host={}: {} has no parent: the tree is empty; waiting for a coordinator or mesh-coordinator "
                        + "credentials {} to make it again", host, path, host);
            }
            CompletableFuture.delayedExecutor(2, TimeUnit.SECONDS).execute(() -> { if (active) keep(); });
            return;
        } else if (e.getResultCode() != KeeperException.Code.CONNECTIONLOSS.intValue()) {
            log.warn("agent host={}: making {} again failed: {}", host, path, KeeperException.Code.get(e.getResultCode()));
        }
        waitingForParent = false;
        // connection loss: RECONNECTED makes it again
    }

    /** Deletes the node if this session has it; stops keeping it. */
    @Override
    public void close() {
        active = false;
        client.getConnectionStateListenable().removeListener(reconnected);
        if (!claimed) return;
        try {
            Stat s = client.checkExists().forPath(path);
            if (s != null && s.getEphemeralOwner() == sessionId()) client.delete().withVersion(s.getVersion()).forPath(path);
        } catch (KeeperException.NoAuthException e) {
            log.debug("agent host={}: {} not deleted (a host identity may not delete under /mesh/agents); it goes with the session", host, path);
        } catch (Exception e) {
            log.warn("agent host={}: {} not deleted ({}); it goes with the session", host, path, e.getMessage());
        }
    }
}
