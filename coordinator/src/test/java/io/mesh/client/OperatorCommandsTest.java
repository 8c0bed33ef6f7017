package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.OpsFixture;
import io.mesh.testing.TestZk;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.Json;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.mesh.coordinator.OpsFixture.HOST;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Every operator command's output and exit code against a running coordinator and a running agent (real Docker
 * engine, real ZooKeeper): push --wait, status, held, windows, locks, window run, and the metrics of both. The
 * methods run in order on one fleet: a push, a window asked for with {@code mesh window run} and held open while the
 * other commands look at it, a push deferred by it and landing after it, then the failure paths.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("slow") // every operator command against a coordinator and an agent: the full run, not --fast
class OperatorCommandsTest {
    @RegisterExtension
    static final OpsFixture fx = new OpsFixture();
    static final HttpClient http = HttpClient.newHttpClient();

    static ClientRun mesh(String... args) { return ClientRun.of(fx.api.uri().toString(), args); }

    static CompletableFuture<ClientRun> meshAsync(String... args) { return CompletableFuture.supplyAsync(() -> mesh(args)); }

    Path manifest(String rev, String hosts) throws Exception {
        Path f = Files.createTempFile("mesh-ops", ".yaml");
        Files.writeString(f, fx.manifest(rev, hosts));
        return f;
    }

