package io.mesh.coordinator;

import io.mesh.curator.RolloutNodes;
import io.mesh.wire.Json;
import io.mesh.wire.QueuedOnce;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Folds each rollout's hosts' children into {@code /mesh/rollouts/<module>}'s {@code done}, {@code applying},
 * {@code waiting}, {@code failed}, {@code state} and {@code note} (docs/decisions/0013-rollouts.md), so that
 * {@code zkCli get} shows SPEC's fields although the agents write only their own child. A {@link CuratorCache} of
 * {@code /mesh/rollouts} says which module moved; the fold itself reads ZooKeeper and writes the
 * {@link RolloutRecord#view} at the version read, again after a lost race. The view is a function of what it reads,
 * so several coordinators folding at once write the same thing (the later finds nothing to change). On start every
 * rollout is folded: what moved while no coordinator was up catches up.
 */
final class RolloutFold implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RolloutFold.class);
    private static final int MAX_ATTEMPTS = 20;

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final CuratorCache cache;
    private final io.mesh.curator.EventOutbox events;
    /**
     * How long after a move its fold is written, in ms: the moves of a wave meanwhile are folded in one write, so that
     * folds seldom make an agent's checked move read again (it checks the rollout node's version).
     */
    static final long FOLD_DELAY_MS = 500;
    /** One thread: folds of a module never race each other in this process; a module asked twice is folded once. */
    private final ScheduledExecutorService folding = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "mesh-rollout-fold");
        t.setDaemon(true);
        return t;
    });
    private final QueuedOnce asked = new QueuedOnce(run -> folding.schedule(run, FOLD_DELAY_MS, TimeUnit.MILLISECONDS));

    /**
     * @param client a started Curator client with the admin identity (the rollout nodes are coordinators' alone)
     * @param paths  the layout
     */
    RolloutFold(CuratorFramework client, ZkPaths paths) {
        this(client, paths, new io.mesh.curator.EventOutbox(client, paths, ZkPaths.COORDINATOR_EVENTS));
    }

    /**
     * @param events the coordinators' outbox: a fold that pauses or finishes a rollout writes {@code rollout.paused} or
     *               {@code rollout.done} there in the fold's own transaction (decision 34)
     */
    RolloutFold(CuratorFramework client, ZkPaths paths, io.mesh.curator.EventOutbox events) {
        this.client = client;
        this.paths = paths;
        this.events = events;
        this.cache = CuratorCache.build(client, paths.rollouts());
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, after) -> moved(after))
                .forInitialized(this::foldAll)
                .build());
    }

    /** Starts watching; every rollout is folded once the cache has loaded. */
    void start() { cache.start(); }

    @Override
    public void close() {
        cache.close();
        folding.shutdownNow();
    }

    private void moved(ChildData node) {
        String rel = node.getPath().startsWith(paths.rollouts() + "/") ? node.getPath().substring(paths.rollouts().length() + 1) : null;
        if (rel == null || rel.isEmpty()) return;
        String module = rel.contains("/") ? rel.substring(0, rel.indexOf('/')) : rel;
        ask(module);
    }

    private void foldAll() {
        cache.stream().map(ChildData::getPath).filter(p -> ZKPaths.getPathAndNode(p).getPath().equals(paths.rollouts()))
                .map(ZKPaths::getNodeFromPath).forEach(this::ask);
    }

    private void ask(String module) {
        asked.ask(module, () -> {
            try {
                fold(module);
            } catch (Exception e) {
                // The next move of the rollout, or the next coordinator's start, folds it again; readers derive it.
                LOG.warn("rollout of module {} not folded: {}", module, e.toString());
            }
        });
    }

    /**
     * @return {@code rollout.paused} or {@code rollout.done} when this fold moves the rollout into that state, else
     *         {@code null} (decision 34)
     */
    private static io.mesh.wire.MeshEvent event(RolloutRecord view, RolloutRecord before) {
        if (view.state() == before.state()) return null;
        io.mesh.wire.EventType type = switch (view.state()) {
            case PAUSED -> io.mesh.wire.EventType.ROLLOUT_PAUSED;
            case DONE -> io.mesh.wire.EventType.ROLLOUT_DONE;
            default -> null;
        };
        return type == null ? null : io.mesh.wire.MeshEvent.of(type, io.mesh.wire.Times.now(), null, view.module())
                .withPush(view.push()).withBy(null, view.note());
    }

    /**
     * Writes the module's rollout as its children say, at the version read (read again after a lost race).
     *
     * @param module module name
     * @return the rollout as folded; {@code null} when there is none
     * @throws Exception from ZooKeeper
     */
    RolloutRecord fold(String module) throws Exception {
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            RolloutNodes nodes = RolloutNodes.read(client, paths, module);
            if (nodes == null || nodes.parent() == null) return null;
            RolloutRecord view = nodes.view();
            if (view.sameProgress(nodes.parent())) return view;
            try {
                io.mesh.wire.MeshEvent event = event(view, nodes.parent());
                var write = client.transactionOp().setData().withVersion(nodes.parentStat().getVersion())
                        .forPath(paths.rollout(module), Json.bytes(view));
                if (event == null) {
                    client.transaction().forOperations(write);
                } else { // the event exists if and only if this fold's write does: once per transition, whoever folds
                    events.ensureParent();
                    client.transaction().forOperations(write, events.createOp(event));
                }
                if (view.state() != nodes.parent().state()) {
                    LOG.info("rollout module={} push={} state={} ({})", module, view.push(), view.state(), view.note());
                }
                return view;
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
                // another coordinator folded it, an operator moved it, or a push replaced it: read again
                Thread.sleep(ThreadLocalRandom.current().nextLong(1, 5L + 5L * attempt));
            }
        }
        throw new IllegalStateException(paths.rollout(module) + " changed under each of " + MAX_ATTEMPTS + " folds");
    }
}
