package io.mesh.curator;

import io.mesh.wire.Json;
import io.mesh.wire.MeshEvent;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Writes events into the webhooks' outbox in ZooKeeper, {@code /mesh/events/<writer>/e-<seq>}
 * (docs/decisions/0034-webhooks-from-an-outbox.md): the process where an event happens writes it, and the leading
 * coordinator only sends it. The node's name is the event's id ({@code <writer>/e-<seq>}), so the data carries none.
 *
 * <p>{@link #post} never waits: a window does not wait for its event (decision 34). It hands the event to one daemon
 * thread of this outbox, which writes it with the client's retry policy; an event that cannot be written (ZooKeeper
 * down past the retries, the queue of {@value #QUEUE} full, the process stopping) is logged at WARN with the whole
 * event and is lost: the spool under {@code --state-dir} that the decision first proposed is not built (its gap is in
 * docs/failure-model.md).
 */
public final class EventOutbox implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EventOutbox.class);
    /** Events waiting for their write, at most; beyond, {@link #post} logs and drops. */
    public static final int QUEUE = 1000;

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final String writer;
    private final ThreadPoolExecutor thread;

    /**
     * @param client a started client; a host's identity may write only its own host's parent (decision 19)
     * @param paths  the layout
     * @param writer a host id ({@link ZkPaths#checkHost}), or {@link ZkPaths#COORDINATOR_EVENTS}
     */
    public EventOutbox(CuratorFramework client, ZkPaths paths, String writer) {
        this.client = client;
        this.paths = paths;
        this.writer = writer.equals(ZkPaths.COORDINATOR_EVENTS) ? writer : ZkPaths.checkHost(writer);
        this.thread = new ThreadPoolExecutor(1, 1, 10, TimeUnit.SECONDS, new ArrayBlockingQueue<>(QUEUE), r -> {
            Thread t = new Thread(r, "mesh-events-" + writer);
            t.setDaemon(true); // an event never keeps the process alive (decision 34: it may be lost, see close)
            return t;
        });
        thread.allowCoreThreadTimeOut(true); // no thread while nothing is queued: most processes write few events
    }

    /**
     * Writes one event now, waiting for ZooKeeper (and its client's retries).
     *
     * @param event the event; its {@code id} is ignored
     * @return its id, {@code <writer>/e-<seq>}
     * @throws Exception from ZooKeeper; {@link KeeperException.NoAuthException} names the fix (the host's outbox is made by
     *                   {@code mesh-coordinator credentials HOST} or a coordinator's start)
     */
    public String write(MeshEvent event) throws Exception {
        byte[] data = Json.bytes(event.withId(null));
        String made;
        try {
            // creatingParentsIfNeeded: an admin process (coordinators, dev agents) makes the parents; a host's identity
            // finds its parent made for it (decision 19), and may not make /mesh/events itself.
            made = client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT_SEQUENTIAL)
                    .forPath(paths.eventPrefix(writer), data);
        } catch (KeeperException.NoAuthException e) {
            throw new IllegalStateException("may not write " + paths.events(writer) + ": a host's outbox is made by "
                    + "mesh-coordinator credentials " + writer + " or at a coordinator's start (decision 34)", e);
        }
        return writer + "/" + ZKPaths.getNodeFromPath(made);
    }

    /**
     * The create of one event as an operation of a caller's transaction: the event exists if and only if the rest of
     * the transaction is done (a coordinator's fold of a rollout writes {@code rollout.paused} so, exactly once per
     * transition whichever coordinator folds). Call {@link #ensureParent} before.
     *
     * @param event the event; its {@code id} is ignored
     * @return the operation
     * @throws Exception from Curator
     */
    public org.apache.curator.framework.api.transaction.CuratorOp createOp(MeshEvent event) throws Exception {
        return client.transactionOp().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath(paths.eventPrefix(writer),
                Json.bytes(event.withId(null)));
    }

    /**
     * Makes this writer's parent when it is missing (a transaction cannot).
     *
     * @throws Exception from ZooKeeper
     */
    public void ensureParent() throws Exception {
        if (client.checkExists().forPath(paths.events(writer)) != null) return;
        try {
            client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(paths.events(writer),
                    "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (KeeperException.NodeExistsException raced) {
            // made meanwhile
        }
    }

    /**
     * Queues one event for writing and returns at once.
     *
     * @param event the event
     */
    public void post(MeshEvent event) {
        try {
            thread.execute(() -> {
                try {
                    String id = write(event);
                    log.debug("event {} {} written", id, event.type());
                } catch (Exception e) {
                    log.warn("event not written, lost (webhooks will not send it): {}: {}", Json.text(event), e.toString());
                }
            });
        } catch (RejectedExecutionException full) {
            log.warn("event not written, lost ({}): {}", thread.isShutdown() ? "this process is stopping" : QUEUE + " events already wait",
                    Json.text(event));
        }
    }

    /**
     * Writes what is queued for up to {@code waitMillis}, then stops; what is left is lost (logged).
     *
     * @param waitMillis how long to wait for the queue
     */
    public void close(long waitMillis) {
        thread.shutdown();
        try {
            if (!thread.awaitTermination(waitMillis, TimeUnit.MILLISECONDS)) {
                log.warn("{} event(s) not written before stopping, lost", thread.getQueue().size());
                thread.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            thread.shutdownNow();
        }
    }

    /** Waits up to 5 s for queued events ({@link #close(long)}). */
    @Override
    public void close() { close(5_000); }
}
