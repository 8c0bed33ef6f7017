package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.CoordinatorExtension;
import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.coordinator.Manifests;
import io.mesh.coordinator.StatusApiTest;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.Json;
import io.mesh.wire.PushCancel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mesh push cancel PUSH} and {@code POST /v1/pushes/{push}/cancel} against a real coordinator and ZooKeeper
 * (docs/decisions/0030-cancel-and-expire-pushes.md): a push or a delete that a host without an agent would keep
 * pending for ever is dropped, and the push is done.
 */
class PushCancelTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();
    @TempDir
    Path dir;

    private ClientRun mesh(String... args) { return ClientRun.of(fx.api.uri().toString(), args); }

    private static void report(String host, String module, String revision, String push, ApplyOutcome outcome) throws Exception {
        fx.writeReport(StatusApiTest.report(host, module, revision, push, outcome, null));
    }

    /**
     * A host whose report is an earlier push's is pending for the new one: mesh status says what it runs until then,
     * and leaves this push's revision, push and finish columns empty (they were the earlier push's).
     */
    @Test
    void aPendingHostShowsTheEarlierPushItRunsNotInThisPushsColumns() throws Exception {
        Path m = Files.writeString(dir.resolve("m.yaml"), Manifests.store("[host-a]"));
        assertThat(mesh("push", m.toString(), "--revision", "r1").code()).isZero();
        report("host-a", "store", "r1", "push-0000000000", ApplyOutcome.APPLIED);
        assertThat(mesh("push", m.toString(), "--revision", "r2").code()).isZero();
        ClientRun shown = mesh("status", "push-0000000001");
        assertThat(shown.out()).as(shown.toString()).containsPattern("host-a\\s+store\\s+pending\\s+-\\s+-\\s+-\\s+runs push-0000000000 "
                + "\\(revision r1\\) until then");
    }

    private JsonNode status(String push) throws Exception {
        CoordinatorExtension.Answer a = fx.api.get("/v1/pushes/" + push);
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        return a.json();
    }

    private static String stateOf(JsonNode view, String host) {
        for (JsonNode t : view.path("targets")) if (t.path("host").asText().equals(host)) return t.path("state").asText();
        throw new AssertionError("no target on " + host + " in " + view);
    }

    @Test
    void aCancelDropsTheHostsThatHaveNotAppliedAndThePushIsDone() throws Exception {
        Path m = Files.writeString(dir.resolve("m.yaml"), Manifests.store("[host-a, host-gone]"));
        ClientRun pushed = mesh("push", m.toString(), "--revision", "r1");
        assertThat(pushed.code()).as(pushed.toString()).isZero();
        String push = "push-0000000000";
        report("host-a", "store", "r1", push, ApplyOutcome.APPLIED);
        assertThat(stateOf(status(push), "host-gone")).isEqualTo("pending");
        assertThat(fx.api.get("/v1/fleet").json().path("pendingPushes")).hasSize(1);

        ClientRun cancel = mesh("push", "cancel", push);
        assertThat(cancel.code()).as(cancel.toString()).isZero();
        assertThat(cancel.out()).contains(push + " cancelled on host-gone");
        // No wait for the coordinator's cache: the cancel's answer came once its cache held the cancel.
        JsonNode v = status(push);
        assertThat(v.path("state").asText()).isEqualTo("cancelled");
        assertThat(v.path("done").asBoolean()).isTrue();
        assertThat(v.path("counts").path("pending").asInt()).isZero();
        assertThat(stateOf(v, "host-gone")).isEqualTo("cancelled");
        assertThat(stateOf(v, "host-a")).as("what was applied stays applied").isEqualTo("applied");
        PushCancel written = Json.MAPPER.readValue(fx.zk.client().getData().forPath(fx.zk.paths().pushCancel(push)), PushCancel.class);
        assertThat(written.hosts()).containsExactly("host-gone");
        assertThat(fx.api.get("/v1/fleet").json().path("pendingPushes")).as("no longer listed as pending").isEmpty();
        ClientRun shown = mesh("status", push);
        assertThat(shown.out()).contains("state cancelled", "cancelled at ").containsPattern("cancelled at \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d{1,3})?Z by").containsPattern("host-gone\\s+store\\s+cancelled");

        ClientRun again = mesh("push", "cancel", push);
        assertThat(again.code()).as(again.toString()).isZero();
        assertThat(again.out()).contains("cancelled already");

        // An agent that starts there later applies the module's newest desired state (this push's): that is said.
        report("host-gone", "store", "r1", push, ApplyOutcome.APPLIED);
        assertThat(stateOf(status(push), "host-gone")).isEqualTo("applied");
    }

    @Test
    void aDeleteForAHostWithoutAnAgentCanBeCancelled() throws Exception {
        assertThat(fx.api.push(Manifests.store("[host-gone]")).status()).isEqualTo(202);
        CoordinatorExtension.Answer deleted = fx.api.method("DELETE", "/v1/modules/store");
        assertThat(deleted.status()).as(deleted.body()).isEqualTo(202);
        String delete = deleted.json().path("push").asText();
        assertThat(stateOf(status(delete), "host-gone")).isEqualTo("pending");

        CoordinatorExtension.Answer a = fx.api.method("POST", "/v1/pushes/" + delete + "/cancel");
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        assertThat(a.json().path("cancelled").path("hosts").get(0).asText()).isEqualTo("host-gone");
        assertThat(a.json().path("already").asBoolean()).isFalse();
        fx.awaitServed(fx.zk.paths().pushCancel(delete)); // the status is read from the coordinator's cache
        JsonNode v = status(delete);
        assertThat(v.path("state").asText()).isEqualTo("cancelled");
        assertThat(v.path("done").asBoolean()).isTrue();
        // The desired node stays a tombstone: an agent of host-gone that starts later still removes the module.
        assertThat(new String(fx.zk.client().getData().forPath(fx.zk.paths().desired("store")))).contains("\"deleted\"");
    }

    @Test
    void aPushWithNothingLeftToCancelOrUnknownIsRefused() throws Exception {
        assertThat(fx.api.push(Manifests.store("[host-a]")).status()).isEqualTo(202);
        report("host-a", "store", "r1", "push-0000000000", ApplyOutcome.APPLIED);
        ClientRun done = mesh("push", "cancel", "push-0000000000");
        assertThat(done.code()).as(done.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(done.err()).contains("nothing to cancel");
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().pushCancel("push-0000000000"))).isNull();

        assertThat(fx.api.method("POST", "/v1/pushes/push-0000000042/cancel").status()).isEqualTo(404);
        assertThat(fx.api.method("GET", "/v1/pushes/push-0000000000/cancel").status()).isEqualTo(405);
        ClientRun bad = mesh("push", "cancel", "42");
        assertThat(bad.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(bad.err()).contains("not a push id");
    }
}
