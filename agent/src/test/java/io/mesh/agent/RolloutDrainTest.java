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
import io.mesh.wire.DrainRecord;
import io.mesh.wire.Json;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutHostState;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.RolloutState;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A rollout passes over a drained host (SPEC.md "The rest of the operator's stack"; decision 37), with a real daemon
 * for the drained host and the test playing the canary: the drained host moves its own node to {@code drained}, the
 * rollout counts it settled and is done, nothing is made on the drained host (read from Docker); undrained, the host
 * applies the push the rollout finished.
 */
@Tag("slow")
class RolloutDrainTest {
    private static final String HOST = "rd-b";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST); // reconciles every 10 min
    private final String module = TestDocker.uniqueModule("rdrain");

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    @Test
    void aDrainedHostIsPassedOverAndAppliesOnceUndrained() throws Exception {
        CuratorFramework c = zk.client();
        c.create().creatingParentsIfNeeded().forPath(zk.paths().drain(HOST),
                Json.bytes(new DrainRecord("op", "kernel OPS-7", Instant.now(), null, null)));
        List<String> hosts = List.of("rd-a", HOST);
        DesiredRecord d = new DesiredRecord(module, "r1", ZkPaths.pushName(1), spec(hosts));
        RolloutRecord r = RolloutRecord.start(d, hosts, Set.of("rd-a"), null, "test", Instant.now());
        assertThat(r.canary()).containsExactly("rd-a");
        zk.writeRolloutPush(d, r, h -> h);
        agent.daemon();
        String report = zk.paths().report(HOST, module);

        // The canary is done: the drained host's wave comes, and it is passed over.
        c.setData().forPath(zk.paths().rolloutHost(module, "rd-a"), Json.bytes(RolloutHostRecord.waiting("rd-a", d.push(), Instant.now())
                .moved(d.push(), RolloutHostState.DONE, null, Instant.now())));
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
            assertThat(Json.read(c.getData().forPath(zk.paths().rolloutHost(module, HOST)), RolloutHostRecord.class).state())
                    .isEqualTo(RolloutHostState.DRAINED);
            ApplyReport a = Json.read(c.getData().forPath(report), ApplyReport.class);
            assertThat(a.outcome()).isEqualTo(ApplyOutcome.DEFERRED);
        });
        RolloutRecord view = RolloutNodes.readView(c, zk.paths(), module);
        assertThat(view.state()).as("the drained host counted settled").isEqualTo(RolloutState.DONE);
        assertThat(view.drainedHosts()).containsExactly(HOST);
        assertThat(TestDocker.engine().idByName(module + "-web")).as("nothing made on the drained host").isNull();

        // Undrained (as mesh undrain: the node goes; its agent releases the drain's holds): the host applies.
        c.delete().forPath(zk.paths().drain(HOST));
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
            ApplyReport a = Json.read(c.getData().forPath(report), ApplyReport.class);
            assertThat(a.outcome()).as("%s", a).isEqualTo(ApplyOutcome.APPLIED);
        });
        assertThat(TestDocker.engine().inspect(module + "-web").getState().getRunning()).as("from Docker").isTrue();
    }

    /** One container that exits on SIGTERM, on {@code hosts}, one canary. */
    private ModuleSpec spec(List<String> hosts) throws Exception {
        return new ManifestParser().parse("module: " + module + "\nhosts: [" + String.join(", ", hosts) + "]\ncontainers:\n  web:\n"
                + "    image: " + TestDocker.BUSYBOX + "\n    network: none\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "rollout:\n  canary: 1\n").get(0);
    }
}
