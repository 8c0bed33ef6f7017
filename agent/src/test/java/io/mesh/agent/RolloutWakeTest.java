package io.mesh.agent;

import io.mesh.curator.RolloutNodes;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutHostState;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.zookeeper.data.Stat;
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
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What wakes a host waiting in a rollout wave (decision 13), each found by review and failing before its fix, with a
 * real daemon for one host and the test playing the others:
 * <ul>
 *   <li>a later turn look ({@code RolloutWakes.look(module, applyingThen)}) that runs between a burst of moves reaching
 *       the agent's cache and the burst's own look must not make that look take the burst for a fold already seen:
 *       the host would never try for the place the burst freed;</li>
 *   <li>a slot held by a host still applying the module's previous push (its lease outlives that push's rollout node)
 *       makes a host of the new push report {@code waiting for a slot}; when that lease is given back nothing of the
 *       new rollout moves, so the lease itself must wake the host, not its next reconcile.</li>
 * </ul>
 */
class RolloutWakeTest {
    private static final String HOST = "rt-c";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST); // reconciles every 10 min
    private final String module = TestDocker.uniqueModule("rwake");

    @AfterEach
    void tearDown() {
        TestDocker.clean(module);
    }

    @Test
    void aDelayedTurnLookDoesNotSwallowTheMoveThatFreedAPlace() throws Exception {
        List<String> hosts = List.of("rt-a", "rt-c", "rt-p", "rt-q");
        DesiredRecord d = new DesiredRecord(module, "r1", ZkPaths.pushName(1), spec(hosts, 2));
        RolloutRecord r = RolloutRecord.start(d, hosts, Set.copyOf(hosts), null, "test", Instant.now());
        // The push's transaction, with p and q already applying (the wave is full): c is deferred by the rollout.
        zk.writeRolloutPush(d, r, h -> h.host().equals("rt-p") || h.host().equals("rt-q")
                ? h.moved(r.push(), RolloutHostState.APPLYING, null, Instant.now()) : h);
        var c = zk.client();
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
                RolloutNodes n = daemon.rollouts().cached(module);
                return n != null && n.view().applying().equals(List.of("rt-a"));
            });
            // c's turn look from before the burst (it was scheduled when only q had finished, p applying) fires now.
            daemon.rollouts().look(module, List.of("rt-p"));
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

    @Test
    void aLeaseOfTheModulesPreviousPushGivenBackWakesTheHostWaitingForIt() throws Exception {
        List<String> hosts = List.of(HOST, "rt-x");
        var c = zk.client();
        // rt-x, still applying the previous push, holds the one slot.
        InterProcessSemaphoreV2 slots = new InterProcessSemaphoreV2(c, zk.paths().rolloutSlots(module), 1);
        Lease previousPush = slots.acquire(10, TimeUnit.SECONDS);
        assertThat(previousPush).isNotNull();

        // The new push's transaction: rt-c is first in line and the new rollout counts nobody applying.
        DesiredRecord d = new DesiredRecord(module, "r2", ZkPaths.pushName(2), spec(hosts, 1));
        RolloutRecord r = RolloutRecord.start(d, hosts, Set.copyOf(hosts), null, "test", Instant.now());
        zk.writeRolloutPush(d, r, h -> h);

        // rt-c tried for the slot and lost, and every look the push's own writes asked for has run: its report says so
        // and has not been written for 2 s (the znode's mtime, ZooKeeper's clock on this machine).
        String report = zk.paths().report(HOST, module);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            Stat stat = new Stat();
            ApplyReport a = c.checkExists().forPath(report) == null ? null
                    : Json.read(c.getData().storingStatIn(stat).forPath(report), ApplyReport.class);
            assertThat(a).isNotNull();
            assertThat(a.outcome()).isEqualTo(ApplyOutcome.DEFERRED);
            assertThat(a.rollout()).contains("waiting for a slot");
            assertThat(System.currentTimeMillis() - stat.getMtime()).isGreaterThan(2_000);
        });

        // Another host's try that loses adds and removes a lease of its own, freeing nothing: rt-c is not woken by it
        // (else every waiting host would wake every other at each try). A try is a lease node made and deleted: the
        // leases node's child version counts them.
        String leases = ZkPaths.slotLeases(zk.paths().rolloutSlots(module));
        assertThat(new InterProcessSemaphoreV2(c, zk.paths().rolloutSlots(module), 1).acquire(300, TimeUnit.MILLISECONDS)).isNull();
        int tries = c.checkExists().forPath(leases).getCversion();
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
                .until(() -> c.checkExists().forPath(leases).getCversion() == tries);

        // rt-x's apply of the previous push ends: its lease goes, and no node of the new rollout changes.
        previousPush.close();
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            ApplyReport a = Json.read(c.getData().forPath(report), ApplyReport.class);
            assertThat(a.outcome()).as("rt-c applies once the slot is free, without waiting for its reconcile").isEqualTo(ApplyOutcome.APPLIED);
            assertThat(a.push()).isEqualTo(d.push());
        });
        assertThat(TestDocker.engine().inspect(module + "-web").getState().getRunning()).as("from Docker").isTrue();
    }

    /** One container that exits on SIGTERM, on {@code hosts}, in waves of {@code maxParallel}. */
    private ModuleSpec spec(List<String> hosts, int maxParallel) throws Exception {
        return new ManifestParser().parse("module: " + module + "\nhosts: [" + String.join(", ", hosts) + "]\ncontainers:\n  web:\n"
                + "    image: " + TestDocker.BUSYBOX + "\n    network: none\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "rollout:\n  max-parallel: " + maxParallel + "\n").get(0);
    }
}
