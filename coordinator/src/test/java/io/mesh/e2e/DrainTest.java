package io.mesh.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.docker.DockerEngine;
import io.mesh.ledger.LedgerFiles;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.wire.AuditChecker;
import io.mesh.wire.AuditReport;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.WindowOutcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A drain (SPEC.md "The rest of the operator's stack"; decision 37), on a real Docker engine and ZooKeeper: with
 * {@code --stop} every container of the host is held and stopped by its agent, a window there is skipped, a container a
 * push adds meanwhile is held before it exists (so not made), and {@code mesh undrain} starts the same containers again
 * and lands the push. What Docker did is read from its events; the agent's own checker finds nothing in its ledger.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
@Tag("slow")
class DrainTest {
    private static final String HOST = "host-drain";
    @RegisterExtension
    @Order(1)
    final CoordinatorFixture fx = new CoordinatorFixture();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(fx.zk, HOST).reconcileEvery(Duration.ofMinutes(10));
    private final String module = TestDocker.uniqueModule("drn");
    private final DockerEngine docker = TestDocker.engine();

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    private String manifest(String... names) {
        StringBuilder b = new StringBuilder("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n");
        for (String n : names) {
            b.append("  ").append(n).append(":\n    image: ").append(BUSYBOX).append("\n")
                    .append("    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n")
                    .append("    network: none\n    stop-timeout: 2s\n    restart: unless-stopped\n");
        }
        return b + "schedules:\n  sweep:\n    cron: \"30 3 * * *\"\n    while-stopped: [" + names[0] + "]\n"
                + "    step: {image: " + BUSYBOX + ", command: [sleep, \"1\"]}\n    timeout: 1m\n";
    }

