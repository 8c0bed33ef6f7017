package io.mesh.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.model.Event;
import io.mesh.coordinator.CoordinatorExtension;
import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Freezes on one machine (SPEC.md, "Freezes"; docs/decisions/0014-freezes.md), through the coordinator's HTTP API, a
 * real agent daemon, ZooKeeper and the local Docker engine: a push to a frozen module is recorded (desired, history)
 * but Docker sees nothing of the module (its events, its container's id) while the agent reconciles every second; the
 * push reads {@code deferred} with the freeze; the newest revision lands at a thaw with no new push; {@code --all}
 * defers every module; a window still runs while frozen. The end of a freeze by itself: {@link FreezeExpiryTest}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Tag("slow") // a coordinator and an agent daemon, end to end: the full run, not --fast
class FreezeTest {
    private static final String HOST = "host-frz";
    private static final Duration LANDS = FreezeSteps.LANDS;
    @RegisterExtension
    @Order(1)
    final CoordinatorFixture fx = new CoordinatorFixture();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(fx.zk, HOST).reconcileEvery(Duration.ofSeconds(1));
    private final DockerEngine docker = TestDocker.engine();
    private final String module = TestDocker.uniqueModule("frz");
    private final String other = TestDocker.uniqueModule("frzb");

    @AfterEach
    void tearDown() {
        agent.close(); // before its containers go, so that it does not make them again
        TestDocker.clean(module);
        TestDocker.clean(other);
    }

    private final FreezeSteps steps = new FreezeSteps(fx.zk, fx.api, HOST);

    private String manifest(String name, String mode) { return steps.manifest(name, mode); }

    private String push(String yaml, String revision) throws Exception { return steps.push(yaml, revision); }

    private Answer freeze(String body) throws Exception { return steps.freeze(body); }

    private JsonNode target(String push, String name) throws Exception { return steps.target(push, name); }

    private String state(String push, String name) throws Exception { return steps.state(push, name); }

    private ApplyReport report(String name) throws Exception { return steps.report(name); }

    private String env(String name) { return steps.env(name); }

    private String landed(String name) throws Exception { return steps.landed(name); }

    /**
     * Pushes r2 to a frozen module and checks it is recorded and deferred with the freeze while Docker sees nothing of
     * the module for a few reconciles.
     *
     * @return the push
     */
    private String deferredWhileFrozen(String name, String id, String reason, DockerEvents events) throws Exception {
        Instant from = Instant.now();
        String p2 = push(manifest(name, "two"), "r2");
        DesiredRecord desired = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().desired(name)), DesiredRecord.class);
        assertThat(desired.push()).as("the push is recorded").isEqualTo(p2);
        assertThat(fx.api.get("/v1/modules/" + name + "/history").body()).contains(p2);
        await().atMost(LANDS).until(() -> state(p2, name).equals("deferred"));
        JsonNode t = target(p2, name);
        assertThat(t.path("freeze").path("reason").asText()).as(t.toString()).isEqualTo(reason);
        ApplyReport r = report(name);
        assertThat(r.outcome()).isEqualTo(ApplyOutcome.DEFERRED);
        assertThat(r.push()).isEqualTo(p2);
        assertThat(r.freeze()).isNotNull();
        assertThat(r.freeze().reason()).isEqualTo(reason);
        assertThat(r.lastApplied().revision()).as("r1 still what runs").isEqualTo("r1");
        Thread.sleep(3_000); // deliberate: three reconciles (every 1 s) in which a frozen module's apply must touch nothing
        events.settle();
        List<Event> touched = events.since(from);
        assertThat(touched).as(DockerEvents.describe(touched)).isEmpty();
        assertThat(docker.inspect(name + "-web").getId()).isEqualTo(id);
        assertThat(env(name)).contains("MODE=one");
        assertThat(state(p2, name)).isEqualTo("deferred");
        return p2;
    }

    @Test
    void aPushToAFrozenModuleTouchesNothingAndLandsAtTheThawWithNoNewPush() throws Exception {
        String id = landed(module);
        try (DockerEvents events = DockerEvents.record(module)) {
            freeze("{\"module\":\"" + module + "\",\"for\":\"1h\",\"reason\":\"release weekend\"}");
            String p2 = deferredWhileFrozen(module, id, "release weekend", events);
            int pushes = fx.api.get("/v1/pushes").json().path("pushes").size();

            assertThat(fx.api.method("DELETE", "/v1/freezes/" + module).status()).isEqualTo(200);
            await().atMost(LANDS).until(() -> state(p2, module).equals("applied"));
            assertThat(env(module)).contains("MODE=two");
            assertThat(report(module).freeze()).isNull();
            assertThat(fx.api.get("/v1/pushes").json().path("pushes").size()).as("no new push").isEqualTo(pushes);
        }
    }

    @Test
    void aFreezeOfAllDefersEveryModuleUntilItsThaw() throws Exception {
        String idA = landed(module);
        String idB = landed(other);
        try (DockerEvents events = DockerEvents.record(m -> m.equals(module) || m.equals(other))) {
            freeze("{\"all\":true,\"for\":\"1h\",\"reason\":\"fleet freeze\"}");
            Instant from = Instant.now();
            String p2 = push(manifest(module, "two") + "---\n" + manifest(other, "two"), "r2");
            await().atMost(LANDS).until(() -> state(p2, module).equals("deferred") && state(p2, other).equals("deferred"));
            assertThat(report(module).freeze().reason()).isEqualTo("fleet freeze");
            assertThat(report(other).freeze().reason()).isEqualTo("fleet freeze");
            Thread.sleep(2_000); // deliberate: reconciles in which nothing may be touched
            events.settle();
            assertThat(events.since(from)).as(DockerEvents.describe(events.since(from))).isEmpty();
            assertThat(docker.inspect(module + "-web").getId()).isEqualTo(idA);
            assertThat(docker.inspect(other + "-web").getId()).isEqualTo(idB);

            assertThat(fx.api.method("DELETE", "/v1/freezes/_all").status()).isEqualTo(200);
            await().atMost(LANDS).until(() -> state(p2, module).equals("applied") && state(p2, other).equals("applied"));
            assertThat(env(module)).contains("MODE=two");
            assertThat(env(other)).contains("MODE=two");
        }
    }

    @Test
    void aWindowStillRunsWhileFrozen() throws Exception {
        String id = landed(module);
        freeze("{\"module\":\"" + module + "\",\"for\":\"1h\",\"reason\":\"maintenance only\"}");
        try (DockerEvents events = DockerEvents.record(module)) {
            Instant from = Instant.now();
            Future<WindowResult> window = agent.daemon().runWindow(module, "sweep");
            assertThat(window.get(2, TimeUnit.MINUTES).outcome()).isEqualTo(WindowOutcome.SUCCEEDED);
            assertThat(docker.inspect(module + "-web").getId()).as("the same container, started again").isEqualTo(id);
            assertThat(docker.inspect(module + "-web").getState().getRunning()).isTrue();
            events.settle();
            List<String> actions = events.since(from).stream()
                    .filter(e -> id.equals(e.getId())).map(TestDocker::action).toList();
            assertThat(actions).as(DockerEvents.describe(events.since(from))).contains("stop", "start");
        }
    }
}
