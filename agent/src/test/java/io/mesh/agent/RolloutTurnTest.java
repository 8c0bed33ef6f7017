package io.mesh.agent;

import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ManifestParser;
import io.mesh.wire.ModuleSpec;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutHostState;
import io.mesh.wire.RolloutNodes;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A host's later turn look ({@code lookAtRollout(module, applyingThen)}, decision 13) that runs between a burst of moves
 * reaching the agent's cache and the burst's own look must not make that look take the burst for a fold already seen:
 * the host would never try for the place the burst freed (found by review; it failed before the fix).
 */
class RolloutTurnTest {
    private static final String HOST = "rt-c";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST); // reconciles every 10 min
    private final String module = TestDocker.uniqueModule("rturn");

    @AfterEach
    void tearDown() {
        TestDocker.clean(module);
    }

    @Test
    void aDelayedTurnLookDoesNotSwallowTheMoveThatFreedAPlace() throws Exception {
        List<String> hosts = List.of("rt-a", "rt-c", "rt-p", "rt-q");
        ModuleSpec spec = new ManifestParser().parse("module: " + module + "\nhosts: [rt-a, rt-c, rt-p, rt-q]\ncontainers:\n  web:\n"
                + "    image: " + TestDocker.BUSYBOX + "\n    network: none\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "rollout:\n  max-parallel: 2\n").get(0);
        DesiredRecord d = new DesiredRecord(module, "r1", ZkPaths.pushName(1), spec);
        RolloutRecord r = RolloutRecord.start(d, hosts, Set.copyOf(hosts), null, "test", Instant.now());
        // The push's transaction, with p and q already applying (the wave is full): c is deferred by the rollout.
        var c = zk.client();
        c.create().creatingParentsIfNeeded().forPath(zk.paths().rollouts());
        c.create().creatingParentsIfNeeded().forPath(zk.paths().desired());
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(c.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(zk.paths().desired(module), Json.bytes(d)));
        ops.add(c.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(zk.paths().rollout(module), Json.bytes(r)));
        for (RolloutHostRecord h : r.startChildren()) {
            RolloutHostRecord w = h.host().equals("rt-p") || h.host().equals("rt-q")
                    ? h.moved(r.push(), RolloutHostState.APPLYING, null, Instant.now()) : h;
            ops.add(c.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(zk.paths().rolloutHost(module, h.host()), Json.bytes(w)));
        }
        c.transaction().forOperations(ops);
        String report = zk.paths().report(HOST, module);
        await().atMost(Duration.ofSeconds(30)).until(() -> c.checkExists().forPath(report) != null);

        AgentDaemon daemon = agent.daemon();

        // The timer (where every look runs) is held, so the move's look waits in its queue.
        CountDownLatch held = new CountDownLatch(1), release = new CountDownLatch(1);
        daemon.timer().execute(() -> {
            held.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        held.await();
        try {
            // One burst: p and q done, a begins. One place is free and c is the only waiting host.
            List<CuratorOp> burst = new ArrayList<>();
            for (String[] m : new String[][]{{"rt-p", "done"}, {"rt-q", "done"}, {"rt-a", "applying"}}) {
                RolloutHostState s = m[1].equals("done") ? RolloutHostState.DONE : RolloutHostState.APPLYING;
                burst.add(c.transactionOp().setData().forPath(zk.paths().rolloutHost(module, m[0]),
                        Json.bytes(RolloutHostRecord.waiting(m[0], r.push(), Instant.now()).moved(r.push(), s, null, Instant.now()))));
            }
            c.transaction().forOperations(burst);
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                RolloutNodes n = daemon.cachedRollout(module);
                return n != null && n.view().applying().equals(List.of("rt-a"));
            });
            // c's turn look from before the burst (it was scheduled when only q had finished, p applying) fires now.
            daemon.lookAtRollout(module, List.of("rt-p"));
        } finally {
            release.countDown();
        }
        // The move's look runs next: c may try for the free place.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            RolloutHostRecord mine = Json.read(c.getData().forPath(zk.paths().rolloutHost(module, HOST)), RolloutHostRecord.class);
            assertThat(mine.state()).as("c's node: one place is free and c is the only waiting host")
                    .isIn(RolloutHostState.APPLYING, RolloutHostState.DONE);
        });
    }
}
