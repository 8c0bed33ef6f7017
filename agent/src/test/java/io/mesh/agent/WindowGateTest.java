package io.mesh.agent;

import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.LoopbackServer;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A schedule's gate (SPEC.md, "The rest of the operator's stack"; decision 35) against a real Prometheus server and
 * a real daemon: any series in the query's answer blocks the window before it takes its slot; {@code skip} skips it at
 * once, {@code wait} asks again until the answer has none or start-by passes; a server that cannot be asked blocks. That
 * the held container was not touched is read from Docker ({@code State.StartedAt}); the gate's answer is in the window's
 * result and in the module's report, read from ZooKeeper.
 */
@Tag("slow") // windows that wait for their gate and start-by: the full run, not --fast
class WindowGateTest {
    private static final String HOST = "gate-a";
    @RegisterExtension
    static final LoopbackServer prometheus = LoopbackServer.prometheus();
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);
    private final String module = TestDocker.uniqueModule("gate");
    private final DockerEngine docker = TestDocker.engine();

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    /** Pushes the module with one container and a window of it gated by {@code gate}; @return the container's StartedAt. */
    private String push(String gate, String more) throws Exception {
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  app:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 2s\n"
                + "schedules:\n  sweep:\n    cron: \"30 3 * * *\"\n    timezone: UTC\n    while-stopped: [app]\n" + more
                + "    step:\n      image: " + BUSYBOX + "\n      command: [sh, -c, \"echo swept\"]\n    timeout: 1m\n"
                + "    gate:\n" + gate, "r1");
        String app = module + "-app";
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            String id = docker.idByName(app);
            return id != null && docker.isRunning(id);
        });
        return docker.inspect(app).getState().getStartedAt();
    }

    private String prom(String query, String onBlocked) {
        return "      prometheus: {url: \"" + prometheus.url() + "\", query: '" + query + "'}\n      on-blocked: " + onBlocked + "\n";
    }

    private ApplyReport report() throws Exception {
        return Json.read(zk.client().getData().forPath(zk.paths().report(HOST, module)), ApplyReport.class);
    }

    @Test
    void aGateWithSeriesSkipsTheWindowAndStopsNothing() throws Exception {
        String started = push(prom("vector(1)", "skip"), "");
        WindowResult w = agent.daemon().runWindow(module, "sweep").get(1, TimeUnit.MINUTES);
        assertThat(w.outcome()).isEqualTo(WindowOutcome.SKIPPED);
        assertThat(w.error()).contains("gate blocked (on-blocked: skip)", "vector(1) answered 1 series");
        assertThat(w.gate()).startsWith("blocked: vector(1) answered 1 series");
        assertThat(docker.inspect(module + "-app").getState().getStartedAt()).as("not stopped nor started, by Docker").isEqualTo(started);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(report().lastWindow().gate()).as("in the report")
                .startsWith("blocked: vector(1)"));
    }

    @Test
    void aWaitingWindowBeginsOnceItsGateAnswersNoSeries() throws Exception {
        Instant opens = Instant.now().plusSeconds(8);
        String started = push(prom("vector(time()) < " + opens.getEpochSecond(), "wait"), "");
        java.util.concurrent.Future<WindowResult> running = agent.daemon().runWindow(module, "sweep");
        // While it waits, mesh windows' node shows it, with what the gate said (decision 35)
        String waitNode = zk.paths().gateWait(HOST, module, "sweep");
        io.mesh.wire.GateWaitRecord seen = await().atMost(Duration.ofSeconds(10)).ignoreExceptions()
                .until(() -> Json.read(zk.client().getData().forPath(waitNode), io.mesh.wire.GateWaitRecord.class), java.util.Objects::nonNull);
        assertThat(seen.said()).startsWith("blocked: ");
        assertThat(seen.schedule()).isEqualTo("sweep");
        WindowResult w = running.get(2, TimeUnit.MINUTES);
        assertThat(zk.client().checkExists().forPath(waitNode)).as("gone once it went on").isNull();
        assertThat(w.outcome()).as("%s", w).isEqualTo(WindowOutcome.SUCCEEDED);
        assertThat(w.gate()).startsWith("open: ").contains("answered no series");
        assertThat(w.startedAt()).isBefore(opens);
        String after = docker.inspect(module + "-app").getState().getStartedAt();
        assertThat(after).as("the window stopped and started it").isNotEqualTo(started);
        assertThat(Instant.parse(after)).as("only once the gate opened, by Docker's clock").isAfterOrEqualTo(opens);
    }

    @Test
    void aBlockedGateWaitsUntilStartByThenSkips() throws Exception {
        String started = push(prom("vector(1)", "wait"), "    start-by: 7s\n");
        Instant from = Instant.now();
        WindowResult w = agent.daemon().runWindow(module, "sweep").get(1, TimeUnit.MINUTES);
        assertThat(w.outcome()).isEqualTo(WindowOutcome.SKIPPED);
        assertThat(w.error()).contains("gate blocked (on-blocked: wait) until start-by passed");
        assertThat(Duration.between(from, Instant.now())).isGreaterThanOrEqualTo(Duration.ofSeconds(6));
        assertThat(docker.inspect(module + "-app").getState().getStartedAt()).isEqualTo(started);
    }

    @Test
    void aGateThatCannotBeAskedBlocks() throws Exception {
        String started = push("      prometheus: {url: \"http://127.0.0.1:1\", query: 'up'}\n      on-blocked: skip\n", "");
        WindowResult w = agent.daemon().runWindow(module, "sweep").get(1, TimeUnit.MINUTES);
        assertThat(w.outcome()).isEqualTo(WindowOutcome.SKIPPED);
        assertThat(w.gate()).contains("Prometheus at http://127.0.0.1:1 was not asked");
        assertThat(docker.inspect(module + "-app").getState().getStartedAt()).isEqualTo(started);
    }

    /** A query the real Prometheus refuses (a parse error the push's check cannot see) blocks: never a window run blind. */
    @Test
    void aQueryPrometheusRefusesBlocksAndTheWindowFollowsOnBlocked() throws Exception {
        String started = push(prom("up +", "skip"), "");
        WindowResult w = agent.daemon().runWindow(module, "sweep").get(1, TimeUnit.MINUTES);
        assertThat(w.outcome()).isEqualTo(WindowOutcome.SKIPPED);
        assertThat(w.gate()).startsWith("blocked: Prometheus at " + prometheus.url() + " answered 400 to up +").contains("parse error");
        assertThat(docker.inspect(module + "-app").getState().getStartedAt()).as("nothing stopped, by Docker").isEqualTo(started);
    }
}
