package io.mesh.coordinator;

import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.wire.Json;
import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutHostState;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.RolloutState;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The coordinator's side of rollouts, against a real ZooKeeper (decision 13): the push writes the rollout node in its
 * transaction with one node per host, a newer push replaces them, a push without {@code rollout} deletes them, the
 * coordinator folds the hosts' nodes into the rollout node, and {@code /v1/rollouts/{module}} reads (the hosts' nodes),
 * resumes and aborts it, refusing what does not fit with the field and the fix.
 */
class RolloutApiTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    static String manifest(String rollout) {
        return "module: store\nhosts: [host-b, host-a, host-c]\n" + rollout
                + "containers:\n  registry:\n    image: mesh-demo/registry:2.8.2\n";
    }

    private Answer move(String what, String body) throws Exception {
        return fx.api.method("POST", "/v1/rollouts/store/" + what, body.getBytes(StandardCharsets.UTF_8), Map.of());
    }

    private RolloutRecord node() throws Exception {
        return Json.read(fx.zk.client().getData().forPath(fx.zk.paths().rollout("store")), RolloutRecord.class);
    }

    @Test
    void aPushStartsTheRolloutInItsTransactionAndAPushWithoutRolloutEndsIt() throws Exception {
        assertThat(fx.api.push(manifest("")).status()).isEqualTo(202);
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().rollout("store"))).isNull();
        Answer a = fx.api.push(manifest("rollout: {max-parallel: \"50%\", canary: 1}\n"));
        assertThat(a.status()).as(a.body()).isEqualTo(202);
        String push = a.json().path("push").asText();
        Stat desired = fx.zk.client().checkExists().forPath(fx.zk.paths().desired("store"));
        Stat rollout = fx.zk.client().checkExists().forPath(fx.zk.paths().rollout("store"));
        assertThat(rollout.getMzxid()).as("one transaction").isEqualTo(desired.getMzxid());
        assertThat(fx.zk.client().getChildren().forPath(fx.zk.paths().rollout("store"))).as("one node per host")
                .containsExactlyInAnyOrder("host-a", "host-b", "host-c");
        for (String h : List.of("host-a", "host-b", "host-c")) {
            Stat c = fx.zk.client().checkExists().forPath(fx.zk.paths().rolloutHost("store", h));
            assertThat(c.getMzxid()).as("%s's node in the push's transaction", h).isEqualTo(desired.getMzxid());
            RolloutHostRecord hr = child(h);
            assertThat(hr.push()).isEqualTo(push);
            assertThat(hr.state()).isEqualTo(RolloutHostState.WAITING);
        }
        RolloutRecord r = node();
        assertThat(r.push()).isEqualTo(push);
        assertThat(r.state()).isEqualTo(RolloutState.ROLLING);
        assertThat(r.maxParallel()).as("50% of 3, rounded up").isEqualTo(2);
        assertThat(r.waiting()).containsExactly("host-a", "host-b", "host-c");
        assertThat(r.previous()).as("the desired state it replaces").isNotNull();
        Answer shown = fx.api.get("/v1/rollouts/store");
        assertThat(shown.status()).isEqualTo(200);
        assertThat(shown.json().path("push").asText()).isEqualTo(push);
        assertThat(shown.json().has("previous")).as("views leave the previous spec out").isFalse();

        // A newer push with rollout replaces the hosts' nodes: a move of the older rollout does not carry over.
        moveChild("host-a", push, RolloutHostState.DONE, null);
        Answer again = fx.api.push(manifest("rollout: {canary: 1}\n"));
        String push2 = again.json().path("push").asText();
        assertThat(child("host-a").push()).isEqualTo(push2);
        assertThat(child("host-a").state()).isEqualTo(RolloutHostState.WAITING);

        assertThat(fx.api.push(manifest("")).status()).isEqualTo(202);
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().rollout("store"))).as("deleted, with its hosts' nodes, by the push without rollout").isNull();
        assertThat(fx.api.get("/v1/rollouts/store").status()).isEqualTo(404);
    }

    private RolloutHostRecord child(String host) throws Exception {
        return Json.read(fx.zk.client().getData().forPath(fx.zk.paths().rolloutHost("store", host)), RolloutHostRecord.class);
    }

    /** What a host's agent writes: its own node, at the version read. */
    private void moveChild(String host, String push, RolloutHostState state, String error) throws Exception {
        Stat st = new Stat();
        RolloutHostRecord c = Json.read(fx.zk.client().getData().storingStatIn(st).forPath(fx.zk.paths().rolloutHost("store", host)), RolloutHostRecord.class);
        fx.zk.client().setData().withVersion(st.getVersion()).forPath(fx.zk.paths().rolloutHost("store", host), Json.bytes(c.moved(push, state, error, Instant.now())));
    }

    @Test
    void theCoordinatorFoldsTheHostsNodesIntoTheRolloutNodeAndResumeRecordsWhatItResumedPast() throws Exception {
        assertThat(fx.api.push(manifest("")).status()).isEqualTo(202); // the revision the rollout's previous keeps
        Answer a = fx.api.push(manifest("rollout: {canary: 1, max-parallel: 1}\n"));
        String push = a.json().path("push").asText();
        moveChild("host-a", push, RolloutHostState.FAILED, "not ready");
        Answer paused = fx.api.get("/v1/rollouts/store");
        assertThat(paused.json().path("state").asText()).as("the view reads the hosts' nodes, fold or not").isEqualTo("paused");
        assertThat(paused.json().path("failed")).extracting(JsonNode::asText).containsExactly("host-a");
        await().atMost(Duration.ofSeconds(10)).until(() -> node().state() == RolloutState.PAUSED);
        RolloutRecord folded = node();
        assertThat(folded.failed()).containsExactly("host-a");
        assertThat(folded.waiting()).containsExactly("host-b", "host-c");
        assertThat(folded.note()).isEqualTo("host-a failed: not ready");
        assertThat(folded.previous()).as("a fold keeps the control fields").isNotNull();

        Answer resumed = move("resume", "{\"push\":\"" + push + "\"}");
        assertThat(resumed.status()).as(resumed.body()).isEqualTo(200);
        assertThat(resumed.json().path("state").asText()).isEqualTo("rolling");
        assertThat(node().resumedPast()).as("written in the rollout node").containsExactly("host-a");
        moveChild("host-b", push, RolloutHostState.DONE, null);
        moveChild("host-c", push, RolloutHostState.DONE, null);
        await().atMost(Duration.ofSeconds(10)).until(() -> node().state() == RolloutState.DONE);
        assertThat(node().done()).containsExactly("host-b", "host-c");
        assertThat(node().failed()).as("resumed past, settled").containsExactly("host-a");
        assertThat(fx.api.get("/v1/rollouts/store").json().path("state").asText()).isEqualTo("done");
        // For webhooks (decision 34): each fold that moved the state wrote its event in the same transaction, once.
        String outbox = fx.zk.paths().events(io.mesh.wire.ZkPaths.COORDINATOR_EVENTS);
        java.util.List<io.mesh.wire.MeshEvent> events = new java.util.ArrayList<>();
        for (String n : fx.zk.client().getChildren().forPath(outbox).stream().sorted().toList()) {
            events.add(io.mesh.wire.Json.read(fx.zk.client().getData().forPath(outbox + "/" + n), io.mesh.wire.MeshEvent.class));
        }
        assertThat(events).extracting(io.mesh.wire.MeshEvent::type)
                .containsExactly(io.mesh.wire.EventType.ROLLOUT_PAUSED, io.mesh.wire.EventType.ROLLOUT_DONE);
        assertThat(events).allSatisfy(e -> {
            assertThat(e.module()).isEqualTo("store");
            assertThat(e.push()).isEqualTo(push);
        });
        assertThat(events.get(0).reason()).isEqualTo("host-a failed: not ready");
    }

    @Test
    void resumeAndAbortRefuseWhatDoesNotFit() throws Exception {
        Answer a = fx.api.push(manifest("rollout: {canary: 1}\n"));
        String push = a.json().path("push").asText();
        Answer notPaused = move("resume", "");
        assertThat(notPaused.status()).as(notPaused.body()).isEqualTo(409);
        assertThat(notPaused.body()).contains("not paused", "mesh rollout status store");
        Answer otherPush = move("abort", "{\"push\":\"push-0000000099\"}");
        assertThat(otherPush.status()).as(otherPush.body()).isEqualTo(409);
        assertThat(otherPush.body()).contains("not push-0000000099");
        assertThat(node().state()).as("nothing written by a refusal").isEqualTo(RolloutState.ROLLING);
        Answer bad = move("abort", "{\"push\": 7}");
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.json().path("field").asText()).isEqualTo("push");
        Answer unknown = move("abort", "{\"to\": \"push-1\"}");
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.json().path("field").asText()).isEqualTo("to");

        Answer aborted = move("abort", "{\"push\":\"" + push + "\"}");
        assertThat(aborted.status()).as(aborted.body()).isEqualTo(200);
        assertThat(aborted.json().path("state").asText()).isEqualTo("aborted");
        assertThat(node().state()).isEqualTo(RolloutState.ABORTED);
        assertThat(move("abort", "").status()).as("ended already").isEqualTo(409);
        assertThat(fx.api.method("POST", "/v1/rollouts/nope/abort", new byte[0], Map.of()).status()).isEqualTo(404);
        assertThat(fx.api.method("GET", "/v1/rollouts/store/abort").status()).isEqualTo(405);
    }

    /** {@code promote: manual}: one promote of a rolling rollout, written in its node; none of an auto one, nor twice. */
    @Test
    void promoteLetsAManualRolloutsOtherHostsGoOnceAndIsRefusedOtherwise() throws Exception {
        Answer auto = fx.api.push(manifest("rollout: {canary: 1}\n"));
        assertThat(auto.status()).as(auto.body()).isEqualTo(202);
        Answer notManual = move("promote", "");
        assertThat(notManual.status()).as(notManual.body()).isEqualTo(409);
        assertThat(notManual.body()).contains("not promote: manual");

        Answer manual = fx.api.push(manifest("rollout: {canary: 1, promote: manual, max-failed: 1}\n"));
        assertThat(manual.status()).as(manual.body()).isEqualTo(202);
        String push = manual.json().path("push").asText();
        assertThat(node().promote()).isEqualTo(io.mesh.manifest.RolloutSpec.Promote.MANUAL);
        assertThat(node().maxFailed()).isEqualTo(1);
        moveChild("host-a", push, RolloutHostState.DONE, null);
        Answer shown = fx.api.get("/v1/rollouts/store");
        assertThat(shown.json().path("note").asText()).isEqualTo(RolloutRecord.PROMOTE_NOTE);
        Answer promoted = move("promote", "{\"push\":\"" + push + "\"}");
        assertThat(promoted.status()).as(promoted.body()).isEqualTo(200);
        assertThat(promoted.json().path("note").asText()).startsWith("promoted by ");
        assertThat(node().promotedAt()).as("written in the rollout node").isNotNull();
        assertThat(move("promote", "").status()).as("promoted already").isEqualTo(409);
    }
}
