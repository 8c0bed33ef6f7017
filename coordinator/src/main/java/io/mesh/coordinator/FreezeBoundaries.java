package io.mesh.coordinator;

import io.mesh.curator.EventOutbox;
import io.mesh.curator.ZkClock;
import io.mesh.wire.EventType;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.Json;
import io.mesh.wire.MeshEvent;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Writes {@code freeze.started} and {@code freeze.ended} as time passes a freeze's boundaries (SPEC.md "The rest of the
 * operator's stack"; docs/decisions/0037-recurring-freezes-drains-and-one-budget.md): a one-span freeze reaching its
 * {@code until}, each span of a recurring freeze beginning and ending. A {@code mesh freeze} and a {@code mesh thaw}
 * write their own events ({@link CoordinatorEvents}).
 *
 * <p>Every coordinator looks each second; each boundary is written exactly once whichever looks first: in one
 * transaction, the freeze node's version is checked, the node's mark ({@code /mesh/freeze-events/<name>}: the freeze's
 * creation and the last boundary announced) is set at the version read, and the events are created. A coordinator that
 * loses the race, or reads a freeze changed meanwhile, writes nothing and looks again. Boundaries passed while no
 * coordinator ran are announced when one starts, as far back as {@link #CATCH_UP}, at most {@link #MOST} per freeze at a
 * look.
 */
final class FreezeBoundaries implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FreezeBoundaries.class);
    /** How many boundaries of one freeze one look announces (a per-minute rule after a week down would be 20 000). */
    static final int MOST = 20;
    /** How far back a look announces boundaries that passed while no coordinator looked. */
    static final Duration CATCH_UP = Duration.ofHours(1);

    /**
     * Data of {@code /mesh/freeze-events/<name>}.
     *
     * @param czxid the freeze node's creation zxid: a mark of an earlier freeze of that name is not this one's
     * @param last  the last boundary announced
     */
    record Mark(long czxid, Instant last) {}

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final EventOutbox outbox;
    private final Duration every;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "mesh-freeze-boundaries");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param outbox the coordinators' outbox ({@link ZkPaths#COORDINATOR_EVENTS})
     * @param every  how often to look
     */
    FreezeBoundaries(CuratorFramework client, ZkPaths paths, EventOutbox outbox, Duration every) {
        this.client = client;
        this.paths = paths;
        this.outbox = outbox;
        this.every = every;
    }

    void start() {
        timer.scheduleWithFixedDelay(this::lookQuietly, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void lookQuietly() {
        try {
            look();
        } catch (Exception e) {
            log.debug("freeze boundaries: {}", e.toString()); // ZooKeeper away: the next look announces what passed
        }
    }

    /**
     * One look at every freeze node.
     *
     * @return how many events it wrote
     * @throws Exception from ZooKeeper
     */
    int look() throws Exception {
        int wrote = 0;
        for (String name : ZkReads.children(client, paths.freezes())) {
            try {
                wrote += announce(name);
            } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException | KeeperException.NoNodeException e) {
                // another coordinator announced it first, or the freeze changed or went: the next look reads it again
            }
        }
        return wrote;
    }

    private int announce(String name) throws Exception {
        Stat stat = new Stat();
        byte[] data;
        try {
            data = client.getData().storingStatIn(stat).forPath(paths.freeze(name));
        } catch (KeeperException.NoNodeException e) {
            return 0;
        }
        FreezeRecord f = Json.readOrNull(data, FreezeRecord.class);
        if (f == null) return 0;
        String markPath = paths.freezeEvents(name);
        Stat markStat = new Stat();
        Mark mark = null;
        try {
            mark = Json.readOrNull(client.getData().storingStatIn(markStat).forPath(markPath), Mark.class);
        } catch (KeeperException.NoNodeException e) {
            markStat = null;
        }
        // From the freeze's last write (whose own event its request wrote: a rule changed in place does not replay its
        // new spans over the past), or the last boundary announced of it since; never further back than CATCH_UP (a
        // coordinator back from a long outage does not flood the webhooks with spans long gone, which the notifier
        // would drop after 24 h anyway)
        Instant written = f.since() != null ? f.since() : Instant.ofEpochMilli(stat.getMtime());
        Instant now = ZkClock.earliest();
        Instant after = mark != null && mark.czxid() == stat.getCzxid() && mark.last() != null && mark.last().isAfter(written) ? mark.last() : written;
        if (after.isBefore(now.minus(CATCH_UP))) after = now.minus(CATCH_UP);
        List<FreezeRecord.Boundary> bs = f.boundaries(after, now, MOST);
        if (bs.isEmpty()) return 0;
        outbox.ensureParent();
        if (markStat == null && client.checkExists().forPath(org.apache.curator.utils.ZKPaths.getPathAndNode(markPath).getPath()) == null) {
            try {
                client.create().creatingParentsIfNeeded().forPath(org.apache.curator.utils.ZKPaths.getPathAndNode(markPath).getPath());
            } catch (KeeperException.NodeExistsException e) {
                // another coordinator made it
            }
        }
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(client.transactionOp().check().withVersion(stat.getVersion()).forPath(paths.freeze(name)));
        byte[] next = Json.bytes(new Mark(stat.getCzxid(), bs.get(bs.size() - 1).at()));
        ops.add(markStat == null ? client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(markPath, next)
                : client.transactionOp().setData().withVersion(markStat.getVersion()).forPath(markPath, next));
        for (FreezeRecord.Boundary b : bs) ops.add(outbox.createOp(event(name, f, b)));
        client.transaction().forOperations(ops);
        log.info("freeze {}: announced {}", name, bs.stream().map(b -> (b.started() ? "start " : "end ") + b.at()).toList());
        return bs.size();
    }

    /** @return the event of a boundary: a span's start with its end as {@code until}, or an end saying which */
    private static MeshEvent event(String name, FreezeRecord f, FreezeRecord.Boundary b) {
        if (b.started()) {
            return MeshEvent.of(EventType.FREEZE_STARTED, b.at(), null, name)
                    .withBy(f.by(), f.reason() + " (span of '" + f.cron() + "' for " + f.lasts() + ")").withUntil(b.span().until());
        }
        return MeshEvent.of(EventType.FREEZE_ENDED, b.at(), null, name)
                .withBy(f.by(), f.recurring() ? "span ended (" + f.reason() + ")" : "until passed (" + f.reason() + ")");
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
