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
import io.mesh.wire.Json;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutHostState;
import io.mesh.wire.RolloutRecord;
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
 * {@code promote: manual} and {@code soak} (SPEC.md "The rest of the operator's stack"; decision 13) with a real
 * daemon for the host after the canary and the test playing the canary and the coordinator: the host waits, with
 * nothing created in Docker, until the operator's promote is written in the rollout node, or until the canary has
 * soaked; the promote, or the soak's end, itself wakes it (its reconcile is 10 minutes away), and it applies. Docker's
 * state is read from Docker.
 */
@Tag("slow") // a 4 s soak and a promote through a daemon: the full run, not --fast
class RolloutPromoteAndSoakTest {
    private static final String HOST = "rp-b";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST); // reconciles every 10 min
    private final String module = TestDocker.uniqueModule("rpromo");

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    @Test
    void theHostAfterTheCanaryWaitsForThePromoteAndThePromoteWakesIt() throws Exception {
        List<String> hosts = List.of("rp-a", HOST);
        DesiredRecord d = new DesiredRecord(module, "r1", ZkPaths.pushName(1), spec(hosts));
        RolloutRecord r = RolloutRecord.start(d, hosts, Set.copyOf(hosts), null, "test", Instant.now());
        assertThat(r.canary()).containsExactly("rp-a");
        zk.writeRolloutPush(d, r, h -> h);
        agent.daemon();
        CuratorFramework c = zk.client();
        String report = zk.paths().report(HOST, module);

        // The canary is ready: the host is told why it waits, and who lets it go.
        c.setData().forPath(zk.paths().rolloutHost(module, "rp-a"), Json.bytes(RolloutHostRecord.waiting("rp-a", d.push(), Instant.now())
                .moved(d.push(), RolloutHostState.DONE, null, Instant.now())));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(c.checkExists().forPath(report)).isNotNull();
            ApplyReport a = Json.read(c.getData().forPath(report), ApplyReport.class);
            assertThat(a.outcome()).isEqualTo(ApplyOutcome.DEFERRED);
            assertThat(a.rollout()).contains("the canaries [rp-a] are ready", "mesh rollout promote " + module);
        });
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
                .until(() -> TestDocker.engine().idByName(module + "-web") == null);

        // The operator promotes, as the coordinator writes it: the host applies without waiting for its reconcile.
        RolloutRecord view = RolloutNodes.readView(c, zk.paths(), module);
        c.setData().forPath(zk.paths().rollout(module), Json.bytes(view.promote("op", Instant.now())));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            ApplyReport a = Json.read(c.getData().forPath(report), ApplyReport.class);
            assertThat(a.outcome()).as("%s", a).isEqualTo(ApplyOutcome.APPLIED);
            assertThat(Json.read(c.getData().forPath(zk.paths().rolloutHost(module, HOST)), RolloutHostRecord.class).state())
                    .isEqualTo(RolloutHostState.DONE);
        });
        assertThat(TestDocker.engine().inspect(module + "-web").getState().getRunning()).as("from Docker").isTrue();
    }

    @Test
    void theHostAfterTheCanaryBeginsWhenTheCanarysSoakEndsWithoutAMove() throws Exception {
        List<String> hosts = List.of("rp-a", HOST);
        DesiredRecord d = new DesiredRecord(module, "r1", ZkPaths.pushName(1), spec(hosts, "  soak: 4s\n"));
        RolloutRecord r = RolloutRecord.start(d, hosts, Set.copyOf(hosts), null, "test", Instant.now());
        zk.writeRolloutPush(d, r, h -> h);
        agent.daemon();
        CuratorFramework c = zk.client();
        String report = zk.paths().report(HOST, module);

        Instant done = Instant.now();
        c.setData().forPath(zk.paths().rolloutHost(module, "rp-a"), Json.bytes(RolloutHostRecord.waiting("rp-a", d.push(), done)
                .moved(d.push(), RolloutHostState.DONE, null, done)));
        await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> {
            assertThat(c.checkExists().forPath(report)).isNotNull();
            ApplyReport a = Json.read(c.getData().forPath(report), ApplyReport.class);
            assertThat(a.outcome()).isEqualTo(ApplyOutcome.DEFERRED);
            assertThat(a.rollout()).contains("stay ready until", "soak 4s");
        });
        assertThat(TestDocker.engine().idByName(module + "-web")).as("nothing begun during the soak").isNull();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            ApplyReport a = Json.read(c.getData().forPath(report), ApplyReport.class);
            assertThat(a.outcome()).as("%s", a).isEqualTo(ApplyOutcome.APPLIED);
        });
        Instant created = Instant.parse(TestDocker.engine().inspect(module + "-web").getCreated());
        assertThat(Duration.between(done, created)).as("created, by Docker's clock, once the soak ended").isGreaterThanOrEqualTo(Duration.ofSeconds(4));
        assertThat(TestDocker.engine().inspect(module + "-web").getState().getRunning()).as("from Docker").isTrue();
    }

    /** One container that exits on SIGTERM, on {@code hosts}, one canary, promoted by hand. */
    private ModuleSpec spec(List<String> hosts) throws Exception {
        return spec(hosts, "  promote: manual\n");
    }

    /** One container that exits on SIGTERM, on {@code hosts}, one canary, and {@code rollout} lines after it. */
    private ModuleSpec spec(List<String> hosts, String more) throws Exception {
        return new ManifestParser().parse("module: " + module + "\nhosts: [" + String.join(", ", hosts) + "]\ncontainers:\n  web:\n"
                + "    image: " + TestDocker.BUSYBOX + "\n    network: none\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "rollout:\n  canary: 1\n" + more).get(0);
    }
}
