package io.mesh.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.CoordinatorExtension;
import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The whole path on one machine: a push over HTTP to the coordinator lands on real containers through a real agent
 * daemon; a push during a window reads {@code deferred} naming the window in {@code GET /v1/pushes/{push}}, the held
 * container shows in {@code GET /v1/held}, and the newest push reads {@code applied} once the window ends, the one it
 * replaced before it ran {@code superseded}, and the first one, which ran, still {@code applied}.
 */
@Tag("slow") // a coordinator and an agent daemon, end to end: the full run, not --fast
class WholePathTest {
    private static final String HOST = "host-a";
    @RegisterExtension
    @Order(1)
    final CoordinatorFixture fx = new CoordinatorFixture();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(fx.zk, HOST);
    private final DockerEngine docker = TestDocker.engine();
    private final String module = TestDocker.uniqueModule("e2e");

    @AfterEach
    void tearDown() {
        agent.close(); // before its containers go, so that it does not make them again
        TestDocker.clean(module);
    }

    private String manifest(String mode) {
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  registry:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    env: {MODE: \"" + mode + "\"}\n    stop-timeout: 2s\n"
                + "schedules:\n  garbage-collect:\n    cron: \"30 3 * * *\"\n    while-stopped: [registry]\n"
                + "    step: {image: " + BUSYBOX + ", command: [sleep, \"10\"]}\n    timeout: 1m\n";
    }

    private Answer push(String manifest, String revision) throws Exception {
        return fx.api.post("/v1/pushes", manifest.getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", revision));
    }

    private JsonNode get(String path) throws Exception {
        return fx.api.get(path).json();
    }

    /** @return the state of (host, module) in a push's status */
    private String state(JsonNode status) {
        for (JsonNode t : status.path("targets")) {
            if (t.path("host").asText().equals(HOST) && t.path("module").asText().equals(module)) return t.path("state").asText();
        }
        return "absent";
    }

    private JsonNode target(JsonNode status) {
        for (JsonNode t : status.path("targets")) {
            if (t.path("host").asText().equals(HOST) && t.path("module").asText().equals(module)) return t;
        }
        throw new AssertionError("no target for " + HOST + "/" + module + " in " + status);
    }

    @Test
    void aPushLandsAndAPushDuringAWindowIsDeferredThenApplied() throws Exception {
        Answer first = push(manifest("one"), "r1");
        assertThat(first.status()).isEqualTo(202);
        String push1 = first.json().path("push").asText();
        await().atMost(Duration.ofSeconds(60)).until(() -> state(get("/v1/pushes/" + push1)).equals("applied"));
        String id = docker.inspect(module + "-registry").getId();
        assertThat(docker.inspect(module + "-registry").getState().getRunning()).isTrue();

        Future<WindowResult> window = agent.daemon().runWindow(module, "garbage-collect");
        await().atMost(Duration.ofSeconds(30)).until(() -> get("/v1/held").toString().contains(module + "-registry"));

        String push2 = push(manifest("two"), "r2").json().path("push").asText();
        await().atMost(Duration.ofSeconds(30)).until(() -> state(get("/v1/pushes/" + push2)).equals("deferred"));
        JsonNode deferred = target(get("/v1/pushes/" + push2));
        assertThat(deferred.toString()).contains("garbage-collect");
        assertThat(docker.inspect(module + "-registry").getId()).isEqualTo(id);
        assertThat(docker.inspect(module + "-registry").getState().getRunning()).isFalse();

        // A third push while the window still holds: the second never runs here (SPEC.md: superseded before it ran).
        String push3 = push(manifest("three"), "r3").json().path("push").asText();
        await().atMost(Duration.ofSeconds(30)).until(() -> state(get("/v1/pushes/" + push3)).equals("deferred"));
        assertThat(window.isDone()).as("the window is still open: push3 must meet it").isFalse();

        assertThat(window.get(2, TimeUnit.MINUTES).outcome()).isEqualTo(WindowOutcome.SUCCEEDED);
        await().atMost(Duration.ofSeconds(60)).until(() -> state(get("/v1/pushes/" + push3)).equals("applied"));
        assertThat(docker.inspect(module + "-registry").getConfig().getEnv()).contains("MODE=three");
        assertThat(docker.inspect(module + "-registry").getState().getRunning()).isTrue();
        assertThat(get("/v1/held").toString()).doesNotContain(module + "-registry");

        JsonNode second = get("/v1/pushes/" + push2);
        assertThat(state(second)).isEqualTo("superseded");
        assertThat(target(second).path("supersededBy").asText()).isEqualTo(push3);
        assertThat(second.path("state").asText()).isEqualTo("superseded");
        // The first ran here before the others replaced it: it stays applied (decision 24).
        JsonNode firstNow = get("/v1/pushes/" + push1);
        assertThat(state(firstNow)).isEqualTo("applied");
        assertThat(firstNow.path("state").asText()).isEqualTo("applied");
        assertThat(target(firstNow).has("supersededBy")).isFalse();
    }

    @Test
    void aMalformedPushIsRefusedNamingTheFieldAndChangesNothing() throws Exception {
        push(manifest("one"), "r1");
        await().atMost(Duration.ofSeconds(60)).until(() -> docker.inspect(module + "-registry") != null
                && Boolean.TRUE.equals(docker.inspect(module + "-registry").getState().getRunning()));
        String id = docker.inspect(module + "-registry").getId();
        byte[] before = fx.zk.client().getData().forPath(fx.zk.paths().desired(module));

        Answer refused = push(manifest("two").replace("while-stopped: [registry]", "while-stopped: [regsitry]"), "r2");
        assertThat(refused.status()).isEqualTo(400);
        JsonNode err = refused.json().path("errors").get(0);
        assertThat(err.path("document").asInt()).isEqualTo(1);
        assertThat(err.path("field").asText()).isEqualTo("schedules.garbage-collect.while-stopped[0]");
        assertThat(err.path("message").asText()).contains("regsitry").contains("registry");

        assertThat(fx.zk.client().getData().forPath(fx.zk.paths().desired(module))).isEqualTo(before);
        Thread.sleep(2_000); // deliberate: a quiet period in which a wrongly written push would land
        assertThat(docker.inspect(module + "-registry").getId()).isEqualTo(id);
        assertThat(docker.inspect(module + "-registry").getConfig().getEnv()).contains("MODE=one");
    }
}
