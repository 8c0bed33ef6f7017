package io.mesh.apply;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.testing.ApplierExtension;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A rollout's {@code silence} (SPEC.md "The rest of the operator's stack": per schedule and per rollout) against a real
 * Alertmanager and the real engine: a host's apply silences the container its recreate stops, with the rollout's
 * matchers and {@code mesh_host}/{@code mesh_container}, while the recreate runs, and expires it once the apply ended.
 * Read from Alertmanager's own API; the recreate from Docker.
 */
@Tag("slow") // a recreate with a 3 s readiness wait against Alertmanager
class RolloutSilenceTest {
    private static final String HOST = ApplierExtension.HOST;
    @RegisterExtension
    static final LoopbackServer alertmanager = LoopbackServer.alertmanager();
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final ApplierExtension here = new ApplierExtension(zk, "rs-");

    @AfterEach
    void tearDown() {
        TestDocker.clean(here.module());
    }

    private String yaml(String version, String rollout) {
        return "module: " + here.module() + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  app:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    env: {VERSION: \"" + version + "\"}\n    network: none\n    stop-timeout: 2s\n"
                + "    healthcheck: {test: [CMD, \"true\"], interval: 1s, timeout: 1s, retries: 1}\n"
                + "    ready: {min-healthy: 3s, deadline: 20s}\n" + rollout;
    }

    /** @return Alertmanager's silences of this module's container */
    private List<JsonNode> silences() throws Exception {
        return alertmanager.silencesOf(here.module() + "-app");
    }

    private static String matcher(JsonNode silence, String name) { return LoopbackServer.matcher(silence, name); }

    @Test
    void aRolloutHostSilencesTheContainerItsRecreateStopsAndExpiresTheSilenceOnceTheApplyEnded() throws Exception {
        String module = here.module();
        DesiredRecord v1 = zk.setDesired(yaml("v1", ""), "r1");
        assertThat(here.applier().apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String before = here.docker().idByName(module + "-app");
        assertThat(silences()).as("a plain apply silences nothing").isEmpty();

        ModuleSpec spec = new ManifestParser().parse(yaml("v2", "rollout:\n  canary: 1\n  silence: {alertmanager: \"" + alertmanager.url()
                + "\", matchers: {job: web}}\n")).get(0);
        DesiredRecord v2 = new DesiredRecord(module, "r2", ZkPaths.pushName(2), spec);
        RolloutRecord r = RolloutRecord.start(v2, List.of(HOST), Set.of(HOST), v1, "test", Instant.now());
        zk.client().delete().forPath(zk.paths().desired(module));
        zk.writeRolloutPush(v2, r, h -> h);

        CompletableFuture<ApplyReport> apply = CompletableFuture.supplyAsync(() -> {
            try {
                return here.applier().apply(module, () -> false);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).untilAsserted(() ->
                assertThat(silences()).singleElement().satisfies(s -> {
                    assertThat(s.path("status").path("state").asText()).isEqualTo("active");
                    assertThat(matcher(s, "job")).isEqualTo("web");
                    assertThat(matcher(s, "mesh_host")).isEqualTo(HOST);
                    assertThat(s.path("comment").asText()).contains("rollout of " + v2.push());
                }));
        assertThat(apply).as("silenced while the apply runs").isNotDone();
        ApplyReport report = apply.get(1, TimeUnit.MINUTES);
        assertThat(report.outcome()).as(Json.text(report)).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(here.docker().idByName(module + "-app")).as("recreated, by Docker").isNotEqualTo(before);
        assertThat(silences()).singleElement().satisfies(s -> assertThat(s.path("status").path("state").asText())
                .as("expired once the apply ended").isEqualTo("expired"));
    }
}
