package io.mesh.agent;

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
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Decision 13 (Consequences) and failure model row 110: only a call Docker never answered, or answered shutting down,
 * is the engine's failure; an image the revision names that cannot be had is the revision's, and fails the canary
 * (the rollout pauses). The image lookups throw mesh's own {@code IllegalStateException} (wrapping Docker's answer for
 * a pull), which is no {@code DockerException} with a status: it must not read as "Docker never answered". Real
 * engine, real ZooKeeper; no registry is needed.
 */
class RolloutImageRefusedTest {
    private static final String HOST = "ri-a";
    private final String module = TestDocker.uniqueModule("riref");
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST).withRuntime(TestDocker.engine());

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    /** {@code pull: never} and the image is not on the host: the revision cannot run here. */
    @Test
    void aCanaryWhoseImageIsNotOnTheHostFailsTheRollout() throws Exception {
        canaryFailsTheRollout("mesh-review-absent/none:1", "never", "is not on this host");
    }

    /** A registry that cannot be reached: Docker answers the pull with its error (dockerd itself is fine). */
    @Test
    void aCanaryWhoseImageDockerCannotPullFailsTheRollout() throws Exception {
        canaryFailsTheRollout("127.0.0.1:1/mesh-review/none:1", "missing", "could not be pulled");
    }

    private void canaryFailsTheRollout(String image, String pull, String error) throws Exception {
        List<String> hosts = List.of(HOST, "ri-b");
        DesiredRecord d = new DesiredRecord(module, "r1", ZkPaths.pushName(1), spec(hosts, image, pull));
        RolloutRecord r = RolloutRecord.start(d, hosts, Set.copyOf(hosts), null, "test", Instant.now());
        assertThat(r.canary()).containsExactly(HOST);
        zk.writeRolloutPush(d, r, h -> h);
        CuratorFramework c = zk.client();
        String report = zk.paths().report(HOST, module);
        String mine = zk.paths().rolloutHost(module, HOST);

        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            assertThat(c.checkExists().forPath(report)).isNotNull();
            ApplyReport a = Json.read(c.getData().forPath(report), ApplyReport.class);
            assertThat(a.outcome()).isEqualTo(ApplyOutcome.FAILED);
            assertThat(a.error()).contains(error);
        });
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            RolloutHostRecord after = Json.read(c.getData().forPath(mine), RolloutHostRecord.class);
            assertThat(after.state()).as("the revision's failure, not the engine's: %s", after).isEqualTo(RolloutHostState.FAILED);
        });
    }

    /** One container on {@code hosts} whose image is {@code image} with {@code pull}, one canary. */
    private ModuleSpec spec(List<String> hosts, String image, String pull) throws Exception {
        return new ManifestParser().parse("module: " + module + "\nhosts: [" + String.join(", ", hosts) + "]\ncontainers:\n  web:\n"
                + "    image: " + image + "\n    pull: " + pull + "\n    network: none\n    command: [sh, -c, \"sleep 60\"]\n"
                + "rollout:\n  canary: 1\n").get(0);
    }
}
