package io.mesh.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZkTxnLog;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The ensemble lost under a running agent, then restored from a backup (SPEC.md "Running it for real";
 * docs/decisions/0039-backups-and-an-empty-ensemble.md), on a real Docker engine and a real ZooKeeper server whose data
 * directory is deleted while it is down: the agent stops and removes nothing and reports {@code no-desired-state}; the
 * restore brings back the desired state and the operator's {@code --stop} hold, and the agent recreates nothing and
 * starts nothing. What Docker did is read from its events; the order of the restore's writes from ZooKeeper's log.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Tag("slow")
class BackupRestoreTest {
    private static final String HOST = "host-backup";
    @RegisterExtension
    @Order(1)
    final CoordinatorFixture fx = new CoordinatorFixture();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(fx.zk, HOST).reconcileEvery(Duration.ofSeconds(5));
    private final String module = TestDocker.uniqueModule("bkp");
    private final DockerEngine docker = TestDocker.engine();

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    private String manifest() {
        StringBuilder b = new StringBuilder("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n");
        for (String n : List.of("web", "db")) {
            b.append("  ").append(n).append(":\n    image: ").append(BUSYBOX).append("\n")
                    .append("    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n")
                    .append("    network: none\n    stop-timeout: 2s\n    restart: unless-stopped\n");
        }
        return b.toString();
    }

    private String state(String push) throws Exception {
        for (JsonNode t : fx.api.get("/v1/pushes/" + push).json().path("targets")) {
            if (t.path("module").asText().equals(module)) return t.path("state").asText();
        }
        return "";
    }

    private ApplyReport report() throws Exception {
        byte[] data = fx.zk.client().getData().forPath(fx.zk.paths().report(HOST, module));
        return Json.read(data, ApplyReport.class);
    }

    @Test
    void anEmptyEnsembleStopsNothingAndARestoreRecreatesNothing() throws Exception {
        Answer p = fx.api.post("/v1/pushes", manifest().getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "r1"));
        assertThat(p.status()).as(p.body()).isEqualTo(202);
        String push = p.json().path("push").asText();
        await().atMost(Duration.ofSeconds(60)).until(() -> state(push).equals("applied"));
        String web = module + "-web", db = module + "-db";
        Answer h = fx.api.post("/v1/holds", ("{\"host\":\"" + HOST + "\",\"container\":\"" + db + "\",\"reason\":\"disk swap\",\"stop\":true}")
                .getBytes(StandardCharsets.UTF_8), Map.of());
        assertThat(h.status()).as(h.body()).isEqualTo(201);
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            HeldRecord r = io.mesh.curator.HeldRegistry.read(fx.zk.client(), fx.zk.paths(), HOST).get(db);
            return r != null && r.hold().stoppedAt() != null;
        });
        String idWeb = docker.inspect(web).getId(), idDb = docker.inspect(db).getId();
        assertThat(docker.inspect(db).getState().getRunning()).isFalse();

        Answer b = fx.api.get("/v1/backup");
        assertThat(b.status()).as(b.body()).isEqualTo(200);
        byte[] backup = b.body().getBytes(StandardCharsets.UTF_8);
        assertThat(b.json().path("nodes").toString()).contains("/desired/" + module, "/held/" + HOST + "/" + db, "/pushes/" + push,
                "/history/" + module + "/rev-");

        Instant t0 = Instant.now();
        try (DockerEvents events = DockerEvents.record(module)) {
            // The ensemble lost: the server stopped, its data deleted, started again empty, under the running agent.
            TestingServer server = fx.zk.server();
            server.stop();
            deleteContents(server.getTempDirectory().toPath());
            server.restart();
            await().atMost(Duration.ofSeconds(90)).ignoreExceptions()
                    .until(() -> report().outcome() == ApplyOutcome.NO_DESIRED_STATE);
            assertThat(report().push()).isNull();
            // A few reconciles later (every 5 s), still nothing done
            Thread.sleep(7_000);
            assertThat(docker.inspect(web).getState().getRunning()).as("web still runs").isTrue();
            assertThat(docker.inspect(db).getState().getRunning()).as("the held db still stopped").isFalse();
            events.settle();
            assertThat(events.since(t0)).as("no Docker event for the module's containers while the tree was empty: %s",
                    DockerEvents.describe(events.since(t0))).isEmpty();

            // Restore into the empty tree
            Answer r = fx.api.post("/v1/restore", backup, Map.of());
            assertThat(r.status()).as(r.body()).isEqualTo(200);
            assertThat(r.json().path("desired").asInt()).isGreaterThanOrEqualTo(1);
            assertThat(r.json().path("holds").asInt()).isEqualTo(1);
            // The agent applies the restored node: web unchanged, db held (the report reads deferred, by the operator's hold)
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> push.equals(report().push())
                    && report().containers().stream().anyMatch(c -> c.container().equals(db) && c.action() == io.mesh.wire.ContainerAction.HELD)
                    && report().containers().stream().anyMatch(c -> c.container().equals(web) && c.action() == io.mesh.wire.ContainerAction.UNCHANGED));
            assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().agent(HOST))).as("the agent's node made again").isNotNull();
            HeldRecord back = io.mesh.curator.HeldRegistry.read(fx.zk.client(), fx.zk.paths(), HOST).get(db);
            assertThat(back).as("the hold is in force again").isNotNull();
            assertThat(back.hold().reason()).isEqualTo("disk swap");
            Thread.sleep(6_000); // a reconcile after the apply
            events.settle();
            assertThat(events.since(t0)).as("nothing recreated, stopped or started: %s", DockerEvents.describe(events.since(t0))).isEmpty();
            assertThat(docker.inspect(web).getId()).isEqualTo(idWeb);
            assertThat(docker.inspect(db).getId()).isEqualTo(idDb);
            assertThat(docker.inspect(db).getState().getRunning()).as("held: still stopped").isFalse();

            // By ZooKeeper's log: the hold was written before the desired node
            List<ZkTxnLog.Change> log = ZkTxnLog.read(server.getTempDirectory().toPath(), 0); // the log of the empty server only
            long hold = firstWrite(log, fx.zk.paths().held(HOST, db)), desired = firstWrite(log, fx.zk.paths().desired(module));
            assertThat(hold).as("the hold restored").isPositive();
            assertThat(desired).as("the desired node restored after the hold").isGreaterThan(hold);

            // A second restore is refused: the tree is not empty; nothing written
            Answer again = fx.api.post("/v1/restore", backup, Map.of());
            assertThat(again.status()).as(again.body()).isEqualTo(409);
            assertThat(again.body()).contains("not empty", "--force");
        }
        // The next push takes a new name, after the restored ones
        Answer p2 = fx.api.post("/v1/pushes", manifest().getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "r2"));
        assertThat(p2.status()).as(p2.body()).isEqualTo(202);
        assertThat(p2.json().path("push").asText()).isGreaterThan(push);
    }

    private static long firstWrite(List<ZkTxnLog.Change> log, String path) {
        return log.stream().filter(c -> c.path().equals(path) && c.kind() != ZkTxnLog.Kind.DELETE).mapToLong(ZkTxnLog.Change::zxid).min().orElse(-1);
    }

    private static void deleteContents(Path dir) throws Exception {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).filter(x -> !x.equals(dir)).map(Path::toFile).forEach(File::delete);
        }
    }
}
