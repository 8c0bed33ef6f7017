package io.mesh.apply;

import io.mesh.docker.IdleThreads;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProgressRecord;
import io.mesh.wire.Times;
import io.mesh.zk.MeshStore;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One apply's progress node, {@code /mesh/progress/<host>/<module>} (ephemeral; docs/decisions/0032-apply-progress.md):
 * written and deleted off the apply's thread, so that no apply, fenced or not, ever waits for ZooKeeper to say what it
 * is doing. Only the newest wish is kept (a line, or its removal) and carried out in order, one ZooKeeper call at a
 * time per node: a removal can never be overtaken by an earlier write. Best effort: a write that fails is logged at
 * debug and the apply goes on; what is left behind is an ephemeral node that goes with the agent's session, and that
 * readers ignore once the host has reported the push.
 */
final class ProgressNode implements ApplyProgress.Sink {
    private static final Logger log = LoggerFactory.getLogger(ProgressNode.class);
    /** The writes of every apply of this process, a thread while some are under way (decision 23). */
    private static final ExecutorService WRITES = IdleThreads.onDemand("apply-progress");
    /** The wish that removes the node. */
    private static final ProgressRecord GONE = new ProgressRecord(null, null, null, null, null, null, null);

    private final MeshStore store;
    private final String host;
    private final String module;
    private final Instant since;
    private volatile DesiredRecord applying;
    private final AtomicReference<ProgressRecord> wish = new AtomicReference<>();
    private final AtomicBoolean draining = new AtomicBoolean();
    /** True once a create was sent: a removal before that has nothing to remove. */
    private volatile boolean created;

    /**
     * @param store  this host's store
     * @param host   this host's id
     * @param module the module applied
     * @param since  when the apply began
     */
    ProgressNode(MeshStore store, String host, String module, Instant since) {
        this.store = store;
        this.host = host;
        this.module = module;
        this.since = since;
    }

    /** @param desired the desired node the apply now applies: its push and revision go with the next line */
    void applying(DesiredRecord desired) { this.applying = desired; }

    @Override
    public void write(String detail) {
        DesiredRecord d = applying;
        want(new ProgressRecord(host, module, d == null ? null : d.push(), d == null ? null : d.revision(), detail, since, Times.now()));
    }

    @Override
    public void clear() { want(GONE); }

    private void want(ProgressRecord r) {
        wish.set(r);
        if (draining.compareAndSet(false, true)) {
            try {
                WRITES.execute(this::drain);
            } catch (RuntimeException e) { // no thread to be had: progress is display only
                draining.set(false);
                log.debug("progress of {} not written: {}", module, e.toString());
            }
        }
    }

    /** Carries out the newest wish until none is left; one drain per node at a time. */
    private void drain() {
        while (true) {
            ProgressRecord r = wish.getAndSet(null);
            if (r == null) {
                draining.set(false);
                // a wish that came between the read and the flag's reset: take it, unless another drain already did
                if (wish.get() == null || !draining.compareAndSet(false, true)) return;
                continue;
            }
            String path = store.paths().progress(host, module);
            try {
                if (r == GONE) {
                    if (created) store.client().delete().quietly().forPath(path);
                    created = false;
                } else if (store.session().connected()) { // a write waits for no reconnection: the next line will do
                    created = true;
                    store.client().create().orSetData().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                            .forPath(path, Json.bytes(r));
                }
            } catch (KeeperException.NoNodeException e) {
                // removed already
            } catch (Exception e) {
                log.debug("progress node {} not {}: {}", path, r == GONE ? "removed" : "written", e.toString());
            }
        }
    }
}
