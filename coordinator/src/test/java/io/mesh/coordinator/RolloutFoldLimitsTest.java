package io.mesh.coordinator;

import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.RolloutSpec;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutHostState;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.RolloutState;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A host writes its own node of a rollout with anything its ACL lets it (decision 13: "it may lie about itself"). What
 * it writes must not stop the coordinators from folding the rollout: the fold copies a failed host's {@code error}
 * into the rollout node's {@code note}, and a node over ZooKeeper's {@code jute.maxbuffer} costs the coordinator its
 * connection at each fold.
 */
class RolloutFoldLimitsTest {
    private static final String MODULE = "rvfl-store";
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();

    @Test
    void aHostsHugeErrorDoesNotMakeTheFoldOverZooKeepersLimit() throws Exception {
        ContainerSpec app = ContainerSpec.builder("img:2").build();
        DesiredRecord d = new DesiredRecord(MODULE, "r2", "push-0000000002",
                new ModuleSpec(MODULE, List.of("*"), Map.of("app", app), Map.of(), new RolloutSpec("1", null, null)));
        List<String> hosts = new ArrayList<>();
        for (int i = 1; i <= 300; i++) hosts.add(String.format("rvfl-%d", i)); // a fleet's lists in the node: a few KB
        RolloutRecord r = RolloutRecord.start(d, hosts, Set.copyOf(hosts), null, "test", Instant.now());
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().rollouts(), "{}".getBytes());
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(zk.client().transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(zk.paths().rollout(MODULE), Json.bytes(r)));
        for (RolloutHostRecord h : r.startChildren()) {
            ops.add(zk.client().transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(zk.paths().rolloutHost(MODULE, h.host()), Json.bytes(h)));
        }
        zk.client().transaction().forOperations(ops);
        // What host rvfl-1 may write with its own identity: its node, failed, with an error just under a node's limit.
        String error = "x".repeat(1_044_000);
        zk.client().setData().forPath(zk.paths().rolloutHost(MODULE, "rvfl-1"),
                Json.bytes(RolloutHostRecord.waiting("rvfl-1", r.push(), Instant.now()).moved(r.push(), RolloutHostState.FAILED, error, Instant.now())));

        RolloutFold fold = new RolloutFold(zk.client(), zk.paths());
        Object outcome = CompletableFuture.supplyAsync(() -> {
            try {
                return fold.fold(MODULE);
            } catch (Exception e) {
                return e;
            }
        }).get(120, TimeUnit.SECONDS);
        assertThat(outcome).as("the fold's outcome").isInstanceOf(RolloutRecord.class);
        RolloutRecord folded = Json.read(zk.client().getData().forPath(zk.paths().rollout(MODULE)), RolloutRecord.class);
        assertThat(folded.state()).isEqualTo(RolloutState.PAUSED);
    }
}
