package io.mesh.agent;

import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.rollout.RolloutGate;
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

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Decision 35, point 5: a host whose rollout gate is blocked asks it again after {@link RolloutGate#GATE_AGAIN}, once,
 * however many other wakes (a move of the rollout, a reconcile, an operator's apply) found it blocked meanwhile: each
 * must not start a wake of its own that then renews itself for as long as the gate stays blocked. How often the gate
 * was asked is Prometheus's own count of its query API's requests (its {@code /metrics}).
 */
@Tag("slow") // 15 s of a blocked gate counted: the full run, not --fast
class RolloutGateAgainTest {
    private static final String HOST = "rga-a";
    @RegisterExtension
    static final LoopbackServer prometheus = LoopbackServer.prometheus();
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);
    private final String module = TestDocker.uniqueModule("rgagain");
    private final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    /** @return how many instant queries Prometheus has answered */
    private double queries() throws Exception {
        String metrics = http.send(HttpRequest.newBuilder(URI.create(prometheus.url() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        return metrics.lines().filter(l -> l.startsWith("prometheus_http_requests_total{") && l.contains("handler=\"/api/v1/query\""))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    @Test
    void otherWakesWhileTheGateIsBlockedDoNotMultiplyItsQuestions() throws Exception {
        List<String> hosts = List.of(HOST);
        ModuleSpec spec = new ManifestParser().parse("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n  web:\n"
                + "    image: " + TestDocker.BUSYBOX + "\n    network: none\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "rollout:\n  canary: 1\n  gate: {prometheus: {url: \"" + prometheus.url() + "\", query: 'vector(1)'}}\n").get(0);
        DesiredRecord d = new DesiredRecord(module, "r1", ZkPaths.pushName(1), spec);
        zk.writeRolloutPush(d, RolloutRecord.start(d, hosts, Set.copyOf(hosts), null, "test", java.time.Instant.now()), h -> h);
        AgentDaemon daemon = agent.daemon();
        String report = zk.paths().report(HOST, module);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(zk.client().checkExists().forPath(report)).isNotNull();
            assertThat(Json.read(zk.client().getData().forPath(report), ApplyReport.class).outcome()).isEqualTo(ApplyOutcome.DEFERRED);
        });
        // Six other wakes, apart enough that none is folded into another's apply.
        for (int i = 0; i < 6; i++) {
            daemon.requestApply(module);
            Thread.sleep(700);
        }
        Thread.sleep(3000); // the wakes' own applies are over
        double before = queries();
        Thread.sleep(15_000);
        double asked = queries() - before;
        assertThat(asked).as("questions in 15 s, at one every %s s", RolloutGate.GATE_AGAIN.toSeconds()).isLessThanOrEqualTo(4);
        assertThat(TestDocker.engine().idByName(module + "-web")).as("nothing begun while blocked").isNull();
    }
}