    private String push(String yaml, String revision) throws Exception {
        Answer a = fx.api.post("/v1/pushes", yaml.getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", revision));
        assertThat(a.status()).as(a.body()).isEqualTo(202);
        return a.json().path("push").asText();
    }

    private String state(String push) throws Exception {
        for (JsonNode t : fx.api.get("/v1/pushes/" + push).json().path("targets")) {
            if (t.path("module").asText().equals(module)) return t.path("state").asText();
        }
        return "";
    }

    private Map<String, HeldRecord> held() throws Exception {
        return io.mesh.curator.HeldRegistry.read(fx.zk.client(), fx.zk.paths(), HOST);
    }

    @Test
    void aDrainHoldsAndStopsEveryContainerAndUndrainStartsTheSameOnes() throws Exception {
        Instant t0 = Instant.now();
        String p1 = push(manifest("a1", "b2"), "r1");
        await().atMost(Duration.ofSeconds(60)).until(() -> state(p1).equals("applied"));
        String a1 = module + "-a1", b2 = module + "-b2", c3 = module + "-c3";
        String idA = docker.inspect(a1).getId(), idB = docker.inspect(b2).getId();
        try (DockerEvents events = DockerEvents.record(module)) {
            Answer d = fx.api.post("/v1/drains", ("{\"host\":\"" + HOST + "\",\"reason\":\"kernel OPS-7\",\"stop\":true}").getBytes(StandardCharsets.UTF_8), Map.of());
            assertThat(d.status()).as(d.body()).isEqualTo(201);
            // Both held as the operator's, from the drain, confirmed and stopped by the agent
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                Map<String, HeldRecord> h = held();
                return List.of(a1, b2).stream().allMatch(c -> h.containsKey(c) && h.get(c).operatorHold() && h.get(c).hold().ofDrain()
                        && h.get(c).hold().stoppedAt() != null);
            });
            assertThat(held().get(a1).hold().reason()).isEqualTo("drain: kernel OPS-7");
            // Drained once: a second drain would change none of its holds, and a drain's hold ends with the drain only
            Answer again = fx.api.post("/v1/drains", ("{\"host\":\"" + HOST + "\",\"reason\":\"other\"}").getBytes(StandardCharsets.UTF_8), Map.of());
            assertThat(again.status()).as(again.body()).isEqualTo(409);
            assertThat(again.body()).contains("drained already", "mesh undrain " + HOST + " first");
            Answer release = fx.api.method("DELETE", "/v1/holds/" + HOST + "/" + a1);
            assertThat(release.status()).as(release.body()).isEqualTo(409);
            assertThat(release.body()).contains("held by the drain of " + HOST, "mesh undrain " + HOST);
            assertThat(held()).containsKey(a1);
            await().atMost(Duration.ofSeconds(10)).until(() -> !docker.inspect(a1).getState().getRunning() && !docker.inspect(b2).getState().getRunning());

            // No window runs on a drained host
            io.mesh.wire.WindowResult window = agent.daemon().runWindow(module, "sweep").get(30, TimeUnit.SECONDS);
            assertThat(window.outcome()).isEqualTo(WindowOutcome.SKIPPED);
            assertThat(window.error()).contains("host drained by").contains("kernel OPS-7");

            // A container a push adds while drained is held before it exists: not made
            String p2 = push(manifest("a1", "b2", "c3"), "r2");
            await().atMost(Duration.ofSeconds(30)).until(() -> held().containsKey(c3) && held().get(c3).hold().isConfirmed());
            // deferred by the drain's holds alone: the push reads drained, settled (it lands at the undrain)
            await().atMost(Duration.ofSeconds(30)).until(() -> state(p2).equals("drained"));
            assertThat(docker.idByName(c3)).as("held before it was made").isNull();

            Answer u = fx.api.method("DELETE", "/v1/drains/" + HOST);
            assertThat(u.status()).as(u.body()).isEqualTo(200);
            await().atMost(Duration.ofSeconds(60)).until(() -> state(p2).equals("applied"));
            assertThat(held()).isEmpty();
            assertThat(docker.inspect(a1).getId()).as("the same container started again").isEqualTo(idA);
            assertThat(docker.inspect(b2).getId()).isEqualTo(idB);
            assertThat(docker.inspect(a1).getState().getRunning()).isTrue();
            assertThat(docker.inspect(c3).getState().getRunning()).isTrue();
            events.settle();
            // By Docker's events: each of the two stopped once and started once; the window's step was never made
            for (String id : List.of(idA, idB)) {
                List<String> actions = events.since(t0).stream().filter(e -> id.equals(e.getId())).map(TestDocker::action).toList();
                assertThat(actions).as(id).containsSubsequence("kill", "start").doesNotContain("destroy");
                assertThat(actions.stream().filter("start"::equals).count()).as(id).isEqualTo(1);
            }
            assertThat(events.since(t0)).noneMatch(e -> e.getActor() != null && e.getActor().getAttributes().containsKey(io.mesh.docker.Labels.WINDOW));
        }
        List<LedgerEntry> lines = LedgerFiles.of(agent.stateDir()).slice(t0, Instant.now(), Set.of(module));
        AuditReport audit = AuditChecker.check(HOST, lines, t0, Instant.now(), null, Instant.now());
        assertThat(audit.violations()).as("%s", audit.violations()).isEmpty();
        assertThat(audit.items()).anyMatch(i -> i.type().equals("hold") && i.stops() == 1);
    }

    @Test
    void badInputIsRefusedNamingTheFieldAndNothingIsWritten() throws Exception {
        Map<String, String> cases = new java.util.LinkedHashMap<>();
        cases.put("{\"reason\":\"r\"}", "host: missing");
        cases.put("{\"host\":\"host-nowhere\",\"reason\":\"r\"}", "no host 'host-nowhere'");
        cases.put("{\"host\":\"" + HOST + "\"}", "reason: missing");
        cases.put("{\"host\":\"" + HOST + "\",\"reason\":\"r\",\"for\":\"2 hours\"}", "for:");
        cases.put("{\"host\":\"" + HOST + "\",\"reason\":\"r\",\"stop\":\"yes\"}", "stop: must be true or false");
        cases.put("{\"host\":\"" + HOST + "\",\"reason\":\"r\",\"stopp\":true}", "unknown field 'stopp'");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Answer a = fx.api.post("/v1/drains", c.getKey().getBytes(StandardCharsets.UTF_8), Map.of());
            assertThat(a.status()).as(c.getKey()).isIn(400, 404);
            assertThat(a.body()).as(c.getKey()).contains(c.getValue());
        }
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().drains())).as("nothing written").isNull();
        Answer none = fx.api.method("DELETE", "/v1/drains/" + HOST);
        assertThat(none.status()).isEqualTo(404);
    }
}
