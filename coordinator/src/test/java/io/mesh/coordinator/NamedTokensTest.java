package io.mesh.coordinator;

import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.HistoryRecord;
import io.mesh.wire.Json;
import io.mesh.wire.PushRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Named push tokens (SPEC.md, "History and rollback": {@code --token-file} holds {@code name:token} lines and the
 * name is the push's {@code by}), against a real ZooKeeper: the name lands in the push record, the history and a
 * freeze; the older one-token file still works as {@code by: token}; a bad file is refused naming the line, never its
 * text.
 */
class NamedTokensTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();
    @TempDir
    Path dir;

    private Path file(String text) throws Exception {
        Path f = Files.createTempFile(dir, "tokens", ".txt");
        Files.writeString(f, text);
        return f;
    }

    private Answer push(String token) throws Exception {
        return fx.api.post("/v1/pushes", Manifests.web("[host-a]").getBytes(StandardCharsets.UTF_8), Map.of("Authorization", "Bearer " + token));
    }

    @Test
    void theTokensNameIsThePushsByInItsRecordItsHistoryAndAFreeze() throws Exception {
        fx.api.restart(BearerToken.fromFile(file("# who may push\nalice:tok-alice-1\n\nci-main:tok:with:colons\n")), null);
        Answer byCi = push("tok:with:colons");
        Answer byAlice = push("tok-alice-1");
        assertThat(byCi.status()).as(byCi.body()).isEqualTo(202);
        assertThat(byAlice.status()).as(byAlice.body()).isEqualTo(202);
        assertThat(push("alice").status()).as("a name is not a token").isEqualTo(403);
        assertThat(push("tok-alice-2").status()).isEqualTo(403);

        PushRecord record = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().push(byCi.json().path("push").asText())), PushRecord.class);
        assertThat(record.by()).as("one rule for every write: HttpApi.identity").isEqualTo("ci-main");
        List<HistoryRecord> history = new PushWriter(fx.zk.client(), fx.zk.paths(), Clock.systemUTC()).history("web");
        assertThat(history).extracting(HistoryRecord::by).containsExactly("alice", "ci-main");

        Answer f = fx.api.post("/v1/freezes", "{\"module\":\"web\",\"for\":\"1h\",\"reason\":\"audit\"}".getBytes(StandardCharsets.UTF_8),
                Map.of("Authorization", "Bearer tok-alice-1"));
        assertThat(f.status()).as(f.body()).isIn(200, 201);
        assertThat(Json.read(fx.zk.client().getData().forPath(fx.zk.paths().freeze("web")), FreezeRecord.class).by()).isEqualTo("alice");
    }

    /**
     * One rule for who did a write ({@code HttpApi.identity}): a push, a freeze, an operator hold, a rollback, a delete
     * and a push cancel by the same caller all record the same {@code by}: the named token's name, whatever
     * {@code X-Mesh-User} claims.
     */
    @Test
    void everyWriteRecordsTheSameCallerTheSameWay() throws Exception {
        fx.api.restart(BearerToken.fromFile(file("ops:tok-ops-1\n")), null);
        Map<String, String> ops = Map.of("Authorization", "Bearer tok-ops-1", "X-Mesh-User", "alice", "Content-Type", "application/json");
        String who = "ops"; // the named token's name alone (SPEC.md, "History and rollback"); X-Mesh-User is no more than a claim
        List<String> seen = new java.util.ArrayList<>();

        Answer pushed = fx.api.post("/v1/pushes", Manifests.web("[host-a]").getBytes(StandardCharsets.UTF_8), ops);
        assertThat(pushed.status()).as(pushed.body()).isEqualTo(202);
        seen.add(Json.read(fx.zk.client().getData().forPath(fx.zk.paths().push(pushed.json().path("push").asText())), PushRecord.class).by());
        Answer again = fx.api.post("/v1/pushes", Manifests.web("[host-a, host-b]").getBytes(StandardCharsets.UTF_8), ops);
        assertThat(again.status()).as(again.body()).isEqualTo(202);

        Answer f = fx.api.post("/v1/freezes", "{\"module\":\"web\",\"for\":\"1h\",\"reason\":\"audit\"}".getBytes(StandardCharsets.UTF_8), ops);
        assertThat(f.status()).as(f.body()).isEqualTo(201);
        seen.add(Json.read(fx.zk.client().getData().forPath(fx.zk.paths().freeze("web")), FreezeRecord.class).by());

        // A hold needs a host the coordinator knows: one that reported.
        fx.writeReport(StatusApiTest.report("host-a", "web", "r1", pushed.json().path("push").asText(), io.mesh.wire.ApplyOutcome.APPLIED, null));
        Answer h = fx.api.post("/v1/holds", "{\"host\":\"host-a\",\"container\":\"web-app\",\"reason\":\"r\"}".getBytes(StandardCharsets.UTF_8), ops);
        assertThat(h.status()).as(h.body()).isEqualTo(201);
        seen.add(h.json().path("hold").path("by").asText());

        Answer cancel = fx.api.method("POST", "/v1/pushes/" + again.json().path("push").asText() + "/cancel", new byte[0], ops);
        assertThat(cancel.status()).as(cancel.body()).isEqualTo(200);
        seen.add(cancel.json().path("cancelled").path("by").asText());

        Answer rolledBack = fx.api.method("POST", "/v1/modules/web/rollback", new byte[0], ops);
        assertThat(rolledBack.status()).as(rolledBack.body()).isEqualTo(202);
        Answer deleted = fx.api.method("DELETE", "/v1/modules/web", new byte[0], ops);
        assertThat(deleted.status()).as(deleted.body()).isEqualTo(202);
        List<HistoryRecord> history = new PushWriter(fx.zk.client(), fx.zk.paths(), Clock.systemUTC()).history("web");
        history.forEach(r -> seen.add(r.by()));
        assertThat(history).hasSize(4);

        assertThat(seen).as("push, freeze, hold, cancel, then delete, rollback and both pushes in the history").hasSize(8).containsOnly(who);
    }

    @Test
    void aFileOfOnePlainTokenStillWorksAsByToken() throws Exception {
        fx.api.restart(BearerToken.fromFile(file("s3cret-plain-token\n")), null);
        assertThat(push("s3cret-plain-token").status()).isEqualTo(202);
        assertThat(new PushWriter(fx.zk.client(), fx.zk.paths(), Clock.systemUTC()).history("web"))
                .extracting(HistoryRecord::by).containsExactly(HistoryRecord.BY_TOKEN + " from 127.0.0.1");
    }

    @Test
    void aBadTokenFileIsRefusedNamingTheLineAndNotItsText() throws Exception {
        assertThatThrownBy(() -> BearerToken.fromFile(file("alice:tok-1\nNot A Name!:tok-2\n")))
                .hasMessageContaining("line 2").hasMessageContaining("name:token").hasMessageNotContaining("tok-2");
        assertThatThrownBy(() -> BearerToken.fromFile(file("alice:tok-1\nalice:tok-2\n")))
                .hasMessageContaining("line 2").hasMessageContaining("alice").hasMessageNotContaining("tok-2");
        assertThatThrownBy(() -> BearerToken.fromFile(file("alice:tok-1\nbob:tok-1\n")))
                .hasMessageContaining("line 2").hasMessageNotContaining("tok-1");
        assertThatThrownBy(() -> BearerToken.fromFile(file("# nothing\n\n"))).hasMessageContaining("empty");
        assertThat(BearerToken.fromFile(file("alice:tok-1\nbob:tok-2\n")).toString()).contains("alice", "bob").doesNotContain("tok-");
    }
}
