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
 * thread of this outbox, which writes it with the client's retries. With a spool ({@link #spoolIn}, the host's
 * {@code <state-dir>/events/}), an event that cannot be written (the client not connected, or ZooKeeper failing past
 * the retries) is kept there as a file, fsync'd, and written once ZooKeeper answers: before this outbox's next event,
 * and at each {@link #drainSoon} (the agent's timer). Every process of the host may drain the spool: a file is claimed
 * by an atomic rename before its write, and a claim whose process is gone is taken over. Without a spool, or when the
 * spool cannot be written, the event is logged at WARN, whole, and lost; so is what is still queued when the process
 * stops past {@link #close(long)}'s wait (docs/failure-model.md row 120).
 */
public final class EventOutbox implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EventOutbox.class);
    /** Events waiting for their write, at most; beyond, {@link #post} logs and drops. */
    public static final int QUEUE = 1000;

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final String writer;
    private final ThreadPoolExecutor thread;
    private volatile java.nio.file.Path spool;

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
     * Keeps events that cannot be written in {@code dir} until ZooKeeper answers (decision 34).
     *
     * @param dir the host's spool, {@code <state-dir>/events}; made when first needed
     * @return this
     */
    public EventOutbox spoolIn(java.nio.file.Path dir) {
        this.spool = dir;
        return this;
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
                boolean spoolEmpty = drain(); // what waits in the spool first: the writer's order is kept
                if (spool != null && (!spoolEmpty || !client.getZookeeperClient().isConnected())) {
                    spool(event, "ZooKeeper is not connected"); // never waits for ZooKeeper (decision 34)
                    return;
                }
                try {
                    String id = write(event);
                    log.debug("event {} {} written", id, event.type());
                } catch (Exception e) {
                    spool(event, e.toString());
                }
            });
        } catch (RejectedExecutionException full) {
            if (!thread.isShutdown()) { // the queue is full: kept on disk on this (the poster's) thread, never sent ahead
                spool(event, QUEUE + " events already wait");
                return;
            }
            log.warn("event not written, lost (this process is stopping): {}", Json.text(event));
        }
    }

    /** Writes what waits in the spool soon, on this outbox's thread, when ZooKeeper answers; returns at once. */
    public void drainSoon() {
        java.nio.file.Path dir = spool;
        if (dir == null || !java.nio.file.Files.isDirectory(dir)) return;
        try (java.util.stream.Stream<java.nio.file.Path> list = java.nio.file.Files.list(dir)) {
            if (list.noneMatch(EventOutbox::drainable)) return; // at rest: no thread for nothing (decision 23)
        } catch (java.io.IOException e) {
            return; // the drain would say why; the next post tries too
        }
        try {
            thread.execute(this::drain);
        } catch (RejectedExecutionException stopping) {
            // stopping, or the queue full: the next post or drain does it
        }
    }

    /** Where a host's processes keep their events while ZooKeeper does not answer: {@code <state-dir>/events}. */
    public static java.nio.file.Path spoolOf(java.nio.file.Path stateDir) { return stateDir.resolve("events"); }

    /** Suffix of a spooled event's file; a claimed one ends {@code .json.<pid>}. */
    private static final String SPOOLED = ".json";

    /** Keeps an event that could not be written in the spool; without one (or failing), logs it whole as lost. */
    private void spool(MeshEvent event, String why) {
        java.nio.file.Path dir = spool;
        if (dir == null) {
            log.warn("event not written, lost (webhooks will not send it): {}: {}", Json.text(event), why);
            return;
        }
        String name = String.format(java.util.Locale.ROOT, "%013d-%s", System.currentTimeMillis(), java.util.UUID.randomUUID()) + SPOOLED;
        try {
            java.nio.file.Files.createDirectories(dir);
            java.nio.file.Path tmp = dir.resolve("." + name + ".tmp");
            try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.CREATE_NEW,
                    java.nio.file.StandardOpenOption.WRITE)) {
                ch.write(java.nio.ByteBuffer.wrap(Json.bytes(event.withId(null))));
                ch.force(true); // on disk before it counts as kept, as the ledger's lines (decision 28)
            }
            java.nio.file.Files.move(tmp, dir.resolve(name), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            log.warn("event kept in {} until ZooKeeper answers ({}): {} of {}", dir, why, event.type(), event.module());
        } catch (java.io.IOException e) {
            log.warn("event not written, lost (webhooks will not send it; the spool {} failed: {}): {}: {}", dir, e.toString(),
                    Json.text(event), why);
        }
    }

    /**
     * Writes the spool's events, oldest first, while ZooKeeper answers; stops at the first that fails (kept for the
     * next drain).
     *
     * @return true when the spool is empty now (or there is none)
     */
    private boolean drain() {
        java.nio.file.Path dir = spool;
        if (dir == null || !java.nio.file.Files.isDirectory(dir)) return true;
        if (!client.getZookeeperClient().isConnected()) return false;
        java.util.List<java.nio.file.Path> files;
        try (java.util.stream.Stream<java.nio.file.Path> list = java.nio.file.Files.list(dir)) {
            files = list.filter(EventOutbox::drainable).sorted().toList();
        } catch (java.io.IOException e) {
            log.warn("the event spool {} cannot be read: {}", dir, e.toString());
            return false;
        }
        long me = ProcessHandle.current().pid();
        for (java.nio.file.Path f : files) {
            String name = f.getFileName().toString();
            String base = name.substring(0, name.indexOf(SPOOLED) + SPOOLED.length());
            java.nio.file.Path claimed = dir.resolve(base + "." + me);
            try {
                java.nio.file.Files.move(f, claimed, java.nio.file.StandardCopyOption.ATOMIC_MOVE); // ours alone now
            } catch (java.io.IOException taken) {
                continue; // another process of the host claimed it
            }
            MeshEvent e;
            try {
                e = Json.read(java.nio.file.Files.readAllBytes(claimed), MeshEvent.class);
            } catch (java.io.IOException | RuntimeException bad) {
                log.warn("spooled event {} cannot be read, left as {}.unreadable: {}", f, base, bad.toString());
                moveQuietly(claimed, dir.resolve(base + ".unreadable"));
                continue;
            }
            try {
                String id = write(e);
                java.nio.file.Files.deleteIfExists(claimed);
                log.info("event {} {} of {} written from the spool {}", id, e.type(), e.module(), dir);
            } catch (Exception ex) {
                moveQuietly(claimed, dir.resolve(base)); // back for the next drain
                return false;
            }
        }
        return true;
    }

    /** @return true for a spooled event, or one claimed by a process that is gone */
    private static boolean drainable(java.nio.file.Path f) {
        String name = f.getFileName().toString();
        if (name.startsWith(".")) return false;
        if (name.endsWith(SPOOLED)) return true;
        int at = name.lastIndexOf(SPOOLED + ".");
        if (at < 0) return false;
        try {
            long pid = Long.parseLong(name.substring(at + SPOOLED.length() + 1));
            return ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true);
        } catch (NumberFormatException e) {
            return false; // .unreadable
        }
    }

    private static void moveQuietly(java.nio.file.Path from, java.nio.file.Path to) {
        try {
            java.nio.file.Files.move(from, to, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } catch (java.io.IOException e) {
            log.warn("the event spool: cannot move {} to {}: {}", from, to, e.toString());
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
