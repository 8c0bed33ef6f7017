package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.HeldRegistry;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /v1/holds}, {@code DELETE /v1/holds/{host}/{container}} and their listing in {@code GET /v1/held}
 * (SPEC.md "Operator holds", decision 0015): what the coordinator writes, and what it refuses with nothing written.
 */
class HoldApiTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();
    @RegisterExtension
    final CoordinatorExtension api = new CoordinatorExtension(zk);

    @BeforeEach
    void fleet() throws Exception {
        // store on host-a; web on host-a and host-b; host-b known by a report only; host-z unknown.
        assertThat(api.push(Manifests.TWO).status()).isEqualTo(202);
        zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(zk.paths().agent("host-a"), Json.bytes(new AgentRecord("host-a", "0.1.0", 4242, Times.now())));
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().report("host-b", "web"),
                Json.bytes(StatusApiTest.report("host-b", "web", "r1", "push-0000000000", ApplyOutcome.APPLIED, null)));
        CoordinatorExtension.awaitServed(zk, zk.paths().report("host-b", "web"));
    }

    private CoordinatorExtension.Answer hold(String json) throws Exception {
        return api.post("/v1/holds", json.getBytes(StandardCharsets.UTF_8), Map.of("Content-Type", "application/json", "X-Mesh-User", "alice"));
    }

    private List<String> heldNodes() throws Exception {
        List<String> out = new java.util.ArrayList<>();
        for (String host : List.of("host-a", "host-b", "host-z")) {
            if (zk.client().checkExists().forPath(zk.paths().held(host)) == null) continue;
            for (String c : zk.client().getChildren().forPath(zk.paths().held(host))) out.add(host + "/" + c);
        }
        return out;
    }

    @Test
    void aHoldIsAPersistentHeldNodeListedApartFromWindowHoldsAndReleasedByDelete() throws Exception {
        Instant before = Times.now();
        CoordinatorExtension.Answer a = hold("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"disk swap OPS-12\",\"for\":\"2h\",\"stop\":true}");
        assertThat(a.status()).as(a.body()).isEqualTo(201);

        String path = zk.paths().held("host-a", "store-registry");
        Stat st = new Stat();
        HeldRecord h = Json.read(zk.client().getData().storingStatIn(st).forPath(path), HeldRecord.class);
        assertThat(st.getEphemeralOwner()).as("persistent: no session's").isZero();
        assertThat(h.operatorHold()).isTrue();
        assertThat(h.module()).isEqualTo("store");
        assertThat(h.schedule()).isNull();
        assertThat(h.window()).isNull();
        assertThat(h.hold().by()).as("the user the client names, and where it asked from").isEqualTo("alice from 127.0.0.1");
        assertThat(h.hold().reason()).isEqualTo("disk swap OPS-12");
        assertThat(h.hold().since()).isAfterOrEqualTo(before);
        assertThat(h.hold().until()).isEqualTo(h.hold().since().plusSeconds(7200));
        assertThat(h.hold().stops()).isTrue();
        String raw = new String(zk.client().getData().forPath(path), StandardCharsets.UTF_8);
        assertThat(raw).doesNotContain("\n", "\"schedule\"", "\"window\"").contains("\"hold\":{\"by\":\"alice from 127.0.0.1\"");

        // A window's hold on web-app, to see the two apart.
        HeldRecord w = new HeldRecord("host-a", "web", "web-app", "9c1d", "nightly", "w-1", Times.now(), new ProcessRef(7, "mesh-agent run"));
        zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(zk.paths().held("host-a", "web-app"), Json.bytes(w));
        JsonNode held = api.get("/v1/held").json();
        assertThat(held.get("held")).extracting(n -> n.get("container").asText()).containsExactly("web-app");
        assertThat(held.get("holds")).singleElement().satisfies(n -> {
            assertThat(n.get("container").asText()).isEqualTo("store-registry");
            assertThat(n.get("hold").get("reason").asText()).isEqualTo("disk swap OPS-12");
            assertThat(n.get("expired").asBoolean()).isFalse();
        });
        assertThat(api.get("/").body()).contains("Operator holds", "HOLD BY", "disk swap OPS-12");

        // Held already: by this operator hold, or by a window (409 naming it); nothing changes.
        CoordinatorExtension.Answer again = hold("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"again\"}");
        assertThat(again.status()).isEqualTo(409);
        assertThat(again.json().get("error").asText()).contains("held by operator alice", "mesh release");
        CoordinatorExtension.Answer window = hold("{\"host\":\"host-a\",\"container\":\"web-app\",\"reason\":\"x\"}");
        assertThat(window.status()).isEqualTo(409);
        assertThat(window.json().get("field").asText()).isEqualTo("container");
        assertThat(window.json().get("error").asText()).contains("held by window nightly");
        assertThat(Json.read(zk.client().getData().forPath(zk.paths().held("host-a", "web-app")), HeldRecord.class)).isEqualTo(w);

        // Release: only an operator's hold; a window's stays (409), a second release finds nothing (404).
        assertThat(api.method("DELETE", "/v1/holds/host-a/web-app").status()).isEqualTo(409);
        assertThat(zk.client().checkExists().forPath(zk.paths().held("host-a", "web-app"))).isNotNull();
        CoordinatorExtension.Answer released = api.method("DELETE", "/v1/holds/host-a/store-registry");
        assertThat(released.status()).as(released.body()).isEqualTo(200);
        assertThat(released.json().get("released").get("hold").get("by").asText()).isEqualTo("alice from 127.0.0.1");
        assertThat(zk.client().checkExists().forPath(path)).isNull();
        assertThat(api.method("DELETE", "/v1/holds/host-a/store-registry").status()).isEqualTo(404);
    }

    @Test
    void anExpiredHoldReadsExpiredAndANewHoldReplacesIt() throws Exception {
        Instant now = Times.now();
        HeldRegistry.hold(zk.client(), zk.paths(), HeldRecord.operator("host-a", "store", "store-registry", null, new ProcessRef(1, "t"),
                new HeldRecord.OperatorHold("bob", "old", now.minusSeconds(60), now.minusSeconds(1), null, null)));
        JsonNode held = api.get("/v1/held").json();
        assertThat(held.get("holds")).singleElement().satisfies(n -> assertThat(n.get("expired").asBoolean()).isTrue());
        assertThat(HeldRegistry.inForce(zk.client(), zk.paths(), "host-a", Times.now())).as("an apply obeys it no more").isEmpty();

        CoordinatorExtension.Answer a = hold("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"new\"}");
        assertThat(a.status()).as(a.body()).isEqualTo(201);
        HeldRecord h = Json.read(zk.client().getData().forPath(zk.paths().held("host-a", "store-registry")), HeldRecord.class);
        assertThat(h.hold().reason()).isEqualTo("new");
        assertThat(h.hold().until()).as("no --for: until released").isNull();
    }

    @Test
    void badInputIsRefusedNamingTheFieldAndNothingIsWritten() throws Exception {
        Map<String, String[]> cases = new java.util.LinkedHashMap<>();
        // body -> {status, field, words the message must contain}
        cases.put("{\"host\":\"host-z\",\"container\":\"store-registry\",\"reason\":\"r\"}", new String[] {"404", "host", "no host 'host-z'"});
        // a newline or an escape in the reason would forge rows in mesh held (a review's find)
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"disk\\nhost-b  store-registry  FAKE \\u001b[31m\"}",
                new String[] {"400", "reason", "one line"});
        cases.put("{\"host\":\"bad/host\",\"container\":\"store-registry\",\"reason\":\"r\"}", new String[] {"400", "host", "host"});
        cases.put("{\"container\":\"store-registry\",\"reason\":\"r\"}", new String[] {"400", "host", "host is required"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-nope\",\"reason\":\"r\"}", new String[] {"404", "container", "<module>-<name>"});
        cases.put("{\"host\":\"host-a\",\"container\":\"../x\",\"reason\":\"r\"}", new String[] {"404", "container", "store-registry"});
        cases.put("{\"host\":\"host-b\",\"container\":\"store-registry\",\"reason\":\"r\"}", new String[] {"404", "container", "does not run on host host-b"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\"}", new String[] {"400", "reason", "reason is required"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"  \"}", new String[] {"400", "reason", "reason is required"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"for\":\"2 hours\"}", new String[] {"400", "for", "not a duration"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"for\":\"0s\"}", new String[] {"400", "for", "zero"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"for\":5}", new String[] {"400", "for", "duration"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"stop\":\"yes\"}", new String[] {"400", "stop", "true or false"});
        cases.put("not json", new String[] {"400", "body", "must be JSON"});
        for (Map.Entry<String, String[]> c : cases.entrySet()) {
            CoordinatorExtension.Answer a = hold(c.getKey());
            assertThat(a.status()).as("%s -> %s", c.getKey(), a.body()).isEqualTo(Integer.parseInt(c.getValue()[0]));
            assertThat(a.json().get("field").asText()).as(c.getKey()).isEqualTo(c.getValue()[1]);
            assertThat(a.json().get("error").asText()).as(c.getKey()).contains(c.getValue()[2]);
        }
        assertThat(heldNodes()).as("nothing written").isEmpty();
        assertThat(api.method("GET", "/v1/holds").status()).isEqualTo(405);
    }
}
