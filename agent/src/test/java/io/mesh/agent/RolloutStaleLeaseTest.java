package io.mesh.agent;

import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ManifestParser;
import io.mesh.wire.ModuleSpec;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.zookeeper.CreateMode;
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
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A slot of a module's rollout held by a host still applying the module's previous push (its lease outlives that push's
 * rollout node) makes a host of the new push report {@code waiting for a slot}; when that lease is given back, nothing
 * of the new rollout moves, so the waiting host must be woken by the lease itself, not by its next reconcile (decision
 * 13; found by review: it waited for the reconcile before the fix).
 */
class RolloutStaleLeaseTest {
    private static final String HOST = "rs-a";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST); // reconciles every 10 min
    private final String module = TestDocker.uniqueModule("rstale");

    @AfterEach
    void tearDown() {
        TestDocker.clean(module);
    }

    @Test
    void aLeaseOfTheModulesPreviousPushGivenBackWakesTheHostWaitingForIt() throws Exception {
        List<String> hosts = List.of(HOST, "rs-b");
        ModuleSpec spec = new ManifestParser().parse("module: " + module + "\nhosts: [rs-a, rs-b]\ncontainers:\n  web:\n"
                + "    image: " + TestDocker.BUSYBOX + "\n    network: none\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "rollout:\n  max-parallel: 1\n").get(0);
        var c = zk.client();
        // rs-b, still applying the previous push, holds the one slot.
        InterProcessSemaphoreV2 slots = new InterProcessSemaphoreV2(c, zk.paths().rolloutSlots(module), 1);
        Lease previousPush = slots.acquire(10, TimeUnit.SECONDS);
        assertThat(previousPush).isNotNull();

        // The new push's transaction: rs-a is first in line and the new rollout counts nobody applying.
        DesiredRecord d = new DesiredRecord(module, "r2", ZkPaths.pushName(2), spec);
        RolloutRecord r = RolloutRecord.start(d, hosts, Set.copyOf(hosts), null, "test", Instant.now());
        c.create().creatingParentsIfNeeded().forPath(zk.paths().rollouts());
        c.create().creatingParentsIfNeeded().forPath(zk.paths().desired());
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(c.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(zk.paths().desired(module), Json.bytes(d)));
        ops.add(c.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(zk.paths().rollout(module), Json.bytes(r)));
        for (RolloutHostRecord h : r.startChildren()) {
            ops.add(c.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(zk.paths().rolloutHost(module, h.host()), Json.bytes(h)));
        }
        c.transaction().forOperations(ops);

        // rs-a tried for the slot and lost, and every look the push's own writes asked for has run: its report says so
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

        // Another host's try that loses adds and removes a lease of its own, freeing nothing: rs-a is not woken by it
        // (else every waiting host would wake every other at each try). A try is a lease node made and deleted: the
        // leases node's child version counts them.
        String leases = ZkPaths.slotLeases(zk.paths().rolloutSlots(module));
        assertThat(new InterProcessSemaphoreV2(c, zk.paths().rolloutSlots(module), 1).acquire(300, TimeUnit.MILLISECONDS)).isNull();
        int tries = c.checkExists().forPath(leases).getCversion();
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
                .until(() -> c.checkExists().forPath(leases).getCversion() == tries);

        // rs-b's apply of the previous push ends: its lease goes, and no node of the new rollout changes.
        previousPush.close();
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            ApplyReport a = Json.read(c.getData().forPath(report), ApplyReport.class);
            assertThat(a.outcome()).as("rs-a applies once the slot is free, without waiting for its reconcile").isEqualTo(ApplyOutcome.APPLIED);
            assertThat(a.push()).isEqualTo(d.push());
        });
        assertThat(TestDocker.engine().inspect(module + "-web").getState().getRunning()).as("from Docker").isTrue();
    }
}
