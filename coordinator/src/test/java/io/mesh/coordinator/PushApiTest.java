package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.curator.MeshZk;
import io.mesh.manifest.ManifestException;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.PushRecord;
import io.mesh.wire.ZkPaths;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code POST /v1/pushes} and the push listing against a real ZooKeeper. */
class PushApiTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    @Test
    void validTwoModulePushWritesBothDesiredNodesAndThePushInOneTransaction() throws Exception {
        Answer a = fx.api.post("/v1/pushes", Manifests.TWO.getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "r1"));

        assertThat(a.status()).isEqualTo(202);
        assertThat(a.json().get("push").asText()).isEqualTo("push-0000000000");
        assertThat(a.json().get("revision").asText()).isEqualTo("r1");
        assertThat(a.json().get("modules")).extracting(JsonNode::asText).containsExactly("store", "web");
        assertThat(a.json().get("hosts")).extracting(JsonNode::asText).containsExactly("host-a", "host-b");

        List<ModuleSpec> specs = new ManifestParser().parse(Manifests.TWO);
        Stat storeStat = new Stat(), webStat = new Stat(), pushStat = new Stat();
        DesiredRecord store = Json.read(fx.zk.client().getData().storingStatIn(storeStat).forPath("/mesh/desired/store"), DesiredRecord.class);
        DesiredRecord web = Json.read(fx.zk.client().getData().storingStatIn(webStat).forPath("/mesh/desired/web"), DesiredRecord.class);
        byte[] pushBytes = fx.zk.client().getData().storingStatIn(pushStat).forPath("/mesh/pushes/push-0000000000");
        PushRecord push = Json.read(pushBytes, PushRecord.class);

        assertThat(store).isEqualTo(new DesiredRecord("store", "r1", "push-0000000000", specs.get(0)));
        assertThat(web).isEqualTo(new DesiredRecord("web", "r1", "push-0000000000", specs.get(1)));
        assertThat(push.push()).isEqualTo("push-0000000000");
        assertThat(push.revision()).isEqualTo("r1");
        assertThat(push.modules()).containsExactly("store", "web");
        assertThat(push.receivedAt()).isBetween(Instant.now().minusSeconds(60), Instant.now());
        // One transaction: every node was written by the same zxid.
        assertThat(storeStat.getMzxid()).isEqualTo(pushStat.getCzxid()).isEqualTo(webStat.getMzxid());
        // One line of JSON, with the SPEC's fields (plus the hosts each module declared).
        JsonNode pushJson = Json.MAPPER.readTree(pushBytes);
        assertThat(new String(pushBytes, StandardCharsets.UTF_8)).doesNotContain("\n");
        assertThat(pushJson.fieldNames()).toIterable().contains("push", "revision", "modules", "receivedAt");
        assertThat(pushJson.get("hosts").get("web")).extracting(JsonNode::asText).containsExactly("host-a", "host-b");
        JsonNode desiredJson = Json.MAPPER.readTree(fx.zk.client().getData().forPath("/mesh/desired/store"));
        assertThat(desiredJson.fieldNames()).toIterable().containsExactly("module", "revision", "push", "spec");
        assertThat(desiredJson.at("/spec/schedules/garbage-collect/while-stopped/0").asText()).isEqualTo("registry");
    }

    /** A module with one container and a schedule of its own slot ({@code max-concurrent}). */
    static String slotted(String module, String schedule) {
        return "module: " + module + "\nhosts: [host-a]\ncontainers:\n  app: {image: mesh-demo/busybox:1}\n"
                + "schedules:\n  " + schedule + ":\n    cron: \"30 3 * * *\"\n    max-concurrent: 1\n"
                + "    step: {image: mesh-demo/busybox:1, command: [\"true\"]}\n";
    }

    @Test
    void aScheduleWhoseSlotKeyIsAnotherSchedulesIsRefusedAndNothingIsWritten() throws Exception {
        // window-<module>-<schedule>: module a-b schedule c and module a schedule b-c meet at /mesh/slots/window-a-b-c
        Answer first = fx.api.post("/v1/pushes", slotted("a-b", "c").getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "r1"));
        assertThat(first.status()).as(first.body()).isBetween(201, 202); // 202: host-a has no agent here
        Answer other = fx.api.post("/v1/pushes", slotted("a", "b-c").getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "r2"));
        assertThat(other.status()).as(other.body()).isEqualTo(400);
        assertThat(other.body()).contains("schedules.b-c.max-concurrent", "/mesh/slots/window-a-b-c", "schedule 'c' of module 'a-b'",
                "rename the schedule, or give both schedules one group");
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().desired("a"))).as("nothing written").isNull();
        // the same within one push; and a group instead of its own slot is accepted
        Answer both = fx.api.post("/v1/pushes", (slotted("x-y", "z") + "---\n" + slotted("x", "y-z")).getBytes(StandardCharsets.UTF_8), Map.of());
        assertThat(both.status()).as(both.body()).isEqualTo(400);
        assertThat(both.body()).contains("\"document\":2", "schedules.y-z.max-concurrent", "(document 1)");
        Answer grouped = fx.api.post("/v1/pushes", slotted("a", "b-c").replace("max-concurrent: 1\n", "max-concurrent: 1\n    group: g\n")
                .getBytes(StandardCharsets.UTF_8), Map.of());
        assertThat(grouped.status()).as(grouped.body()).isBetween(201, 202);
    }

    @Test
    void pushesGetIncreasingIdsAndTheLatestWinsTheDesiredNode() throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            Answer a = fx.api.post("/v1/pushes", Manifests.store("[host-a]").getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "r" + i));
            assertThat(a.status()).isEqualTo(202);
            ids.add(a.json().get("push").asText());
        }
        assertThat(ids).containsExactly("push-0000000000", "push-0000000001", "push-0000000002");
        DesiredRecord d = Json.read(fx.zk.client().getData().forPath("/mesh/desired/store"), DesiredRecord.class);
        assertThat(d.push()).isEqualTo("push-0000000002");
        assertThat(d.revision()).isEqualTo("r3");

        Answer list = fx.api.get("/v1/pushes");
        assertThat(list.status()).isEqualTo(200);
        assertThat(list.json().get("pushes")).extracting(n -> n.get("push").asText())
                .containsExactly("push-0000000002", "push-0000000001", "push-0000000000");
        assertThat(fx.api.get("/v1/pushes?limit=1").json().get("pushes")).hasSize(1);
    }

    @Test
    void withoutRevisionHeaderTheRevisionIsAContentHash() throws Exception {
        Answer a = fx.api.push(Manifests.TWO);
        assertThat(a.status()).isEqualTo(202);
        assertThat(a.json().get("revision").asText())
                .isEqualTo(PushWriter.contentRevision(Manifests.TWO.getBytes(StandardCharsets.UTF_8)))
                .matches("sha-[0-9a-f]{12}");
    }

    @Test
    void racingWritersNeverShareAnId() throws Exception {
        PushWriter w1 = new PushWriter(fx.zk.client(), fx.zk.paths(), java.time.Clock.systemUTC());
        SecondClient other = new SecondClient(fx.zk);
        try {
            PushWriter w2 = new PushWriter(other.client, fx.zk.paths(), java.time.Clock.systemUTC());
            List<String> ids = java.util.Collections.synchronizedList(new ArrayList<>());
            Thread[] threads = new Thread[4];
            for (int t = 0; t < threads.length; t++) {
                PushWriter w = t % 2 == 0 ? w1 : w2;
                int tt = t;
                threads[t] = new Thread(() -> {
                    for (int i = 0; i < 5; i++) {
                        try {
                            ids.add(w.write(Manifests.TWO, "t" + tt + "-" + i).push());
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                    }
                });
                threads[t].start();
            }
            for (Thread t : threads) t.join();
            assertThat(ids).hasSize(20).doesNotHaveDuplicates();
            assertThat(fx.zk.client().getChildren().forPath("/mesh/pushes")).hasSize(20);
            // The desired node names the push with the highest id.
            String newest = ids.stream().max(java.util.Comparator.comparingLong(ZkPaths::pushSeq)).orElseThrow();
            assertThat(Json.read(fx.zk.client().getData().forPath("/mesh/desired/web"), DesiredRecord.class).push()).isEqualTo(newest);
        } finally {
            other.close();
        }
    }

    /** Module {@code module} with one container per name, each a busybox. */
    private static String module(String module, String... containers) {
        StringBuilder b = new StringBuilder("module: " + module + "\nhosts: [host-a]\ncontainers:\n");
        for (String c : containers) b.append("  ").append(c).append(": {image: mesh-demo/busybox:1}\n");
        return b.toString();
    }

    /**
     * Against what is desired (SPEC.md, "Containers": two containers may not share a Docker name): module {@code store} container {@code cache-db} is desired;
     * a push of module {@code store-cache} container {@code db} (both {@code store-cache-db}) is 400 naming both
     * modules and the name, and writes nothing. A push that replaces {@code store} in the same push is fine.
     */
    @Test
    void aDockerNameThatAnotherDesiredModuleHasIs400NamingBothModulesAndWritesNothing() throws Exception {
        assertThat(fx.api.push(module("store", "registry", "cache-db")).status()).isEqualTo(202);
        Map<String, String> before = snapshot();

        Answer a = fx.api.push(module("web", "app") + "---\n" + module("store-cache", "db"));

        assertThat(a.status()).isEqualTo(400);
        assertThat(a.json().get("errors")).singleElement().satisfies(e -> {
            assertThat(e.get("document").asInt()).isEqualTo(2);
            assertThat(e.get("field").asText()).isEqualTo("containers.db");
            assertThat(e.get("message").asText()).contains("'store-cache-db'", "module 'store-cache'", "container 'db'",
                    "module 'store'", "container 'cache-db'", "/mesh/desired/store", "push-0000000000", "rename one of the two containers");
        });
        assertThat(snapshot()).isEqualTo(before);
        assertThat(fx.api.api().metrics().rejectedCount(Metrics.INVALID)).isEqualTo(1);

        // Pushing store again (its own desired node does not count) and replacing it in the same push are accepted.
        assertThat(fx.api.push(module("store", "registry", "cache-db")).status()).isEqualTo(202);
        assertThat(fx.api.push(module("store", "registry", "cache") + "---\n" + module("store-cache", "db")).status()).isEqualTo(202);
        assertThat(fx.zk.client().getChildren().forPath("/mesh/desired")).containsExactlyInAnyOrder("store", "store-cache");
    }

    /**
     * Two coordinators racing: coordinator B has read {@code /mesh/desired} (no {@code store} yet) when coordinator A
     * commits {@code store}/{@code cache-db}. B's transaction then fails on the version of {@code /mesh/pushes}, and
     * its next attempt reads the desired state again and refuses {@code store-cache}/{@code db}: never both.
     */
    @Test
    void aCoordinatorThatLostTheRaceChecksDockerNamesAgainstTheWinner() throws Exception {
        SecondClient other = new SecondClient(fx.zk);
        try {
            PushWriter a = new PushWriter(fx.zk.client(), fx.zk.paths(), java.time.Clock.systemUTC());
            PushWriter b = new PushWriter(other.client, fx.zk.paths(), java.time.Clock.systemUTC());
            java.util.concurrent.atomic.AtomicReference<PushWriter.Result> won = new java.util.concurrent.atomic.AtomicReference<>();
            b.beforeTransaction(() -> {
                if (won.get() != null) return;
                try {
                    won.set(a.write(module("store", "registry", "cache-db"), "a1"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });

            ManifestException refused = org.assertj.core.api.Assertions.catchThrowableOfType(
                    ManifestException.class, () -> b.write(module("store-cache", "db"), "b1"));

            assertThat(won.get()).isNotNull();
            assertThat(refused).isNotNull();
            assertThat(refused.errors()).singleElement().satisfies(e ->
                    assertThat(e.message()).contains("'store-cache-db'", "module 'store'", "module 'store-cache'", won.get().push()));
            assertThat(fx.zk.client().getChildren().forPath("/mesh/desired")).containsExactly("store");
            assertThat(fx.zk.client().getChildren().forPath("/mesh/pushes")).containsExactly(won.get().push());
        } finally {
            other.close();
        }
    }

    static Stream<Arguments> malformed() {
        String store = Manifests.store("[host-a]");
        return Stream.of(
                Arguments.of("unknown field", store + "colour: red\n", 1, "colour"),
                Arguments.of("bad cron", store.replace("30 3 * * *", "61 3 * * *"), 1, "schedules.garbage-collect.cron"),
                Arguments.of("while-stopped naming nothing", store.replace("while-stopped: [registry]", "while-stopped: [nope]"), 1,
                        "schedules.garbage-collect.while-stopped[0]"),
                Arguments.of("bad second document after a good first", store + "---\n" + Manifests.web("[host-a]").replace("image:", "imag:"), 2,
                        "containers.app.imag"),
                Arguments.of("empty body", "", 1, ""));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void malformedPushIs400NamingDocumentAndFieldAndWritesNothing(String name, String yaml, int document, String field) throws Exception {
        assertThat(fx.api.push(Manifests.TWO).status()).isEqualTo(202);
        Map<String, String> before = snapshot();

        Answer a = fx.api.push(yaml);

        assertThat(a.status()).isEqualTo(400);
        assertThat(a.json().get("errors")).isNotEmpty();
        assertThat(a.json().get("errors")).anySatisfy(e -> {
            assertThat(e.get("document").asInt()).isEqualTo(document);
            assertThat(e.get("field").asText()).isEqualTo(field);
            assertThat(e.get("message").asText()).isNotBlank();
        });
        assertThat(snapshot()).isEqualTo(before);
        assertThat(fx.api.api().metrics().rejectedCount(Metrics.INVALID)).isEqualTo(1);
    }

    @Test
    void nonUtf8BodyAndBadRevisionAre400() throws Exception {
        assertThat(fx.api.push(Manifests.TWO).status()).isEqualTo(202);
        Map<String, String> before = snapshot();

        byte[] latin1 = (Manifests.store("[host-a]") + "# caf\u00e9\n").getBytes(StandardCharsets.ISO_8859_1);
        Answer a = fx.api.post("/v1/pushes", latin1, Map.of());
        assertThat(a.status()).isEqualTo(400);
        assertThat(a.json().at("/errors/0/message").asText()).contains("UTF-8");

        Answer b = fx.api.post("/v1/pushes", Manifests.TWO.getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "r 1;rm"));
        assertThat(b.status()).isEqualTo(400);
        assertThat(b.json().at("/errors/0/field").asText()).isEqualTo("X-Mesh-Revision");
        assertThat(snapshot()).isEqualTo(before);
    }

    @Test
    void oversizeBodyIs413() throws Exception {
        byte[] big = new byte[HttpApi.MAX_BODY + 1];
        Arrays.fill(big, (byte) '#');
        Answer a = fx.api.post("/v1/pushes", big, Map.of());
        assertThat(a.status()).isEqualTo(413);
        assertThat(a.json().get("error").asText()).contains("1048576");
        assertThat(fx.zk.client().checkExists().forPath("/mesh/desired")).isNull();
    }

    @Test
    void tokenIsRequiredWhenConfigured() throws Exception {
        fx.api.restart(BearerToken.of("s3cret-token"), null);
        byte[] body = Manifests.TWO.getBytes(StandardCharsets.UTF_8);

        assertThat(fx.api.post("/v1/pushes", body, Map.of()).status()).isEqualTo(401);
        Answer wrong = fx.api.post("/v1/pushes", body, Map.of("Authorization", "Bearer s3cret-tokeN"));
        assertThat(wrong.status()).isEqualTo(403);
        assertThat(wrong.json().get("error").asText()).doesNotContain("s3cret");
        assertThat(fx.zk.client().checkExists().forPath("/mesh/desired")).isNull();

        assertThat(fx.api.post("/v1/pushes", body, Map.of("Authorization", "Bearer s3cret-token")).status()).isEqualTo(202);
        assertThat(fx.api.get("/v1/hosts").status()).isEqualTo(200);
    }

    @Test
    void unknownPathsMethodsAndPushesAreJsonErrors() throws Exception {
        Answer nf = fx.api.get("/v2/nothing");
        assertThat(nf.status()).isEqualTo(404);
        assertThat(nf.json().get("error").asText()).isNotBlank();

        Answer m = fx.api.method("DELETE", "/v1/pushes");
        assertThat(m.status()).isEqualTo(405);
        assertThat(m.json().get("error").asText()).contains("GET, POST");
        assertThat(m.raw().headers().firstValue("Allow")).contains("GET, POST");
        assertThat(fx.api.method("POST", "/v1/held").status()).isEqualTo(405);

        assertThat(fx.api.get("/v1/pushes/push-0000000099").status()).isEqualTo(404);
        assertThat(fx.api.get("/v1/pushes/../../etc").status()).isEqualTo(404);
    }

    @Test
    void healthAndMetrics() throws Exception {
        Answer h = fx.api.get("/healthz");
        assertThat(h.status()).isEqualTo(200);
        assertThat(h.json().get("status").asText()).isEqualTo("ok");
        assertThat(h.json().get("zookeeper").asText()).isEqualTo("connected");

        fx.api.push(Manifests.TWO);
        fx.api.push("nope: 1\n");
        Answer m = fx.api.get("/metrics");
        assertThat(m.status()).isEqualTo(200);
        assertThat(m.raw().headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
        assertThat(m.body()).contains("mesh_pushes_accepted_total 1\n", "mesh_pushes_rejected_total{reason=\"invalid\"} 1\n",
                "mesh_held_containers 0\n", "mesh_zookeeper_connected 1\n");
    }

    /** Every node under /mesh/desired and /mesh/pushes: path to data, mzxid and version. */
    private static Map<String, String> snapshot() throws Exception {
        Map<String, String> out = new TreeMap<>();
        for (String root : List.of("/mesh/desired", "/mesh/pushes")) {
            Stat rs = fx.zk.client().checkExists().forPath(root);
            if (rs == null) continue;
            out.put(root, new String(fx.zk.client().getData().forPath(root), StandardCharsets.UTF_8) + " mzxid=" + rs.getMzxid() + " cversion=" + rs.getCversion());
            for (String c : fx.zk.client().getChildren().forPath(root)) {
                Stat s = new Stat();
                byte[] d = fx.zk.client().getData().storingStatIn(s).forPath(root + "/" + c);
                out.put(root + "/" + c, new String(d, StandardCharsets.UTF_8) + " mzxid=" + s.getMzxid() + " version=" + s.getVersion());
            }
        }
        return out;
    }

    /** A second client of the same server, as a second coordinator would have. */
    static final class SecondClient implements AutoCloseable {
        final org.apache.curator.framework.CuratorFramework client;

        SecondClient(ZooKeeperExtension zk) throws Exception {
            client = MeshZk.connect(zk.connect(), java.time.Duration.ofSeconds(20));
        }

        @Override
        public void close() { client.close(); }
    }
}
