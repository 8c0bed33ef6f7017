package io.mesh.agent;

import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.LoopbackServer;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.ZkPaths;
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
 * A rollout's gate (SPEC.md, "The rest of the operator's stack"; decision 35) against a real Prometheus and a real
 * daemon: while the query answers series, the host does not begin (its report says why, nothing is created in
 * Docker); it asks again by itself, with no move of the rollout and its reconcile 10 minutes away, and begins once the
 * answer has none. Docker's clock says when the container was created.
 */
@Tag("slow") // a host that waits 8 s for its gate: the full run, not --fast
class RolloutGatedTest {
    private static final String HOST = "rg-a";
    @RegisterExtension
    static final LoopbackServer prometheus = LoopbackServer.prometheus();
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);
    private final String module = TestDocker.uniqueModule("rgate");

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    @Test
    void aHostDoesNotBeginWhileItsRolloutsGateAnswersSeriesAndBeginsOnceItAnswersNone() throws Exception {
        Instant opens = Instant.now().plusSeconds(8);
        List<String> hosts = List.of(HOST);
        ModuleSpec spec = new ManifestParser().parse("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n  web:\n"
                + "    image: " + TestDocker.BUSYBOX + "\n    network: none\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "rollout:\n  canary: 1\n  gate: {prometheus: {url: \"" + prometheus.url() + "\", query: 'vector(time()) < "
                + opens.getEpochSecond() + "'}}\n").get(0);
        DesiredRecord d = new DesiredRecord(module, "r1", ZkPaths.pushName(1), spec);
        zk.writeRolloutPush(d, RolloutRecord.start(d, hosts, Set.copyOf(hosts), null, "test", Instant.now()), h -> h);
        agent.daemon();
        String report = zk.paths().report(HOST, module);
        await().atMost(Duration.ofSeconds(6)).untilAsserted(() -> {
            assertThat(zk.client().checkExists().forPath(report)).isNotNull();
            ApplyReport a = Json.read(zk.client().getData().forPath(report), ApplyReport.class);
            assertThat(a.outcome()).isEqualTo(ApplyOutcome.DEFERRED);
            assertThat(a.rollout()).contains("the rollout's gate is blocked: vector(time()) <", "answered 1 series");
        });
        assertThat(TestDocker.engine().idByName(module + "-web")).as("nothing begun while blocked").isNull();
        await().atMost(Duration.ofSeconds(40)).untilAsserted(() -> {
            ApplyReport a = Json.read(zk.client().getData().forPath(report), ApplyReport.class);
            assertThat(a.outcome()).as("%s", a).isEqualTo(ApplyOutcome.APPLIED);
        });
        Instant created = Instant.parse(TestDocker.engine().inspect(module + "-web").getCreated());
        assertThat(created).as("created, by Docker's clock, once the gate opened").isAfterOrEqualTo(opens);
    }
}