    static String get(URI uri) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    @Test
    @Order(1)
    void pushWaitFollowsEveryHostAndExitsZeroWhenApplied() throws Exception {
        ClientRun r = mesh("push", manifest("r1", "[" + HOST + "]").toString(), "--revision", "r1", "--wait", "--timeout", "60s", "--interval", "200ms");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).contains("revision r1", HOST + "  " + fx.module + "  applied r1", "applied on every host");
    }

    @Test
    @Order(2)
    void statusIsATableOfHostsAndModulesAndJsonForScripts() throws Exception {
        ClientRun r = mesh("status");
        assertThat(r.code()).as(r.toString()).isZero();
        String row = r.out().lines().filter(l -> l.startsWith(HOST) && l.contains(fx.module)).findFirst().orElseThrow();
        assertThat(r.out().lines().findFirst().orElseThrow()).contains("HOST", "AGENT", "MODULE", "REVISION", "OUTCOME", "WINDOW", "HELD", "AGE");
        assertThat(row.split("\\s+")).startsWith(HOST, "online", io.mesh.wire.MeshVersion.CURRENT, fx.module, "r1", "applied", "-", "-");
        assertThat(row).matches(".*\\s\\d+s(\\s.*)?$");
        assertThat(r.out()).contains("no window is open", "no push pending");

        ClientRun json = mesh("status", "--json");
        assertThat(json.code()).isZero();
        JsonNode cell = Json.MAPPER.readTree(json.out()).path("hosts").get(0).path("modules").get(0);
        assertThat(cell.path("module").asText()).isEqualTo(fx.module);
        assertThat(cell.path("outcome").asText()).isEqualTo("applied");
        assertThat(cell.path("revision").asText()).isEqualTo("r1");
        assertThat(Instant.parse(cell.path("finishedAt").asText())).isBeforeOrEqualTo(Instant.parse(Json.MAPPER.readTree(json.out()).path("at").asText()));
    }

    @Test
    @Order(3)
    void aWindowAskedForIsSeenByEveryCommandAndDefersAPushThatLandsAfterIt() throws Exception {
        String container = fx.module + "-app";
        CompletableFuture<ClientRun> window = meshAsync("window", "run", fx.module + "/sweep", "--host", HOST, "--interval", "200ms", "--timeout", "90s");
        fx.awaitHeld();

        ClientRun held = mesh("held");
        assertThat(held.code()).as(held.toString()).isZero();
        assertThat(held.out()).contains("CONTAINER", container, "sweep", "mesh-agent run (test)");

        ClientRun windows = mesh("windows");
        assertThat(windows.code()).as(windows.toString()).isZero();
        assertThat(windows.out()).contains("ENDS BY", "WAITING PUSH", fx.module, "sweep", container);

        // A push meeting the window: live progress shows it deferred naming the window, then applied after it.
        CompletableFuture<ClientRun> push = meshAsync("push", manifest("r2", "[" + HOST + "]").toString(), "--revision", "r2", "--wait",
                "--timeout", "90s", "--interval", "200ms");
        fx.awaitReport(ApplyOutcome.DEFERRED, "r2");

        ClientRun locks = mesh("locks");
        assertThat(locks.code()).as(locks.toString()).isZero();
        String holds = locks.out().lines().filter(l -> l.contains(" holds ")).findFirst().orElseThrow();
        assertThat(holds).contains(fx.module, HOST, "window:sweep", "mesh-agent run (test)", String.valueOf(ProcessHandle.current().pid()));
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(mesh("locks").out()).containsPattern(fx.module + "\\s+" + HOST + "\\s+waits 1\\s+apply"));

        ClientRun windowsAgain = mesh("windows");
        assertThat(windowsAgain.out()).containsPattern("push-\\d{10} \\(r2\\)");
        ClientRun status = mesh("status");
        String row = status.out().lines().filter(l -> l.startsWith(HOST) && l.contains(fx.module)).findFirst().orElseThrow();
        assertThat(row).contains("r2", "deferred", "sweep w-", container);
        assertThat(status.out()).contains("1 open window", "deferred: 0 pending, 1 deferred");

        // A second request for the same window queues where operators see it: for the module lock, behind the first
        // and the deferred apply (it used to wait silently in the agent's window thread).
        CompletableFuture<ClientRun> second = meshAsync("window", "run", fx.module + "/sweep", "--host", HOST, "--interval", "200ms", "--timeout", "90s");
        await().atMost(Duration.ofSeconds(15)).untilAsserted(() ->
                assertThat(mesh("locks").out()).containsPattern(fx.module + "\\s+" + HOST + "\\s+waits \\d\\s+window:sweep"));

        fx.release();
        ClientRun w = window.get(90, TimeUnit.SECONDS);
        assertThat(w.code()).as(w.toString()).isEqualTo(ExitCodes.OK);
        assertThat(w.out()).containsPattern("window-\\d{10}  asked host " + HOST + " to run " + fx.module + "/sweep");
        assertThat(w.out()).contains("running (agent pid", "outcome: succeeded", "held " + container, "step exit 0", "sweeping", "swept");
        // The client deleted its request once read (the second one's is still there).
        assertThat(fx.zk.client().getChildren().forPath(fx.zk.paths().requests(HOST))).hasSize(1);

        // The second window runs once the first gave the lock back (before or after the deferred apply: the apply asks
        // for the lock in slices, so the lock's queue does not keep its place).
        fx.awaitHeld();
        fx.release();
        ClientRun w2 = second.get(90, TimeUnit.SECONDS);
        assertThat(w2.code()).as(w2.toString()).isEqualTo(ExitCodes.OK);
        assertThat(w2.out()).contains("waits for the module lock of " + fx.module + " on " + HOST + ", behind window:sweep", "outcome: succeeded");
        assertThat(fx.zk.client().getChildren().forPath(fx.zk.paths().requests(HOST))).isEmpty();

        ClientRun p = push.get(90, TimeUnit.SECONDS);
        assertThat(p.code()).as(p.toString()).isEqualTo(ExitCodes.OK);
        assertThat(p.out()).contains(HOST + "  " + fx.module + "  pending", "deferred (window sweep w-", HOST + "  " + fx.module + "  applied r2");
        assertThat(p.out().indexOf("deferred (window sweep")).isLessThan(p.out().indexOf("applied r2"));


        assertThat(mesh("held").out()).contains("no container is held");
        assertThat(mesh("windows").out()).contains("no window is open");
        await().atMost(Duration.ofSeconds(10)).until(() -> mesh("locks").out().contains("no module lock is held"));
    }

    @Test
    @Order(4)
    void metricsOfTheAgentAndTheCoordinatorCountWhatHappened() throws Exception {
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            String agent = get(fx.agentMetrics().resolve("/metrics"));
            assertThat(agent).contains("mesh_applies_total{module=\"" + fx.module + "\",outcome=\"applied\"} ",
                    "mesh_applies_total{module=\"" + fx.module + "\",outcome=\"deferred\"} ",
                    // the window asked for, and the second request for it that queued behind it
                    "mesh_windows_total{module=\"" + fx.module + "\",outcome=\"succeeded\"} 2",
                    "mesh_window_duration_seconds_count{outcome=\"succeeded\"} 2",
                    "mesh_apply_duration_seconds_bucket{outcome=\"applied\",le=\"+Inf\"} ",
                    "mesh_lock_wait_seconds_count{purpose=\"apply\"} ", "mesh_lock_wait_seconds_count{purpose=\"window\"} ",
                    "mesh_held_containers 0", "mesh_open_windows 0", "mesh_zookeeper_connected 1", "# TYPE mesh_apply_duration_seconds histogram");
        });
        // The deferred apply waited for the window: its lock wait is seconds, not milliseconds.
        String agent = get(fx.agentMetrics().resolve("/metrics"));
        double applyWaitSum = Double.parseDouble(agent.lines().filter(l -> l.startsWith("mesh_lock_wait_seconds_sum{purpose=\"apply\"}"))
                .findFirst().orElseThrow().split(" ")[1]);
        assertThat(applyWaitSum).isGreaterThan(1.0);

        String coordinator = get(fx.api.uri().resolve("/metrics"));
        assertThat(coordinator).contains("mesh_fleet_modules{outcome=\"applied\"} 1", "mesh_open_windows 0", "mesh_agents_online 1",
                "mesh_held_containers 0", "mesh_zookeeper_connected 1",
                "mesh_last_window_duration_seconds{host=\"" + HOST + "\",module=\"" + fx.module + "\",outcome=\"succeeded\"} ",
                "mesh_report_age_seconds{host=\"" + HOST + "\",module=\"" + fx.module + "\"} ");
    }

    @Test
    @Order(5)
    void windowRunExitsOneWhenTheStepFails() {
        ClientRun r = mesh("window", "run", fx.module + "/fails", "--host", HOST, "--interval", "200ms", "--timeout", "60s");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.FAILED);
        assertThat(r.out()).contains("outcome: step-failed", "step exit 3", "error: step exited 3", "broken");
    }

    @Test
    @Order(6)
    void windowRunExitsTwoForWhatCannotRunAndThreeOnTimeout() throws Exception {
        ClientRun noSchedule = mesh("window", "run", fx.module + "/nope", "--host", HOST);
        assertThat(noSchedule.code()).as(noSchedule.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(noSchedule.err()).contains("400", "has no schedule 'nope'", "sweep");
        ClientRun badTarget = mesh("window", "run", "justamodule", "--host", HOST);
        assertThat(badTarget.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(badTarget.err()).contains("MODULE/SCHEDULE");
        ClientRun otherHost = mesh("window", "run", fx.module + "/sweep", "--host", "host-b");
        assertThat(otherHost.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(otherHost.err()).contains("does not run on host host-b");

        // A host named by the module but without a running agent: refused (409), nothing is requested.
        assertThat(mesh("push", manifest("r2", "[" + HOST + ", host-z]").toString(), "--revision", "r2").code()).isZero();
        ClientRun noAgent = mesh("window", "run", fx.module + "/sweep", "--host", "host-z");
        assertThat(noAgent.code()).as(noAgent.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(noAgent.err()).contains("409", "host host-z has no running agent");

        ClientRun timedOut = mesh("window", "run", fx.module + "/sweep", "--host", HOST, "--timeout", "1s", "--interval", "200ms");
        assertThat(timedOut.code()).as(timedOut.toString()).isEqualTo(ExitCodes.TIMEOUT);
        assertThat(timedOut.err()).contains("timed out after 1s", "zkcli get /mesh/requests/" + HOST + "/window-");
        // The request stays for the agent, which runs it: let it finish.
        fx.awaitHeld();
        fx.release();
        fx.awaitNoWindow();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            List<String> left = fx.zk.client().getChildren().forPath(fx.zk.paths().requests(HOST));
            return left.size() == 1 && new String(fx.zk.client().getData().forPath(fx.zk.paths().request(HOST, left.get(0)))).contains("\"state\":\"done\"");
        });
    }

    @Test
    @Order(7)
    void everyCommandExitsFourWhenTheCoordinatorIsUnreachable() throws Exception {
        String nowhere = "--coordinator=http://127.0.0.1:" + TestZk.freePort();
        for (String[] args : List.of(new String[]{"status"}, new String[]{"held"}, new String[]{"windows"}, new String[]{"locks"},
                new String[]{"window", "run", fx.module + "/sweep", "--host", HOST})) {
            List<String> all = new ArrayList<>(List.of(args));
            all.add(nowhere);
            ClientRun r = mesh(all.toArray(String[]::new));
            assertThat(r.code()).as(String.join(" ", args) + ": " + r).isEqualTo(ExitCodes.UNREACHABLE);
            assertThat(r.err()).contains("cannot reach the coordinator");
        }
    }

    @Test
    @Order(8)
    void everyCommandHasHelpWithItsExitCodes() {
        for (String[] args : List.of(new String[]{"--help"}, new String[]{"push", "--help"}, new String[]{"status", "--help"},
                new String[]{"held", "--help"}, new String[]{"windows", "--help"}, new String[]{"locks", "--help"},
                new String[]{"window", "--help"}, new String[]{"window", "run", "--help"})) {
            ClientRun r = mesh(args);
            assertThat(r.code()).as(String.join(" ", args)).isZero();
            assertThat(r.out()).contains("Usage:");
            if (!args[0].equals("window") || args.length > 2) assertThat(r.out()).as(String.join(" ", args)).contains("Exit codes:");
        }
    }
}
