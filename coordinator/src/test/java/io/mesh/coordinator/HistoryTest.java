package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.manifest.ManifestParser;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HistoryRecord;
import io.mesh.wire.Json;
import io.mesh.wire.PushAction;
import io.mesh.wire.PushRecord;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The history of pushes ({@code /mesh/history/<module>/rev-<seq>}), rollbacks and deletes as the coordinator writes
 * them, against a real ZooKeeper: in the push's own transaction, bounded, never for a refused request (SPEC.md,
 * "History and rollback"; docs/decisions/0011-history-rollback-delete.md). The agents' side is RollbackDeleteTest.
 */
class HistoryTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    private Answer push(String yaml, String revision, Map<String, String> more) throws Exception {
        Map<String, String> headers = new TreeMap<>(more);
        headers.put("X-Mesh-Revision", revision);
        return fx.api.post("/v1/pushes", yaml.getBytes(StandardCharsets.UTF_8), headers);
    }

    private Answer push(String yaml, String revision) throws Exception { return push(yaml, revision, Map.of()); }

    private Answer rollback(String module, String body) throws Exception {
        return fx.api.method("POST", "/v1/modules/" + module + "/rollback", body.getBytes(StandardCharsets.UTF_8), Map.of());
    }

    private List<String> historyNodes(String module) throws Exception {
        if (fx.zk.client().checkExists().forPath(fx.zk.paths().history(module)) == null) return List.of();
        return fx.zk.client().getChildren().forPath(fx.zk.paths().history(module)).stream().sorted().toList();
    }

    @Test
    void eachModuleOfAPushGetsAHistoryNodeInThePushTransaction() throws Exception {
        Answer a = push(Manifests.TWO, "r1", Map.of("X-Mesh-Source", "4f2c9e1 (main)"));
        assertThat(a.status()).as(a.body()).isEqualTo(202);
        String push = a.json().path("push").asText();

        Stat pushStat = new Stat();
        fx.zk.client().getData().storingStatIn(pushStat).forPath(fx.zk.paths().push(push));
        for (String module : List.of("store", "web")) {
            assertThat(historyNodes(module)).containsExactly("rev-0000000000");
            Stat h = new Stat();
            byte[] data = fx.zk.client().getData().storingStatIn(h).forPath(fx.zk.paths().history(module, "rev-0000000000"));
            // One transaction: the history node was created by the zxid that created the push node.
            assertThat(h.getCzxid()).isEqualTo(pushStat.getCzxid());
            assertThat(h.getEphemeralOwner()).isZero();
            String text = new String(data, StandardCharsets.UTF_8);
            assertThat(text).doesNotContain("\n");
            JsonNode json = Json.MAPPER.readTree(data);
            assertThat(json.fieldNames()).toIterable().contains("module", "revision", "push", "spec", "pushedAt", "by", "source");
            HistoryRecord r = Json.read(data, HistoryRecord.class);
            assertThat(r.module()).isEqualTo(module);
            assertThat(r.revision()).isEqualTo("r1");
            assertThat(r.push()).isEqualTo(push);
            assertThat(r.by()).isEqualTo(HistoryRecord.BY_ANONYMOUS + " from 127.0.0.1");
            assertThat(r.source()).isEqualTo("4f2c9e1 (main)");
            assertThat(r.action()).isEqualTo(PushAction.PUSH);
            assertThat(r.spec()).isEqualTo(Json.read(fx.zk.client().getData().forPath(fx.zk.paths().desired(module)), DesiredRecord.class).spec());
        }
        PushRecord record = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().push(push)), PushRecord.class);
        assertThat(record.by()).isEqualTo("anonymous from 127.0.0.1");
        assertThat(record.source()).isEqualTo("4f2c9e1 (main)");
        assertThat(record.action()).isEqualTo(PushAction.PUSH);
        assertThat(record.rollbackOf()).isNull();
    }

    @Test
    void byIsTokenWithTheBearerTokenAndWebhookForASignedPush() throws Exception {
        fx.api.restart(BearerToken.of("tok-1"), WebhookSecret.of("hook-1"));
        byte[] body = Manifests.web("[host-a]").getBytes(StandardCharsets.UTF_8);
        Answer byToken = fx.api.post("/v1/pushes", body, Map.of("Authorization", "Bearer tok-1"));
        Answer signed = fx.api.post("/v1/pushes", body, Map.of(WebhookSecret.HEADER, WebhookSecret.of("hook-1").sign(body)));
        assertThat(byToken.status()).isEqualTo(202);
        assertThat(signed.status()).isEqualTo(202);
        List<HistoryRecord> history = new PushWriter(fx.zk.client(), fx.zk.paths(), Clock.systemUTC()).history("web");
        assertThat(history).extracting(HistoryRecord::by).containsExactly(HistoryRecord.BY_WEBHOOK + " from 127.0.0.1", HistoryRecord.BY_TOKEN + " from 127.0.0.1");
        assertThat(history).extracting(HistoryRecord::source).containsOnlyNulls();
    }

    @Test
    void historyKeepsTheNewestFiftyAndTheApiListsThemNewestFirst() throws Exception {
        int pushes = HistoryRecord.KEPT + 5;
        for (int i = 1; i <= pushes; i++) assertThat(push(Manifests.web("[host-a]"), "r" + i).status()).isEqualTo(202);
        List<String> nodes = historyNodes("web");
        assertThat(nodes).hasSize(HistoryRecord.KEPT);
        assertThat(nodes.get(0)).isEqualTo("rev-0000000005");
        assertThat(nodes.get(nodes.size() - 1)).isEqualTo("rev-" + String.format("%010d", pushes - 1));

        Answer h = fx.api.get("/v1/modules/web/history");
        assertThat(h.status()).isEqualTo(200);
        List<String> revisions = new ArrayList<>();
        h.json().path("history").forEach(n -> revisions.add(n.path("revision").asText()));
        assertThat(revisions).hasSize(HistoryRecord.KEPT);
        assertThat(revisions.get(0)).isEqualTo("r" + pushes);
        assertThat(revisions.get(HistoryRecord.KEPT - 1)).isEqualTo("r6");
    }

    @Test
    void aPruneThatLosesARaceIsReadAgainAndRetried() throws Exception {
        for (int i = 1; i <= HistoryRecord.KEPT; i++) assertThat(push(Manifests.web("[host-a]"), "r" + i).status()).isEqualTo(202);
        PushWriter mine = new PushWriter(fx.zk.client(), fx.zk.paths(), Clock.systemUTC());
        PushWriter other = new PushWriter(fx.zk.client(), fx.zk.paths(), Clock.systemUTC());
        AtomicBoolean once = new AtomicBoolean();
        // Between this writer's reads and its transaction, another coordinator pushes (and deletes the same oldest node).
        mine.beforeTransaction(() -> {
            if (once.compareAndSet(false, true)) {
                try {
                    other.write(Manifests.web("[host-a]"), "theirs");
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }
        });
        PushWriter.Result r = mine.write(Manifests.web("[host-a]"), "mine");
        assertThat(r.push()).isEqualTo("push-" + String.format("%010d", HistoryRecord.KEPT + 1));
        assertThat(historyNodes("web")).hasSize(HistoryRecord.KEPT);
        assertThat(mine.history("web")).extracting(HistoryRecord::revision).startsWith("mine", "theirs", "r" + HistoryRecord.KEPT);
    }

    @Test
    void aRefusedPushWritesNoHistory() throws Exception {
        assertThat(push("module: web\nhosts: [host-a]\ncontainers: {}\n", "r1").status()).isEqualTo(400);
        assertThat(push(Manifests.web("[host-a]"), "bad revision!").status()).isEqualTo(400);
        assertThat(push(Manifests.web("[host-a]"), "r1", Map.of("X-Mesh-Source", "x".repeat(PushWriter.MAX_SOURCE + 1))).status()).isEqualTo(400);
        assertThat(historyNodes("web")).isEmpty();
        // A Docker name taken by another module (a-b's c and a's b-c are both a-b-c): refused inside the
        // transaction's attempt, nothing of it written either.
        String ab = "module: a-b\nhosts: [host-a]\ncontainers:\n  c:\n    image: mesh-demo/busybox:1\n";
        String a = "module: a\nhosts: [host-a]\ncontainers:\n  b-c:\n    image: mesh-demo/busybox:1\n";
        assertThat(push(ab, "r1").status()).isEqualTo(202);
        Answer clash = push(a, "r2");
        assertThat(clash.status()).as(clash.body()).isEqualTo(400);
        assertThat(fx.zk.client().getChildren().forPath(fx.zk.paths().history())).containsExactly("a-b");
        assertThat(historyNodes("a-b")).hasSize(1);
    }

    @Test
    void aPushThatFitsTheBodyLimitButNotOneTransactionIs413AndWritesNothing() throws Exception {
        // About 650 KB of YAML: under the 1 MiB body limit, but its spec is written twice (desired and history node).
        StringBuilder env = new StringBuilder();
        for (int i = 0; i < 3000; i++) env.append("      K").append(i).append(": \"").append("v".repeat(200)).append("\"\n");
        String big = "module: web\nhosts: [host-a]\ncontainers:\n  app:\n    image: mesh-demo/busybox:1\n    env:\n" + env;
        assertThat(big.length()).isBetween(600_000, 1 << 20);
        Answer a = push(big, "r1");
        assertThat(a.status()).as(a.body()).isEqualTo(413);
        assertThat(a.json().path("error").asText()).contains("as one ZooKeeper transaction", "split it into several pushes");
        assertThat(a.json().path("limit").asInt()).isEqualTo(PushWriter.MAX_TRANSACTION_BYTES);
        assertThat(fx.zk.client().getChildren().forPath(fx.zk.paths().pushes())).isEmpty();
        assertThat(historyNodes("web")).isEmpty();
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().desired("web"))).isNull();
        // The coordinator's session was not disturbed: the next push goes through at once.
        assertThat(push(Manifests.web("[host-a]"), "r2").status()).isEqualTo(202);
    }

    @Test
    void rollbackPushesThePreviousRevisionAgainMarkedRollbackOf() throws Exception {
        String p1 = push(Manifests.web("[host-a]"), "r1").json().path("push").asText();
        String p2 = push(Manifests.web("[host-a, host-b]"), "r2").json().path("push").asText();
        String p3 = push(Manifests.web("[host-a, host-b]"), "r2").json().path("push").asText(); // the same revision again

        Answer a = fx.api.method("POST", "/v1/modules/web/rollback", new byte[0], Map.of("X-Mesh-Source", "operator rollback"));
        assertThat(a.status()).as(a.body()).isEqualTo(202);
        assertThat(a.json().path("rollbackOf").asText()).isEqualTo(p1); // the revision before r2, not p2's r2
        assertThat(a.json().path("revision").asText()).isEqualTo("r1");
        assertThat(a.json().path("modules")).extracting(JsonNode::asText).containsExactly("web");
        assertThat(a.json().path("hosts")).extracting(JsonNode::asText).containsExactly("host-a");
        String rb = a.json().path("push").asText();

        DesiredRecord d = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().desired("web")), DesiredRecord.class);
        assertThat(d.push()).isEqualTo(rb);
        assertThat(d.revision()).isEqualTo("r1");
        assertThat(d.spec()).isEqualTo(new ManifestParser().parse(Manifests.web("[host-a]")).get(0));
        PushRecord record = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().push(rb)), PushRecord.class);
        assertThat(record.action()).isEqualTo(PushAction.ROLLBACK);
        assertThat(record.rollbackOf()).isEqualTo(p1);
        assertThat(record.source()).isEqualTo("operator rollback");
        HistoryRecord newest = new PushWriter(fx.zk.client(), fx.zk.paths(), Clock.systemUTC()).history("web").get(0);
        assertThat(newest.action()).isEqualTo(PushAction.ROLLBACK);
        assertThat(newest.rollbackOf()).isEqualTo(p1);
        assertThat(newest.push()).isEqualTo(rb);
        // Its status is a push's status, with what it was.
        Answer status = fx.api.get("/v1/pushes/" + rb);
        assertThat(status.status()).isEqualTo(200);
        assertThat(status.json().path("action").asText()).isEqualTo("rollback");
        assertThat(status.json().path("rollbackOf").asText()).isEqualTo(p1);
        assertThat(status.json().path("targets")).extracting(t -> t.path("host").asText() + "/" + t.path("state").asText())
                .containsExactly("host-a/pending");

        // --to names the push: back to r2.
        Answer to = rollback("web", "{\"to\":\"" + p3 + "\"}");
        assertThat(to.status()).as(to.body()).isEqualTo(202);
        assertThat(to.json().path("revision").asText()).isEqualTo("r2");
        assertThat(Json.read(fx.zk.client().getData().forPath(fx.zk.paths().desired("web")), DesiredRecord.class).spec().hosts())
                .containsExactly("host-a", "host-b");
        assertThat(p2).isNotEqualTo(p3);
    }

    @Test
    void deleteLeavesATombstoneNamingTheHostsAndIsRecordedLikeAPush() throws Exception {
        assertThat(push(Manifests.TWO, "r1").status()).isEqualTo(202);
        Answer a = fx.api.method("DELETE", "/v1/modules/web", new byte[0], Map.of("X-Mesh-Source", "ticket-42"));
        assertThat(a.status()).as(a.body()).isEqualTo(202);
        assertThat(a.json().fieldNames()).toIterable().startsWith("push", "revision", "modules", "hosts"); // then warnings: no agents here
        assertThat(a.json().path("revision").asText()).isEqualTo(PushWriter.DELETE_REVISION);
        assertThat(a.json().path("hosts")).extracting(JsonNode::asText).containsExactly("host-a", "host-b");
        String push = a.json().path("push").asText();

        Stat pushStat = new Stat(), desiredStat = new Stat();
        fx.zk.client().getData().storingStatIn(pushStat).forPath(fx.zk.paths().push(push));
        byte[] tomb = fx.zk.client().getData().storingStatIn(desiredStat).forPath(fx.zk.paths().desired("web"));
        assertThat(desiredStat.getMzxid()).isEqualTo(pushStat.getCzxid());
        JsonNode json = Json.MAPPER.readTree(tomb);
        assertThat(json.has("spec")).isFalse();
        assertThat(json.path("deleted").path("hosts")).extracting(JsonNode::asText).containsExactly("host-a", "host-b");
        assertThat(json.path("push").asText()).isEqualTo(push);
        DesiredRecord d = Json.read(tomb, DesiredRecord.class);
        assertThat(d.tombstone()).isTrue();
        // The other module of the push is untouched.
        assertThat(Json.read(fx.zk.client().getData().forPath(fx.zk.paths().desired("store")), DesiredRecord.class).tombstone()).isFalse();

        HistoryRecord h = new PushWriter(fx.zk.client(), fx.zk.paths(), Clock.systemUTC()).history("web").get(0);
        assertThat(h.action()).isEqualTo(PushAction.DELETE);
        assertThat(h.spec()).isNull();
        assertThat(h.source()).isEqualTo("ticket-42");
        Stat hs = fx.zk.client().checkExists().forPath(fx.zk.paths().history("web", "rev-0000000001"));
        assertThat(hs.getCzxid()).isEqualTo(pushStat.getCzxid());
        Answer status = fx.api.get("/v1/pushes/" + push);
        assertThat(status.json().path("action").asText()).isEqualTo("delete");
        assertThat(status.json().path("targets")).extracting(t -> t.path("host").asText()).containsExactly("host-a", "host-b");

        // Deleted twice: 404, nothing written. A push of the module brings it back over the tombstone.
        int before = fx.zk.client().getChildren().forPath(fx.zk.paths().pushes()).size();
        Answer again = fx.api.method("DELETE", "/v1/modules/web");
        assertThat(again.status()).isEqualTo(404);
        assertThat(again.json().path("error").asText()).contains("deleted already", push, "mesh rollback web");
        assertThat(fx.zk.client().getChildren().forPath(fx.zk.paths().pushes())).hasSize(before);
        // A rollback after a delete brings back the spec before it.
        Answer back = rollback("web", "");
        assertThat(back.status()).as(back.body()).isEqualTo(202);
        assertThat(back.json().path("rollbackOf").asText()).isEqualTo("push-0000000000");
        assertThat(Json.read(fx.zk.client().getData().forPath(fx.zk.paths().desired("web")), DesiredRecord.class).spec().containers()).containsKey("app");
    }

    /** Bad requests: each answers with an error naming the field and the fix, and writes nothing. */
    static Stream<Arguments> badRequests() {
        return Stream.of(
                Arguments.of("POST", "/v1/modules/nosuch/rollback", "", 404, "module", "no module nosuch has been pushed"),
                Arguments.of("POST", "/v1/modules/Bad_Name/rollback", "", 404, "module", "module names match"),
                Arguments.of("DELETE", "/v1/modules/nosuch", "", 404, "module", "no module nosuch has been pushed"),
                Arguments.of("POST", "/v1/modules/web/rollback", "{\"to\":\"r1\"}", 400, "to", "to: 'r1' is not a push id"),
                Arguments.of("POST", "/v1/modules/web/rollback", "{\"to\":\"push-0000009999\"}", 404, "to", "is not in the history of module web"),
                Arguments.of("POST", "/v1/modules/web/rollback", "{\"to\":\"push-0000000001\"}", 400, "to", "is the current push of module web"),
                Arguments.of("POST", "/v1/modules/web/rollback", "{\"to\":5}", 400, "to", "must be a push id as a string"),
                Arguments.of("POST", "/v1/modules/web/rollback", "{\"too\":\"push-0000000000\"}", 400, "too", "unknown field 'too'"),
                Arguments.of("POST", "/v1/modules/web/rollback", "to=push-0000000000", 400, "body", "must be JSON"),
                Arguments.of("POST", "/v1/modules/store/rollback", "", 400, "to", "module store has no revision before r1"));
    }

    @ParameterizedTest(name = "{0} {1} {2} -> {3}")
    @MethodSource("badRequests")
    void badInputNamesTheFieldAndTheFixAndWritesNothing(String method, String path, String body, int status, String field,
                                                        String message) throws Exception {
        assertThat(push(Manifests.web("[host-a]"), "r1").status()).isEqualTo(202);  // push-0000000000
        assertThat(push(Manifests.TWO, "r1").status()).isEqualTo(202);              // push-0000000001
        Stat pushes = fx.zk.client().checkExists().forPath(fx.zk.paths().pushes());
        Map<String, Integer> history = new TreeMap<>();
        for (String m : fx.zk.client().getChildren().forPath(fx.zk.paths().history())) history.put(m, historyNodes(m).size());
        byte[] desired = fx.zk.client().getData().forPath(fx.zk.paths().desired("web"));

        Answer a = fx.api.method(method, path, body.getBytes(StandardCharsets.UTF_8), Map.of());
        assertThat(a.status()).as(a.body()).isEqualTo(status);
        assertThat(a.json().path("field").asText()).isEqualTo(field);
        assertThat(a.json().path("error").asText()).contains(message);
        if (status == 400 && field.equals("to")) assertThat(a.json().path("error").asText()).containsAnyOf("mesh history", "push-0000000002");

        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().pushes()).getCversion()).isEqualTo(pushes.getCversion());
        Map<String, Integer> after = new TreeMap<>();
        for (String m : fx.zk.client().getChildren().forPath(fx.zk.paths().history())) after.put(m, historyNodes(m).size());
        assertThat(after).isEqualTo(history);
        assertThat(fx.zk.client().getData().forPath(fx.zk.paths().desired("web"))).isEqualTo(desired);
    }

    @Test
    void historyOfAModuleNeverPushedIs404AndOtherMethodsAre405() throws Exception {
        Answer a = fx.api.get("/v1/modules/nosuch/history");
        assertThat(a.status()).isEqualTo(404);
        assertThat(a.json().path("error").asText()).contains("no module nosuch");
        assertThat(fx.api.method("PUT", "/v1/modules/web").status()).isEqualTo(405);
        assertThat(fx.api.method("GET", "/v1/modules/web/rollback").status()).isEqualTo(405);
        assertThat(fx.api.method("POST", "/v1/modules/web/history").status()).isEqualTo(405);
    }

    @Test
    void rollbackAndDeleteNeedTheTokenLikeAPushAndAWebhookSecretIsNoSubstitute() throws Exception {
        assertThat(push(Manifests.web("[host-a]"), "r1").status()).isEqualTo(202);
        assertThat(push(Manifests.web("[host-a, host-b]"), "r2").status()).isEqualTo(202);
        fx.api.restart(BearerToken.of("tok-2"), null);
        Stat before = fx.zk.client().checkExists().forPath(fx.zk.paths().pushes());
        assertThat(fx.api.method("DELETE", "/v1/modules/web").status()).isEqualTo(401);
        assertThat(fx.api.method("DELETE", "/v1/modules/web", new byte[0], Map.of("Authorization", "Bearer wrong")).status()).isEqualTo(403);
        assertThat(rollback("web", "").status()).isEqualTo(401);
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().pushes()).getCversion()).isEqualTo(before.getCversion());

        Answer ok = fx.api.method("POST", "/v1/modules/web/rollback", new byte[0], Map.of("Authorization", "Bearer tok-2"));
        assertThat(ok.status()).as(ok.body()).isEqualTo(202);
        HistoryRecord h = new PushWriter(fx.zk.client(), fx.zk.paths(), Clock.systemUTC()).history("web").get(0);
        assertThat(h.by()).isEqualTo(HistoryRecord.BY_TOKEN + " from 127.0.0.1");

        fx.api.restart(null, WebhookSecret.of("hook-2"));
        Answer signedOnly = fx.api.method("DELETE", "/v1/modules/web");
        assertThat(signedOnly.status()).isEqualTo(403);
        assertThat(signedOnly.json().path("error").asText()).contains("deletes need a bearer token");
        assertThat(fx.zk.client().getChildren().forPath(fx.zk.paths().history("web")).stream().max(Comparator.naturalOrder())).contains("rev-0000000002");
    }

    /**
     * A desired node edited by hand into something else is the operator's to mend: a delete or a rollback of it is
     * refused 409 naming the fix (it was a 500, "internal error", found by a reviewer), and a push replaces it.
     */
    @Test
    void aDesiredNodeEditedByHandIsRefusedNamingTheFixAndAPushReplacesIt() throws Exception {
        String module = "handmade";
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().desired(module), "not json {".getBytes(StandardCharsets.UTF_8));
        Answer delete = fx.api.method("DELETE", "/v1/modules/" + module, new byte[0], Map.of());
        assertThat(delete.status()).as(delete.body()).isEqualTo(409);
        assertThat(delete.json().path("error").asText()).contains("does not hold a desired record: push the module again to replace it");
        Answer back = rollback(module, "{}");
        assertThat(back.status()).as(back.body()).isEqualTo(409);
        String yaml = "module: " + module + "\nhosts: [host-a]\ncontainers:\n  app:\n    image: busybox:1\n";
        assertThat(push(yaml, "r1").status()).isEqualTo(202);
        assertThat(fx.api.method("DELETE", "/v1/modules/" + module, new byte[0], Map.of()).status()).isEqualTo(202);
    }
}
