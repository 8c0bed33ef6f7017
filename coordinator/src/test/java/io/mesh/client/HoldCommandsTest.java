package io.mesh.client;

import io.mesh.coordinator.CoordinatorExtension;
import io.mesh.coordinator.Manifests;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.Times;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code mesh hold}, {@code mesh release} and {@code mesh held}'s operator holds (decision 0015). */
class HoldCommandsTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();
    @RegisterExtension
    final CoordinatorExtension api = new CoordinatorExtension(zk);

    private ClientRun mesh(String... args) { return ClientRun.of(api.uri().toString(), args); }

    @Test
    void holdHeldAndRelease() throws Exception {
        assertThat(api.push(Manifests.store("[host-a]")).status()).isEqualTo(202);
        zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(zk.paths().agent("host-a"), Json.bytes(new AgentRecord("host-a", "0.1.0", 4242, Times.now())));

        ClientRun bad = mesh("hold", "host-a", "store-registry", "--reason", "x", "--for", "soon");
        assertThat(bad.code()).as(bad.toString()).isEqualTo(MeshCli.BAD_INPUT);
        assertThat(bad.err()).contains("for:", "not a duration");
        assertThat(mesh("hold", "host-a", "store-registry").code()).as("--reason is required").isEqualTo(MeshCli.BAD_INPUT);

        ClientRun held = mesh("hold", "host-a", "store-registry", "--reason", "disk swap", "--for", "30m", "--stop");
        assertThat(held.code()).as(held.toString()).isZero();
        assertThat(held.out()).contains("store-registry on host-a held by ", "disk swap", "until ", "its agent stops it");
        HeldRecord h = Json.read(zk.client().getData().forPath(zk.paths().held("host-a", "store-registry")), HeldRecord.class);
        assertThat(h.hold().stops()).isTrue();

        ClientRun list = mesh("held");
        assertThat(list.code()).isZero();
        assertThat(list.out()).contains("no container is held by a window", "HOLD BY", "REASON", "UNTIL", "disk swap", "to stop");

        ClientRun rel = mesh("release", "host-a", "store-registry");
        assertThat(rel.code()).as(rel.toString()).isZero();
        assertThat(rel.out()).contains("released", "disk swap");
        assertThat(mesh("release", "host-a", "store-registry").code()).isEqualTo(MeshCli.BAD_INPUT);
        assertThat(mesh("held").out()).contains("no container is held by an operator");
    }

    /** A push deferred by an operator hold names the hold, not a window, in mesh status. */
    @Test
    void statusOfAPushDeferredByAnOperatorHoldNamesTheHold() throws Exception {
        assertThat(api.push(Manifests.store("[host-a]")).status()).isEqualTo(202);
        Instant t = Instant.parse("2026-12-01T10:00:00Z");
        ApplyReport r = ApplyReport.deferred("host-a", "store", "r1", "push-0000000000", t, null, List.of(ApplyReport.ContainerResult.held(
                "registry", "store-registry", "held by operator alice: disk swap (since " + t + ", until released)", "3f2a")));
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().report("host-a", "store"), Json.bytes(r));
        CoordinatorExtension.awaitServed(zk, zk.paths().report("host-a", "store"));
        ClientRun s = mesh("status", "push-0000000000");
        assertThat(s.code()).as(s.toString()).isZero();
        assertThat(s.out()).contains("deferred", "store-registry held by operator alice: disk swap");
    }
}
