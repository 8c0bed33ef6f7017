package io.mesh.coordinator;

import io.mesh.wire.AgentRecord;
import io.mesh.wire.Json;
import io.mesh.wire.Times;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A push using a field some targeted host's agent does not know is refused naming those hosts, unless forced (SPEC.md
 * "Running it for real"; docs/decisions/0041-upgrades.md), against a real ZooKeeper server with agents' nodes as agents
 * of two versions publish them.
 */
class AgentVersionPushTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    private void agent(String host, String version) throws Exception {
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(fx.zk.paths().agent(host), Json.bytes(new AgentRecord(host, version, 4242, Times.now())));
    }

    @Test
    void aFieldAnOldAgentDoesNotKnowIsRefusedNamingItsHostUnlessForced() throws Exception {
        agent("host-old", "0.0.9");
        agent("host-new", io.mesh.wire.MeshVersion.CURRENT);
        // the cache sees both agents
        fx.awaitServed(fx.zk.paths().agent("host-old"));
        fx.awaitServed(fx.zk.paths().agent("host-new"));

        CoordinatorExtension.Answer onNew = fx.api.post("/v1/pushes", Manifests.store("[host-new]").getBytes(StandardCharsets.UTF_8), Map.of());
        assertThat(onNew.status()).as(onNew.body()).isEqualTo(202);

        CoordinatorExtension.Answer onOld = fx.api.post("/v1/pushes", Manifests.store("[host-new, host-old]").getBytes(StandardCharsets.UTF_8),
                Map.of("X-Mesh-Revision", "r2"));
        assertThat(onOld.status()).as(onOld.body()).isEqualTo(400);
        assertThat(onOld.body()).contains("host-old (0.0.9)", "do not know it", "upgrade those agents first", "--force")
                .doesNotContain("host-new (");
        assertThat(fx.zk.client().getChildren().forPath(fx.zk.paths().pushes())).as("nothing written").hasSize(1);

        CoordinatorExtension.Answer forced = fx.api.post("/v1/pushes?force=true", Manifests.store("[host-new, host-old]").getBytes(StandardCharsets.UTF_8),
                Map.of("X-Mesh-Revision", "r2"));
        assertThat(forced.status()).as(forced.body()).isEqualTo(202);
    }
}
