package io.mesh.agent;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.apply.DryRun;
import io.mesh.curator.ZkNode;
import io.mesh.docker.IdleThreads;
import io.mesh.manifest.ManifestException;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.wire.Json;
import io.mesh.wire.PlanAnswer;
import io.mesh.wire.PlanState;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.QueuedOnce;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.watch.PersistentWatcher;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Answers the plans asked of this host ({@code mesh push FILE --plan}; docs/decisions/0012-plans.md): for each
 * {@code /mesh/plans/<plan>/<host>} of this host still {@code pending}, plans every module of the request with
 * {@link DryRun} and writes the answer into that node with a {@code setData} at the version it read.
 *
 * <p>It watches {@code /mesh/plans} with Curator's {@link PersistentWatcher} (a recursive persistent watch: the
 * mechanism under {@code CuratorCache}, without its copy of the tree: a {@code CuratorCache} would read every host's
 * answer on every agent). Watch events carry no data, so each one only names a node; the node is read when handled, and
 * a node of another host is never read. After the watch is set, and again after every reconnection (Curator's reset),
 * every plan is looked at once, so a plan written while this agent was not watching is answered too. Plans are
 * answered one at a time, on one thread. Nothing here takes a lock, and nothing but the answer is written.
 */
public final class PlanRequests implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PlanRequests.class);

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final String host;
    private final ProcessRef me;
    private final DryRun dryRun;
    private final ManifestParser parser = new ManifestParser();
    private final PersistentWatcher watcher;
    private final ExecutorService worker;
    /** A plan asked again (an event and a sweep) before its answer starts is answered once. */
    private final QueuedOnce answers;

    /**
     * @param client a started Curator client
     * @param paths  the layout
     * @param host   this host's id
     * @param me     this process, written as the answer's {@code by}
     * @param dryRun the planner of one module on this host
     */
    public PlanRequests(CuratorFramework client, ZkPaths paths, String host, ProcessRef me, DryRun dryRun) {
        this.client = client;
        this.paths = paths;
        this.host = host;
        this.me = me;
        this.dryRun = dryRun;
        this.watcher = new PersistentWatcher(client, paths.plans(), true);
        this.worker = IdleThreads.serial("plans-" + host); // no thread while no plan is asked
        this.answers = new QueuedOnce(worker::submit);
    }

    /** Starts watching; returns at once. */
    public void start() {
        watcher.getListenable().addListener(this::event);
        watcher.getResetListenable().addListener(this::sweep);
        watcher.start();
    }

    private void event(WatchedEvent e) {
        if (e.getType() != Watcher.Event.EventType.NodeCreated && e.getType() != Watcher.Event.EventType.NodeDataChanged) return;
        String path = e.getPath();
        if (path == null) return;
        ZKPaths.PathAndNode pn = ZKPaths.getPathAndNode(path);
        if (!pn.getNode().equals(host)) return;
        ZKPaths.PathAndNode parent = ZKPaths.getPathAndNode(pn.getPath());
        if (!parent.getPath().equals(paths.plans()) || ZkPaths.planSeq(parent.getNode()) < 0) return;
        submit(parent.getNode());
    }

    /** Looks at every plan: after the watch is set, and after each reconnection. */
    private void sweep() {
        try {
            worker.submit(() -> {
                List<String> plans;
                try {
                    plans = client.getChildren().forPath(paths.plans());
                } catch (KeeperException.NoNodeException e) {
                    return;
                } catch (Exception e) {
                    log.warn("plans of host={}: cannot list {}: {}", host, paths.plans(), e.toString());
                    return;
                }
                for (String plan : plans) if (ZkPaths.planSeq(plan) >= 0) submit(plan);
            });
        } catch (RejectedExecutionException closed) {
            // closing
        }
    }

    private void submit(String plan) {
        answers.ask(plan, () -> {
            try {
                answer(plan);
            } catch (Exception e) {
                log.warn("plan {} host={}: not answered: {}", plan, host, e.toString());
            }
        });
    }

    /** Answers one plan when this host's node is pending. */
    void answer(String plan) throws Exception {
        String path = paths.plan(plan, host);
        ZkNode node = ZkNode.read(client, path);
        if (node == null) return; // not asked of this host, or deleted
        PlanAnswer pending = node.as(PlanAnswer.class);
        if (pending == null || pending.state() != PlanState.PENDING) return;
        PlanAnswer answer;
        try {
            List<PlanAnswer.ModulePlan> modules = plan(plan);
            answer = pending.answered(me, Times.now(), modules);
        } catch (KeeperException.NoNodeException e) {
            return; // the plan was deleted meanwhile
        } catch (Exception e) {
            answer = pending.failed(me, Times.now(), "the agent of " + host + " could not plan: " + describe(e));
        }
        try {
            client.setData().withVersion(node.version()).forPath(path, Json.bytes(answer));
        } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
            return; // answered or deleted meanwhile: never overwrite
        }
        log.info("plan {} host={} answered: {}", plan, host, answer.state() == PlanState.ANSWERED
                ? answer.modules().stream().map(m -> m.module() + "=" + m.outcome()).toList() : answer.error());
    }

    /** @return the plan of every module of the request that an apply here would touch */
    private List<PlanAnswer.ModulePlan> plan(String plan) throws Exception {
        JsonNode request = Json.MAPPER.readTree(client.getData().forPath(paths.plan(plan)));
        JsonNode modules = request == null ? null : request.get("modules");
        if (modules == null || !modules.isArray()) throw new IllegalArgumentException(paths.plan(plan) + " names no modules");
        List<PlanAnswer.ModulePlan> out = new ArrayList<>();
        for (JsonNode m : modules) {
            ModuleSpec spec;
            try {
                spec = parser.parseJson(m.toString());
            } catch (ManifestException e) {
                throw new IllegalArgumentException(paths.plan(plan) + " holds an invalid module: " + e.getMessage(), e);
            }
            PlanAnswer.ModulePlan p = dryRun.plan(spec);
            if (p != null) out.add(p);
        }
        return out;
    }

    private static String describe(Throwable e) {
        String m = e.getMessage();
        if (m == null || m.isBlank()) return e.getClass().getSimpleName();
        return m.lines().map(String::strip).filter(s -> !s.isEmpty()).findFirst().orElse(m);
    }

    /** Stops watching; a plan being answered is let finish (bounded). */
    @Override
    public void close() {
        try {
            watcher.close();
        } catch (RuntimeException e) {
            log.debug("plans watcher of host={} not closed cleanly: {}", host, e.toString());
        }
        worker.shutdown();
        try {
            if (!worker.awaitTermination(10, TimeUnit.SECONDS)) worker.shutdownNow();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
