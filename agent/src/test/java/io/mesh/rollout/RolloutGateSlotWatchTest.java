package io.mesh.rollout;

import io.mesh.curator.MeshZk;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.RolloutSpec;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.ZkPaths;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Review of {@link RolloutGate}'s watch of the slots' leases (decision 13 item 5): a host waiting for a slot keeps one
 * watch of the leases, also across ZooKeeper connection losses (each of which tells every registered watcher with an
 * event of type None, and leaves the watch registered), and is woken once when the slot is given back.
 */
class RolloutGateSlotWatchTest {
    private static final String MODULE = "rw-store";
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();

    @Test
    void aConnectionLostAndBackLeavesOneWatchOfTheLeases() throws Exception {
        ContainerSpec app = ContainerSpec.builder("img:2").build();
        DesiredRecord d = new DesiredRecord(MODULE, "r2", "push-0000000002",
                new ModuleSpec(MODULE, List.of("*"), Map.of("app", app), Map.of(), new RolloutSpec("1", null, null)));
        RolloutRecord r = RolloutRecord.start(d, List.of("rw-1", "rw-2"), Set.of("rw-1", "rw-2"), null, "test", Instant.now());
        CuratorFramework c = zk.client();
        c.create().creatingParentsIfNeeded().forPath(zk.paths().rollouts(), "{}".getBytes());
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(c.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(zk.paths().rollout(MODULE), Json.bytes(r)));
        for (RolloutHostRecord h : r.startChildren()) {
            ops.add(c.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(zk.paths().rolloutHost(MODULE, h.host()), Json.bytes(h)));
        }
        c.transaction().forOperations(ops);
        // rw-2, still applying the previous push, holds the one slot.
        Lease stale = new InterProcessSemaphoreV2(c, zk.paths().rolloutSlots(MODULE), 1).acquire(10, TimeUnit.SECONDS);
        assertThat(stale).isNotNull();

        // rw-1's gate on a client of its own, so that the watches counted are the gate's alone.
        try (CuratorFramework own = MeshZk.connect(zk.connect(), Duration.ofSeconds(20))) {
            RolloutGate gate = new RolloutGate(new MeshStore(own, zk.paths()), "rw-1", ProcessRef.current("test rw-1"));
            AtomicInteger wakes = new AtomicInteger();
            gate.wakeOnSlotLeases(m -> wakes.incrementAndGet());
            try (RolloutGate.Admission a = gate.admit(d)) {
                assertThat(a.why()).contains("waiting for a slot");
            }
            String leases = ZkPaths.slotLeases(zk.paths().rolloutSlots(MODULE));
            await().atMost(Duration.ofSeconds(10)).until(() -> childWatchers(own, leases) == 1);

            for (int blip = 1; blip <= 3; blip++) {
                zk.server().restart(); // the same session: Disconnected, then SyncConnected, each an event of type None
                await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> own.checkExists().forPath(leases) != null);
                int b = blip;
                await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(childWatchers(own, leases))
                        .as("watchers of the leases after %d connection losses", b).isEqualTo(1));
            }
            // The session expires: its watches go with it, and the gate must watch again on the new one.
            own.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
            await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> own.checkExists().forPath(leases) != null
                    && childWatchers(own, leases) == 1);
            assertThat(wakes.get()).as("nothing freed yet").isZero();
            stale.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> wakes.get() == 1);
        }
    }

    /** @return how many watchers the client's ZooKeeper handle has registered on the children of {@code path} */
    @SuppressWarnings("unchecked")
    private static int childWatchers(CuratorFramework client, String path) throws Exception {
        ZooKeeper zoo = client.getZookeeperClient().getZooKeeper();
        Method manager = ZooKeeper.class.getDeclaredMethod("getWatchManager");
        manager.setAccessible(true);
        Object m = manager.invoke(zoo);
        Method children = m.getClass().getDeclaredMethod("getChildWatches");
        children.setAccessible(true);
        Set<Watcher> ws = ((Map<String, Set<Watcher>>) children.invoke(m)).get(path);
        return ws == null ? 0 : ws.size();
    }
}
