package io.mesh.agent;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.LoopbackServer;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;

import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A schedule's silence (SPEC.md, "The rest of the operator's stack"; decision 36) against a real Alertmanager and a
 * real daemon: while the window holds its container, Alertmanager has an active silence with the schedule's matchers,
 * {@code mesh_host} and {@code mesh_container}; once the container is ready again it is expired; an Alertmanager that
 * does not answer stops nothing. What Alertmanager holds is read from Alertmanager's own API.
 */
@Tag("slow") // windows with a 4 s step against Alertmanager: the full run, not --fast
class WindowSilenceTest {
    private static final String HOST = "silence-a";
    @RegisterExtension
    static final LoopbackServer alertmanager = LoopbackServer.alertmanager();
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);
    private final String module = TestDocker.uniqueModule("silence");
    private final DockerEngine docker = TestDocker.engine();

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    private void push(String url, String step) throws Exception {
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  app:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 2s\n"
                + "schedules:\n  sweep:\n    cron: \"30 3 * * *\"\n    timezone: UTC\n    while-stopped: [app]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [sh, -c, \"" + step + "\"]\n    timeout: 1m\n"
                + "    silence: {alertmanager: \"" + url + "\", matchers: {job: registry}}\n", "r1");
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            String id = docker.idByName(module + "-app");
            return id != null && docker.isRunning(id);
        });
    }

    /** @return Alertmanager's silences of this module's container */
    private List<JsonNode> silences() throws Exception {
        return alertmanager.silencesOf(module + "-app");
    }

    private static String matcher(JsonNode silence, String name) { return LoopbackServer.matcher(silence, name); }

    @Test
    void theHeldContainerIsSilencedWhileHeldAndTheSilenceIsExpiredOnceItIsReady() throws Exception {
        push(alertmanager.url(), "sleep 4; echo swept");
        Future<WindowResult> window = agent.daemon().runWindow(module, "sweep");
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            assertThat(docker.isRunning(docker.idByName(module + "-app"))).as("held: stopped").isFalse();
            assertThat(silences()).singleElement().satisfies(s -> {
                assertThat(s.path("status").path("state").asText()).isEqualTo("active");
                assertThat(matcher(s, "job")).isEqualTo("registry");
                assertThat(matcher(s, "mesh_host")).isEqualTo(HOST);
            });
        });
        WindowResult w = window.get(1, TimeUnit.MINUTES);
        assertThat(w.outcome()).as("%s", w).isEqualTo(WindowOutcome.SUCCEEDED);
        assertThat(docker.isRunning(docker.idByName(module + "-app"))).isTrue();
        assertThat(silences()).singleElement().satisfies(s -> assertThat(s.path("status").path("state").asText())
                .as("expired once the container is ready again").isEqualTo("expired"));
    }

    @Test
    void anAlertmanagerThatDoesNotAnswerStopsNothing() throws Exception {
        push("http://127.0.0.1:1", "echo swept");
        WindowResult w = agent.daemon().runWindow(module, "sweep").get(1, TimeUnit.MINUTES);
        assertThat(w.outcome()).as("%s", w).isEqualTo(WindowOutcome.SUCCEEDED);
        assertThat(docker.isRunning(docker.idByName(module + "-app"))).isTrue();
        assertThat(silences()).isEmpty();
    }
}
