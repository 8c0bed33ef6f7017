package io.mesh.client;

import io.mesh.coordinator.CoordinatorExtension;
import io.mesh.coordinator.Manifests;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.Times;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

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
}
