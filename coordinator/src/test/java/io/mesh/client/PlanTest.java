package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.model.Event;
import io.mesh.coordinator.CoordinatorExtension;
import io.mesh.coordinator.OpsFixture;
import io.mesh.coordinator.PlanStore;
import io.mesh.testing.TestDocker;
import io.mesh.wire.Json;
import io.mesh.wire.PlanAnswer;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.mesh.coordinator.OpsFixture.HOST;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mesh push FILE --plan} against a running coordinator and a running agent daemon (real ZooKeeper, the real
 * Docker engine): what the agent says an apply would do, that Docker saw nothing of it (its own event stream, not
 * mesh's word) and that ZooKeeper's desired and report nodes were not written (their versions). In order, on one
 * fleet: r1 applied, then plans of other manifests against it.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("slow") // an agent daemon answering plans on the real engine: the full run, not --fast
class PlanTest {
    @RegisterExtension
    static final OpsFixture fx = new OpsFixture();

    static ClientRun mesh(String... args) { return ClientRun.of(fx.api.uri().toString(), args); }

    /** The fixture's module (container app, schedules sweep and fails) with more containers, each {@code name: image}. */
    static String manifest(String rev, String hosts, String... extra) {
        StringBuilder more = new StringBuilder();
        for (String e : extra) more.append(e);
        return fx.manifest(rev, hosts).replace("schedules:\n", more + "schedules:\n");
    }

    static String container(String name, String image, String more) {
        return "  " + name + ":\n    image: " + image + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: host\n    stop-timeout: 2s\n" + more;
    }

    static Path file(String yaml) throws Exception {
        Path f = Files.createTempFile("mesh-plan", ".yaml");
        Files.writeString(f, yaml);
        return f;
    }

    static Stat stat(String path) throws Exception {
        return fx.zk.client().checkExists().forPath(path);
    }

    static JsonNode view(String out) throws Exception {
        String plan = out.lines().findFirst().orElseThrow().split("\\s+")[0];
        CoordinatorExtension.Answer a = fx.api.get("/v1/plans/" + plan);
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        return a.json();
    }

    static JsonNode containerOf(JsonNode view, String host, String container) {
        for (JsonNode h : view.path("hosts")) {
            if (!h.path("host").asText().equals(host)) continue;
            for (JsonNode m : h.path("modules")) for (JsonNode c : m.path("containers")) if (c.path("container").asText().equals(container)) return c;
        }
        throw new AssertionError("no " + container + " on " + host + " in " + view);
    }

    @Test
    @Order(1)
    void aPlanSaysWhatTheApplyWouldDoAndDockerAndZooKeeperSeeNothing() throws Exception {
        String old = container("old", TestDocker.BUSYBOX, "");
        ClientRun r1 = mesh("push", file(manifest("r1", "[" + HOST + "]", old)).toString(), "--revision", "r1", "--wait", "--timeout", "60s", "--interval", "200ms");
        assertThat(r1.code()).as(r1.toString()).isZero();
        String desired = fx.zk.paths().desired(fx.module), report = fx.zk.paths().report(HOST, fx.module);
        Stat desiredBefore = stat(desired), reportBefore = stat(report);
        int pushesBefore = fx.zk.client().getChildren().forPath(fx.zk.paths().pushes()).size();
        Thread.sleep(1500); // the events of r1's apply are behind Docker's one-second resolution

        Instant from = Instant.now();
        // r2: app changes (env), new is added, old is dropped
        ClientRun plan = mesh("push", file(manifest("r2", "[" + HOST + "]", container("new", TestDocker.BUSYBOX, ""))).toString(),
                "--revision", "r2", "--plan", "--interval", "200ms");
        Instant to = Instant.now();

        assertThat(plan.code()).as(plan.toString()).isZero();
        assertThat(plan.out()).contains("(a plan: nothing is pushed)", "HOST", "OUTCOME", "ACTION",
                "nothing would fail or be refused");
        assertThat(plan.out().lines().filter(l -> l.startsWith(HOST)).toList())
                .anySatisfy(l -> assertThat(l).contains(fx.module + "-app", "recreated", "env: changed REV"))
                .anySatisfy(l -> assertThat(l).contains(fx.module + "-new", "created"))
                .anySatisfy(l -> assertThat(l).contains(fx.module + "-old", "removed", "no longer in the spec"));
        JsonNode v = view(plan.out());
        assertThat(v.path("done").asBoolean()).isTrue();
        assertThat(v.path("clean").asBoolean()).isTrue();
        assertThat(containerOf(v, HOST, fx.module + "-app").path("action").asText()).isEqualTo("recreated");
        assertThat(containerOf(v, HOST, fx.module + "-app").path("reasons").toString()).contains("env: changed REV");
        assertThat(containerOf(v, HOST, fx.module + "-new").path("action").asText()).isEqualTo("created");
        assertThat(containerOf(v, HOST, fx.module + "-old").path("action").asText()).isEqualTo("removed");
        JsonNode module = v.path("hosts").get(0).path("modules").get(0);
        assertThat(module.path("outcome").asText()).isEqualTo("would-apply");
        assertThat(module.path("revision").asText()).isEqualTo("r1");

        // Docker's own events over the plan: nothing for the module (no create, stop, start, remove, rename, kill).
        List<Event> events = TestDocker.events(fx.module, from, to);
        assertThat(events).as("Docker events of %s during the plan: %s", fx.module,
                events.stream().map(e -> TestDocker.action(e) + " " + TestDocker.name(e)).toList()).isEmpty();
        // ZooKeeper: desired and report untouched, no push recorded.
        assertThat(stat(desired).getVersion()).isEqualTo(desiredBefore.getVersion());
        assertThat(stat(desired).getMzxid()).isEqualTo(desiredBefore.getMzxid());
        assertThat(stat(report).getVersion()).isEqualTo(reportBefore.getVersion());
        assertThat(stat(report).getMzxid()).isEqualTo(reportBefore.getMzxid());
        assertThat(fx.zk.client().getChildren().forPath(fx.zk.paths().pushes())).hasSize(pushesBefore);
        // The containers are r1's still.
        assertThat(TestDocker.engine().idByName(fx.module + "-old")).isNotNull();
        assertThat(TestDocker.engine().idByName(fx.module + "-new")).isNull();
    }

    @Test
    @Order(2)
    void aRefusedContainerAndAMissingImageFailThePlan() throws Exception {
        String priv = container("priv", TestDocker.BUSYBOX, "    privileged: true\n");
        String ghost = container("ghost", "mesh-demo/no-such-image:0", "");
        ClientRun plan = mesh("push", file(manifest("r3", "[" + HOST + "]", priv, ghost)).toString(), "--plan", "--interval", "200ms");

        assertThat(plan.code()).as(plan.toString()).isEqualTo(ExitCodes.FAILED);
        assertThat(plan.out()).contains("would-fail", "refused by this agent's policy", "privileged",
                "image mesh-demo/no-such-image:0 is not on this host", "would fail or be refused on " + HOST + "/" + fx.module);
        JsonNode v = view(plan.out());
        assertThat(v.path("clean").asBoolean()).isFalse();
        assertThat(containerOf(v, HOST, fx.module + "-priv").path("action").asText()).isEqualTo("failed");
        assertThat(containerOf(v, HOST, fx.module + "-ghost").path("problems").toString()).contains("is not on this host");
        // never pulled
        assertThat(TestDocker.engine().imagePresent("mesh-demo/no-such-image:0")).isFalse();
    }

    @Test
    @Order(3)
    void aPlanMeetingAnOpenWindowSaysItWouldBeDeferred() throws Exception {
        var window = fx.daemon().runWindow(fx.module, "sweep");
        try {
            fx.awaitHeld();
            ClientRun plan = mesh("push", file(manifest("r2", "[" + HOST + "]", container("old", TestDocker.BUSYBOX, ""))).toString(),
                    "--plan", "--interval", "200ms");
            assertThat(plan.code()).as(plan.toString()).isZero();
            assertThat(plan.out()).contains("would-defer", "would be deferred by window sweep");
            JsonNode v = view(plan.out());
            JsonNode module = v.path("hosts").get(0).path("modules").get(0);
            assertThat(module.path("outcome").asText()).isEqualTo("would-defer");
            assertThat(module.path("window").path("schedule").asText()).isEqualTo("sweep");
            assertThat(containerOf(v, HOST, fx.module + "-app").path("action").asText()).isEqualTo("held");
        } finally {
            fx.release();
            window.get(60, TimeUnit.SECONDS);
            fx.awaitNoWindow();
        }
    }

    @Test
    @Order(4)
    void aHostWithoutAnAgentShowsNoAgent() throws Exception {
        ClientRun plan = mesh("push", file(manifest("r1", "[" + HOST + ", host-zz]", container("old", TestDocker.BUSYBOX, ""))).toString(),
                "--plan", "--interval", "200ms");
        assertThat(plan.code()).as(plan.toString()).isEqualTo(ExitCodes.FAILED);
        assertThat(plan.out()).contains("host-zz", "no-agent", "no agent on host-zz");
        JsonNode v = view(plan.out());
        List<String> states = new ArrayList<>();
        v.path("hosts").forEach(h -> states.add(h.path("host").asText() + "=" + h.path("state").asText()));
        assertThat(states).containsExactly(HOST + "=answered", "host-zz=no-agent");
        // r1 as applied: nothing to do, so the answered host is clean
        assertThat(Json.MAPPER.treeToValue(v.path("hosts").get(0), PlanAnswer.class).clean()).isTrue();
    }

    @Test
    @Order(5)
    void aBadManifestAnswersAPushsErrorsAndWritesNothing() throws Exception {
        String bad = manifest("r9", "[" + HOST + "]").replace("restart: unless-stopped", "restart: sometimes") + "surprise: 1\n";
        int plansBefore = fx.zk.client().getChildren().forPath(fx.zk.paths().plans()).size();
        Stat plansStat = stat(fx.zk.paths().plans());
        CoordinatorExtension.Answer asPlan = fx.api.post("/v1/plans", bad.getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "bad rev"));
        CoordinatorExtension.Answer asPush = fx.api.post("/v1/pushes", bad.getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "bad rev"));
        assertThat(asPlan.status()).isEqualTo(400);
        assertThat(asPush.status()).isEqualTo(400);
        assertThat(asPlan.json().path("errors")).isEqualTo(asPush.json().path("errors"));
        assertThat(asPlan.json().path("errors").size()).isGreaterThanOrEqualTo(3);
        assertThat(fx.zk.client().getChildren().forPath(fx.zk.paths().plans())).hasSize(plansBefore);
        assertThat(stat(fx.zk.paths().plans()).getCversion()).isEqualTo(plansStat.getCversion());

        ClientRun r = mesh("push", file(bad).toString(), "--plan");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).contains("refused the manifest", "document 1");
        assertThat(stat(fx.zk.paths().plans()).getCversion()).isEqualTo(plansStat.getCversion());
    }

    @Test
    @Order(6)
    void plansAreKeptBounded() throws Exception {
        for (int i = 0; i < PlanStore.KEEP + 3; i++) {
            CoordinatorExtension.Answer a = fx.api.post("/v1/plans", manifest("r1", "[host-zz]").getBytes(StandardCharsets.UTF_8), Map.of());
            assertThat(a.status()).as(a.body()).isEqualTo(202);
        }
        assertThat(fx.zk.client().getChildren().forPath(fx.zk.paths().plans())).hasSize(PlanStore.KEEP);
    }
}
