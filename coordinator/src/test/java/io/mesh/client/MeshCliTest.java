package io.mesh.client;

import com.sun.net.httpserver.HttpServer;
import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.coordinator.HttpApi;
import io.mesh.coordinator.Manifests;
import io.mesh.coordinator.StatusApiTest;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.PushRecord;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The operator's client, in-process, against a real {@code HttpApi} and ZooKeeper; reports are written by the test. */
class MeshCliTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();
    @TempDir
    Path dir;

    ClientRun mesh(String... args) {
        return meshAt(fx.api.uri().toString(), args);
    }

    /** The client with {@code --coordinator=coordinators} (one URL or several, comma-separated). */
    static ClientRun meshAt(String coordinators, String... args) {
        return ClientRun.of(coordinators, args);
    }

    /** As {@link #meshAt(String, String...)}, printing into {@code out}, which another thread may read meanwhile. */
    static ClientRun meshAt(String coordinators, StringWriter out, String... args) {
        return ClientRun.of(coordinators, out, args);
    }

    CompletableFuture<ClientRun> meshAsync(String... args) { return CompletableFuture.supplyAsync(() -> mesh(args)); }

    static void report(String host, String module, String revision, String push, ApplyOutcome outcome, String error) throws Exception {
        fx.writeReport(StatusApiTest.report(host, module, revision, push, outcome, error));
    }

    Path manifest(String yaml) throws Exception {
        Path f = dir.resolve("m.yaml");
        Files.writeString(f, yaml);
        return f;
    }

    static void awaitPush(String push) {
        await().atMost(10, TimeUnit.SECONDS).until(() -> fx.zk.client().checkExists().forPath(fx.zk.paths().push(push)) != null);
    }

    /** {@code mesh} and {@code mesh window} without a command: usage on stderr, exit 2, as README says. */
    @Test
    void noCommandIsAUsageError() {
        for (String[] args : List.of(new String[0], new String[]{"window"})) {
            StringWriter out = new StringWriter(), err = new StringWriter();
            CommandLine cl = MeshCli.commandLine();
            cl.setOut(new PrintWriter(out, true));
            cl.setErr(new PrintWriter(err, true));
            int code = cl.execute(args);
            assertThat(code).as(String.join(" ", args) + ": " + err).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(err.toString()).contains("give a command:").contains("Usage:");
            assertThat(out.toString()).isEmpty();
        }
    }

    @Test
    void pushWaitExitsZeroWhenEveryHostApplied() throws Exception {
        Path f = manifest(Manifests.TWO);
        StringWriter out = new StringWriter();
        CompletableFuture<ClientRun> run = CompletableFuture.supplyAsync(() -> meshAt(fx.api.uri().toString(), out,
                "push", f.toString(), "--revision", "r2", "--wait", "--timeout", "30s", "--interval", "100ms"));
        String push = "push-0000000000";
        awaitPush(push);
        // each state once the client has printed the one before, so that it sees them all
        await().atMost(10, TimeUnit.SECONDS).until(() -> out.toString().contains("host-a  store  pending\n"));
        report("host-a", "store", "r2", push, ApplyOutcome.DEFERRED, null);
        await().atMost(10, TimeUnit.SECONDS).until(() -> out.toString().contains("host-a  store  deferred"));
        report("host-a", "store", "r2", push, ApplyOutcome.APPLIED, null);
        report("host-a", "web", "r2", push, ApplyOutcome.APPLIED, null);
        report("host-b", "web", "r2", push, ApplyOutcome.APPLIED, null);
        ClientRun r = run.get(30, TimeUnit.SECONDS);

        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).startsWith("push-0000000000  revision r2  modules store,web  hosts host-a,host-b");
        assertThat(r.out()).contains("host-a  store  pending\n", "host-a  store  deferred (window garbage-collect w-20261130T033000Z-3f2a since 2026-11-30T03:30:00Z)\n",
                "host-a  store  applied r2\n", "host-b  web    applied r2\n", "applied on every host");
        // Each state change is printed once.
        assertThat(r.out().split("host-a  store  pending", -1)).hasSize(2);
    }

    @Test
    void pushWaitExitsOneWhenAHostFailed() throws Exception {
        CompletableFuture<ClientRun> run = meshAsync("push", manifest(Manifests.store("[host-a]")).toString(), "--wait", "--timeout", "30s", "--interval", "100ms");
        awaitPush("push-0000000000");
        report("host-a", "store", "x", "push-0000000000", ApplyOutcome.FAILED, "pull mesh-demo/registry:2.8.2: not found");
        ClientRun r = run.get(30, TimeUnit.SECONDS);
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.FAILED);
        assertThat(r.out()).contains("host-a  store  failed: pull mesh-demo/registry:2.8.2: not found");
    }

    /**
     * The review's case: a newer push's report replaces this push's on a host before this one landed there: {@code
     * --wait} prints {@code superseded by push-N} for that host and exits 1 naming it, never "applied on every host";
     * {@code mesh status PUSH} says the same.
     */
    @Test
    void pushWaitExitsOneNamingTheHostsANewerPushSuperseded() throws Exception {
        Path f = manifest(Manifests.TWO);
        StringWriter out = new StringWriter();
        CompletableFuture<ClientRun> run = CompletableFuture.supplyAsync(() -> meshAt(fx.api.uri().toString(), out,
                "push", f.toString(), "--revision", "r2", "--wait", "--timeout", "30s", "--interval", "100ms"));
        String push = "push-0000000000";
        awaitPush(push);
        await().atMost(10, TimeUnit.SECONDS).until(() -> out.toString().contains("host-b  web    pending\n"));
        report("host-a", "store", "r2", push, ApplyOutcome.APPLIED, null);
        report("host-a", "web", "r2", push, ApplyOutcome.APPLIED, null);
        report("host-b", "web", "w-fix2", "push-0000000001", ApplyOutcome.APPLIED, null);
        ClientRun r = run.get(30, TimeUnit.SECONDS);

        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.FAILED);
        assertThat(r.out()).contains("host-a  store  applied r2\n", "host-b  web    superseded by push-0000000001\n",
                "push-0000000000 not applied as itself on host-b: superseded by push-0000000001");
        assertThat(r.out()).doesNotContain("applied on every host");

        ClientRun s = mesh("status", push);
        assertThat(s.code()).as(s.toString()).isZero();
        assertThat(s.out()).contains("state superseded");
        assertThat(s.out().lines().filter(l -> l.startsWith("host-b")).findFirst().orElseThrow())
                .contains("superseded", "push-0000000001", "superseded by push-0000000001");
    }

    @Test
    void pushWaitExitsThreeOnTimeout() throws Exception {
        // An older push's report does not count.
        report("host-a", "store", "r0", "push-0000000000", ApplyOutcome.APPLIED, null);
        fx.zk.client().create().creatingParentsIfNeeded().forPath("/mesh/pushes", "{}".getBytes());
        fx.zk.client().create().forPath("/mesh/pushes/push-0000000000", Json.bytes(new PushRecord("push-0000000000", "r0", List.of("store"), Instant.now())));
        ClientRun r = mesh("push", manifest(Manifests.store("[host-a]")).toString(), "--wait", "--timeout", "1s", "--interval", "100ms");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.TIMEOUT);
        assertThat(r.out()).contains("push-0000000001", "host-a  store  pending");
        assertThat(r.err()).contains("timed out", "1 pending");
    }

    @Test
    void badManifestExitsTwoPrintingDocumentAndField() throws Exception {
        Files.writeString(dir.resolve("a.yaml"), Manifests.store("[host-a]"));
        Files.writeString(dir.resolve("b.yml"), Manifests.web("[host-a]").replace("image:", "imag:"));
        Files.writeString(dir.resolve("notes.txt"), "not yaml: [");
        ClientRun r = mesh("push", dir.toString(), "--wait");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).contains("document 2, containers.app.imag: unknown field 'imag'", "a.yaml, b.yml");
        assertThat(fx.zk.client().checkExists().forPath("/mesh/desired")).isNull();
    }

    /** A revision with a line break cannot travel in its header: refused before anything is sent, naming the fix. */
    @Test
    void aRevisionThatIsNotOneExitsTwoAndSendsNothing() throws Exception {
        ClientRun r = mesh("push", manifest(Manifests.store("[host-a]")).toString(), "--revision", "bad\nrev");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).contains("--revision: 'bad\\u000arev' is not a revision: use letters, digits", "nothing was sent")
                .doesNotContain("Exception");
        assertThat(fx.zk.client().checkExists().forPath("/mesh/desired")).isNull();
    }

    @Test
    void directoryPushJoinsSortedYamlFiles() throws Exception {
        Files.writeString(dir.resolve("2-web.yml"), "---\n" + Manifests.web("[host-a]"));
        Files.writeString(dir.resolve("1-store.yaml"), Manifests.store("[host-a]").stripTrailing());
        ClientRun r = mesh("push", dir.toString());
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).contains("modules store,web");
    }

    @Test
    void unreachableCoordinatorExitsFour() throws Exception {
        Path f = manifest(Manifests.TWO);
        fx.api.stop();
        ClientRun r = mesh("push", f.toString());
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.UNREACHABLE);
        assertThat(r.err()).contains("cannot reach the coordinator");
        assertThat(mesh("held").code()).isEqualTo(ExitCodes.UNREACHABLE);
    }

    @Test
    void statusAndHeld() throws Exception {
        ClientRun p = mesh("push", manifest(Manifests.store("[host-a]")).toString(), "--revision", "r1");
        assertThat(p.code()).isZero();
        report("host-a", "store", "r1", "push-0000000000", ApplyOutcome.DEFERRED, null);
        HeldRecord h = new HeldRecord("host-a", "store", "store-registry", "3f2a", "garbage-collect", "w-1", Instant.parse("2026-11-30T03:30:00Z"),
                new ProcessRef(777, "mesh-agent run"));
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(fx.zk.paths().held("host-a", "store-registry"), Json.bytes(h));

        ClientRun s = mesh("status", "push-0000000000");
        assertThat(s.code()).as(s.toString()).isZero();
        assertThat(s.out()).contains("state deferred", "host-a", "deferred", "window garbage-collect");
        ClientRun all = mesh("status");
        assertThat(all.out()).contains("HOST", "host-a", "OFFLINE", "store", "deferred");
        ClientRun json = mesh("status", "push-0000000000", "--json");
        assertThat(Json.MAPPER.readTree(json.out()).get("state").asText()).isEqualTo("deferred");
        assertThat(mesh("status", "push-0000000042").code()).isEqualTo(ExitCodes.BAD_INPUT);

        ClientRun held = mesh("held");
        assertThat(held.code()).isZero();
        assertThat(held.out()).contains("HOST", "CONTAINER", "BY PID", "store-registry", "garbage-collect", "w-1", "2026-11-30T03:30:00Z", "777");
        assertThat(Json.MAPPER.readTree(mesh("held", "--json").out()).get("held")).hasSize(1);
    }

    // Several coordinators (SPEC, "Fleet on one machine"): the next is asked when one does not answer.

    @Test
    void severalCoordinatorsTheNextAnswersWhenOneIsStopped() throws Exception {
        HttpApi second = fx.api.another();
        String first = fx.api.uri().toString();
        fx.api.stop();  // stopped: its port refuses connections
        String both = first + "," + second.uri();
        ClientRun p = meshAt(both, "push", manifest(Manifests.store("[host-a]")).toString(), "--revision", "r1");
        assertThat(p.code()).as(p.toString()).isEqualTo(ExitCodes.OK);
        assertThat(p.out()).startsWith("push-0000000000  revision r1");
        assertThat(p.err()).contains("mesh: " + first + " does not answer", "asking " + second.uri());
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().push("push-0000000000"))).isNotNull();
        report("host-a", "store", "r1", "push-0000000000", ApplyOutcome.APPLIED, null);

        ClientRun s = meshAt(both, "status");
        assertThat(s.code()).as(s.toString()).isEqualTo(ExitCodes.OK);
        assertThat(s.out()).contains("host-a", "store", "r1", "applied");
        assertThat(meshAt(both, "status", "push-0000000000").out()).contains("state applied");
        // The environment variable takes the same list; spaces around commas and a trailing comma are fine.
        assertThat(meshAt(" " + first + " , " + second.uri() + ",", "held").code()).isEqualTo(ExitCodes.OK);
    }

    @Test
    void severalCoordinatorsTheOneThatAnsweredIsAskedFirstAfterwards() throws Exception {
        HttpApi second = fx.api.another();
        URI first = fx.api.uri();
        fx.api.stop();
        List<String> notices = new java.util.ArrayList<>();
        CoordinatorClient client = new CoordinatorClient(List.of(first, second.uri()), null).onFailover(notices::add);
        assertThat(client.get("/v1/fleet").status()).isEqualTo(200);
        assertThat(client.base()).isEqualTo(second.uri());
        assertThat(client.get("/v1/held").status()).isEqualTo(200);
        assertThat(notices).hasSize(1);
    }

    @Test
    void severalCoordinatorsAnHttpErrorAnswerIsFinal() throws Exception {
        // The first answers every request with 503: an answer, so the second (healthy) is not asked.
        HttpServer unavailable = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        unavailable.createContext("/", ex -> {
            byte[] body = "{\"error\":\"ZooKeeper is unavailable\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            ex.sendResponseHeaders(503, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        unavailable.start();
        try {
            String both = "http://127.0.0.1:" + unavailable.getAddress().getPort() + "," + fx.api.uri();
            ClientRun s = meshAt(both, "status");
            assertThat(s.code()).as(s.toString()).isEqualTo(ExitCodes.UNREACHABLE);
            assertThat(s.err()).contains("answered 503: ZooKeeper is unavailable").doesNotContain("does not answer");
            ClientRun p = meshAt(both, "push", manifest(Manifests.store("[host-a]")).toString());
            assertThat(p.code()).as(p.toString()).isEqualTo(ExitCodes.UNREACHABLE);
            assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().pushes())).isNull();
        } finally {
            unavailable.stop(0);
        }
    }

    @Test
    void severalCoordinatorsAPushWhoseAnswerIsLostIsNotSentTwice() throws Exception {
        // The first accepts the connection, reads the request and closes without an answer: the push may have been
        // written there, so it is not sent to the second; a GET is.
        try (ServerSocket dropper = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread t = new Thread(() -> {
                while (!dropper.isClosed()) {
                    try (Socket s = dropper.accept()) {
                        s.setSoTimeout(2000);
                        s.getInputStream().read(new byte[8192]);
                    } catch (IOException e) {
                        // closed, or the client gave up
                    }
                }
            }, "dropper");
            t.setDaemon(true);
            t.start();
            String both = "http://127.0.0.1:" + dropper.getLocalPort() + "," + fx.api.uri();
            ClientRun p = meshAt(both, "push", manifest(Manifests.store("[host-a]")).toString());
            assertThat(p.code()).as(p.toString()).isEqualTo(ExitCodes.UNREACHABLE);
            assertThat(p.err()).contains("lost the coordinator at http://127.0.0.1:" + dropper.getLocalPort(), "not sent to another coordinator");
            assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().pushes())).isNull();
            ClientRun s = meshAt(both, "status");
            assertThat(s.code()).as(s.toString()).isEqualTo(ExitCodes.OK);
            assertThat(s.err()).contains("does not answer", "asking " + fx.api.uri());
        }
    }

    @Test
    void severalCoordinatorsNoneAnswersExitsFourNamingEach() throws Exception {
        HttpApi second = fx.api.another();
        String both = fx.api.uri() + "," + second.uri();
        fx.api.stop();
        second.close();
        ClientRun r = meshAt(both, "status");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.UNREACHABLE);
        assertThat(r.err()).contains("cannot reach any coordinator: " + fx.api.uri() + ": ", "; " + second.uri() + ": ");
        assertThat(meshAt("http://127.0.0.1:1,not a url", "status").err()).contains("--coordinator must be a URL", "got 'not a url'");
    }

    @ParameterizedTest(name = "mesh {0}")
    @ValueSource(strings = {"--help", "push --help", "status --help", "held --help"})
    void helpEverywhere(String args) {
        ClientRun r = mesh(args.split(" "));
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("Usage:");
    }

    /** Failure model row 83: a push that failed on a host and that a newer push then replaced there says both. */
    @Test
    void aFailedTargetANewerPushReplacedSaysItsErrorAndThePushThatReplacedIt() throws Exception {
        var target = Json.MAPPER.readTree("{\"host\":\"h\",\"module\":\"m\",\"state\":\"failed\",\"revision\":\"r3\","
                + "\"push\":\"push-0000000003\",\"error\":\"m-web: not ready: exited (3)\",\"supersededBy\":\"push-0000000003\"}");
        assertThat(ClientText.describe(target)).isEqualTo("failed: m-web: not ready: exited (3) (then replaced by push-0000000003)");
        var plain = Json.MAPPER.readTree("{\"host\":\"h\",\"module\":\"m\",\"state\":\"failed\",\"error\":\"boom\"}");
        assertThat(ClientText.describe(plain)).isEqualTo("failed: boom");
    }

    /** Decision 32: a pending host says what its apply waits for, in mesh status PUSH and mesh push --wait alike. */
    @Test
    void aPendingTargetSaysWhatItsApplyWaitsFor() throws Exception {
        var target = Json.MAPPER.readTree("{\"host\":\"h\",\"module\":\"m\",\"state\":\"pending\","
                + "\"detail\":\"waiting for m-api: health starting, 2 failed checks\"}");
        assertThat(ClientText.describe(target)).isEqualTo("pending (waiting for m-api: health starting, 2 failed checks)");
        var plain = Json.MAPPER.readTree("{\"host\":\"h\",\"module\":\"m\",\"state\":\"pending\"}");
        assertThat(ClientText.describe(plain)).isEqualTo("pending");
    }
}
