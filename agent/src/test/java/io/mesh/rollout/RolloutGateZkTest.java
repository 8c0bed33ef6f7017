package io.mesh.rollout;

import io.mesh.curator.RolloutNodes;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.RolloutSpec;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutHostState;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.RolloutState;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RolloutGate} against a real ZooKeeper (decision 13): each host moves only its own node of the rollout, the
 * rollout node stays as the push wrote it, and hosts racing for the last place in a wave are not both counted.
 */
class RolloutGateZkTest {
    private static final String MODULE = "rh-store";
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();

    private DesiredRecord desired(RolloutSpec r) {
        ContainerSpec app = ContainerSpec.builder("img:2").build();
        return new DesiredRecord(MODULE, "r2", "push-0000000002", new ModuleSpec(MODULE, List.of("*"), Map.of("app", app), Map.of(), r));
    }

    /** Writes the rollout and its hosts' nodes as the push's transaction does. */
    private RolloutRecord push(DesiredRecord d, List<String> hosts) throws Exception {
        RolloutRecord r = RolloutRecord.start(d, hosts, Set.copyOf(hosts), null, "test", Instant.now());
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().rollouts(), "{}".getBytes());
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(zk.client().transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(zk.paths().rollout(MODULE), Json.bytes(r)));
        for (RolloutHostRecord h : r.startChildren()) {
            ops.add(zk.client().transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(zk.paths().rolloutHost(MODULE, h.host()), Json.bytes(h)));
        }
        zk.client().transaction().forOperations(ops);
        return r;
    }

    private void set(String host, String push, RolloutHostState s) throws Exception {
        zk.client().setData().forPath(zk.paths().rolloutHost(MODULE, host),
                Json.bytes(RolloutHostRecord.waiting(host, push, Instant.now()).moved(push, s, "x", Instant.now())));
    }

    private RolloutGate gate(String host) { return new RolloutGate(new MeshStore(zk.client(), zk.paths()), host, ProcessRef.current("test " + host)); }

    private RolloutRecord view() throws Exception { return RolloutNodes.readView(zk.client(), zk.paths(), MODULE); }

    @Test
    void aFailedCanaryPausesTheRolloutThroughItsOwnNodeAlone() throws Exception {
        DesiredRecord d = desired(new RolloutSpec("1", 1, null));
        RolloutRecord pushed = push(d, List.of("rh-1", "rh-2"));
        byte[] node = zk.client().getData().forPath(zk.paths().rollout(MODULE));
        try (RolloutGate.Admission canary = gate("rh-1").admit(d)) {
            assertThat(canary.keepsPrevious()).isFalse();
            assertThat(canary.holdsSlot()).isTrue();
            RolloutGate.Admission other = gate("rh-2").admit(d);
            assertThat(other.keepsPrevious()).as("not a canary").isTrue();
            assertThat(other.why()).contains("waiting for the canaries [rh-1]");
            canary.finished(ApplyOutcome.FAILED, "not ready");
        }
        RolloutRecord v = view();
        assertThat(v.state()).isEqualTo(RolloutState.PAUSED);
        assertThat(v.note()).isEqualTo("rh-1 failed: not ready");
        assertThat(Json.read(zk.client().getData().forPath(zk.paths().rolloutHost(MODULE, "rh-1")), RolloutHostRecord.class).error())
                .isEqualTo("not ready");
        assertThat(zk.client().getData().forPath(zk.paths().rollout(MODULE))).as("the rollout node is the coordinators': untouched")
                .isEqualTo(node);
        RolloutGate.Admission paused = gate("rh-2").admit(d);
        assertThat(paused.outcome()).isEqualTo(ApplyOutcome.DEFERRED);
        assertThat(paused.why()).contains("paused", "mesh rollout resume " + MODULE);
        assertThat(pushed.state()).isEqualTo(RolloutState.ROLLING);
    }

    @Test
    void twoHostsRacingForTheLastPlaceAreNeverBothCountedApplying() throws Exception {
        DesiredRecord d = desired(new RolloutSpec("2", null, null));
        RolloutRecord r = push(d, List.of("rh-0", "rh-1", "rh-2"));
        set("rh-0", r.push(), RolloutHostState.APPLYING); // its agent died mid-recreate: no lease, but its place
        RolloutGate g1 = gate("rh-1"), g2 = gate("rh-2");
        ExecutorService two = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 20; round++) {
                set("rh-1", r.push(), RolloutHostState.WAITING);
                set("rh-2", r.push(), RolloutHostState.WAITING);
                CyclicBarrier together = new CyclicBarrier(2);
                Future<RolloutGate.Admission> a1 = two.submit(() -> { together.await(); return g1.admit(d); });
                Future<RolloutGate.Admission> a2 = two.submit(() -> { together.await(); return g2.admit(d); });
                List<RolloutGate.Admission> both = List.of(a1.get(), a2.get());
                try {
                    long admitted = both.stream().filter(a -> !a.keepsPrevious()).count();
                    assertThat(admitted).as("round %d: one place left beside rh-0", round).isEqualTo(1);
                    assertThat(view().applying()).as("round %d", round).hasSize(2).contains("rh-0");
                } finally {
                    both.forEach(RolloutGate.Admission::close);
                }
            }
        } finally {
            two.shutdownNow();
        }
    }

    /**
     * A host's node that names another host (rh-2 writing "rh-1 failed" into its own node, which its ACL lets it write)
     * is not counted as rh-1's: the canary's place and the rollout's state come from rh-1's node alone.
     */
    @Test
    void aHostsNodeNamingAnotherHostIsNotCounted() throws Exception {
        DesiredRecord d = desired(new RolloutSpec("1", 1, null));
        RolloutRecord r = push(d, List.of("rh-1", "rh-2"));
        zk.client().setData().forPath(zk.paths().rolloutHost(MODULE, "rh-2"),
                Json.bytes(RolloutHostRecord.waiting("rh-1", r.push(), Instant.now()).moved(r.push(), RolloutHostState.FAILED, "forged", Instant.now())));
        RolloutRecord v = view();
        assertThat(v.state()).as("rh-2's node claims rh-1 failed").isEqualTo(RolloutState.ROLLING);
        assertThat(v.failed()).isEmpty();
        try (RolloutGate.Admission canary = gate("rh-1").admit(d)) {
            assertThat(canary.keepsPrevious()).as("rh-1 is still the canary, free to apply").isFalse();
        }
    }

    /**
     * A host that was not a target when the push was taken (an agent started after a {@code ["*"]} push) has no node
     * of its own: once the rollout is done it applies the push, and the end of that apply must not fail for want of a
     * node it was never given (decision 13, Consequences).
     */
    @Test
    void aHostThatJoinedAfterThePushAppliesOnceDoneWithoutANodeOfItsOwn() throws Exception {
        DesiredRecord d = desired(new RolloutSpec("1", null, null));
        RolloutRecord r = push(d, List.of("rh-1"));
        set("rh-1", r.push(), RolloutHostState.DONE);
        assertThat(view().state()).isEqualTo(RolloutState.DONE);
        try (RolloutGate.Admission late = gate("rh-9").admit(d)) {
            assertThat(late.keepsPrevious()).as("the rollout is done: the late host applies the push").isFalse();
            late.finished(ApplyOutcome.APPLIED, null); // threw IllegalStateException: .../rh-9 is missing
        }
        assertThat(zk.client().checkExists().forPath(zk.paths().rolloutHost(MODULE, "rh-9"))).isNull();
        assertThat(view().state()).isEqualTo(RolloutState.DONE);
    }

    /**
     * A host may write its own node with anything (decision 13): a failed node whose error is near a node's limit. The
     * other hosts' reports quote the rollout's note ({@code rollout}: why they wait), and a report over ZooKeeper's
     * {@code jute.maxbuffer} costs each of them its connection: what one host wrote must not reach the others unbounded.
     */
    @Test
    void oneHostsErrorReachesTheOthersReportsBounded() throws Exception {
        DesiredRecord d = desired(new RolloutSpec("1", null, null));
        RolloutRecord r = push(d, List.of("rh-1", "rh-2"));
        zk.client().setData().forPath(zk.paths().rolloutHost(MODULE, "rh-1"), Json.bytes(RolloutHostRecord.waiting("rh-1", r.push(), Instant.now())
                .moved(r.push(), RolloutHostState.FAILED, "x".repeat(1_000_000), Instant.now())));
        try (RolloutGate.Admission other = gate("rh-2").admit(d)) {
            assertThat(other.outcome()).isEqualTo(ApplyOutcome.DEFERRED);
            assertThat(other.why()).contains("paused");
            assertThat(other.why().length()).as("the report's rollout of a host waiting on rh-1's failure").isLessThan(64 * 1024);
        }
    }
}
