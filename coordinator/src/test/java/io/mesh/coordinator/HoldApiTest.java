package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.curator.HeldRegistry;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.WindowRequest;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /v1/holds}, {@code GET} and {@code DELETE /v1/holds/{host}/{container}} and their listing in
 * {@code GET /v1/held} (SPEC.md "Operator holds", decision 0015): what the coordinator writes, what it refuses with
 * nothing written, whether the host confirmed a hold, and who placed it.
 */
class HoldApiTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    @BeforeEach
    void fleet() throws Exception {
        // store on host-a; web on host-a and host-b; host-b known by a report only; host-z unknown.
        assertThat(fx.api.push(Manifests.TWO).status()).isEqualTo(202);
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(fx.zk.paths().agent("host-a"), Json.bytes(new AgentRecord("host-a", "0.1.0", 4242, Times.now())));
        fx.writeReport(StatusApiTest.report("host-b", "web", "r1", "push-0000000000", ApplyOutcome.APPLIED, null));
    }

    private CoordinatorExtension.Answer hold(String json) throws Exception {
        return fx.api.post("/v1/holds", json.getBytes(StandardCharsets.UTF_8), Map.of("Content-Type", "application/json", "X-Mesh-User", "alice"));
    }

    private List<String> heldNodes() throws Exception {
        List<String> out = new java.util.ArrayList<>();
        for (String host : List.of("host-a", "host-b", "host-z")) {
            if (fx.zk.client().checkExists().forPath(fx.zk.paths().held(host)) == null) continue;
            for (String c : fx.zk.client().getChildren().forPath(fx.zk.paths().held(host))) out.add(host + "/" + c);
        }
        return out;
    }

    @Test
    void aHoldIsAPersistentHeldNodeListedApartFromWindowHoldsAndReleasedByDelete() throws Exception {
        Instant before = Times.now();
        CoordinatorExtension.Answer a = hold("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"disk swap OPS-12\",\"for\":\"2h\",\"stop\":true}");
        assertThat(a.status()).as(a.body()).isEqualTo(201);

        String path = fx.zk.paths().held("host-a", "store-registry");
        Stat st = new Stat();
        HeldRecord h = Json.read(fx.zk.client().getData().storingStatIn(st).forPath(path), HeldRecord.class);
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
        String raw = new String(fx.zk.client().getData().forPath(path), StandardCharsets.UTF_8);
        assertThat(raw).doesNotContain("\n", "\"schedule\"", "\"window\"").contains("\"hold\":{\"by\":\"alice from 127.0.0.1\"");

        // A window's hold on web-app, to see the two apart.
        HeldRecord w = new HeldRecord("host-a", "web", "web-app", "9c1d", "nightly", "w-1", Times.now(), new ProcessRef(7, "mesh-agent run"));
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(fx.zk.paths().held("host-a", "web-app"), Json.bytes(w));
        JsonNode held = fx.api.get("/v1/held").json();
        assertThat(held.get("held")).extracting(n -> n.get("container").asText()).containsExactly("web-app");
        assertThat(held.get("holds")).singleElement().satisfies(n -> {
            assertThat(n.get("container").asText()).isEqualTo("store-registry");
            assertThat(n.get("hold").get("reason").asText()).isEqualTo("disk swap OPS-12");
            assertThat(n.get("expired").asBoolean()).isFalse();
        });
        assertThat(fx.api.get("/").body()).contains("Operator holds", "HOLD BY", "disk swap OPS-12", "CONFIRMED", "NOT YET");

        // Held already: by this operator hold, or by a window (409 naming it); nothing changes.
        CoordinatorExtension.Answer again = hold("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"again\"}");
        assertThat(again.status()).isEqualTo(409);
        assertThat(again.json().get("error").asText()).contains("held by operator alice", "mesh release");
        CoordinatorExtension.Answer window = hold("{\"host\":\"host-a\",\"container\":\"web-app\",\"reason\":\"x\"}");
        assertThat(window.status()).isEqualTo(409);
        assertThat(window.json().get("field").asText()).isEqualTo("container");
        assertThat(window.json().get("error").asText()).contains("held by window nightly");
        assertThat(Json.read(fx.zk.client().getData().forPath(fx.zk.paths().held("host-a", "web-app")), HeldRecord.class)).isEqualTo(w);

        // Release: only an operator's hold; a window's stays (409), a second release finds nothing (404).
        assertThat(fx.api.method("DELETE", "/v1/holds/host-a/web-app").status()).isEqualTo(409);
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().held("host-a", "web-app"))).isNotNull();
        CoordinatorExtension.Answer released = fx.api.method("DELETE", "/v1/holds/host-a/store-registry");
        assertThat(released.status()).as(released.body()).isEqualTo(200);
        assertThat(released.json().get("released").get("hold").get("by").asText()).isEqualTo("alice from 127.0.0.1");
        assertThat(fx.zk.client().checkExists().forPath(path)).isNull();
        assertThat(fx.api.method("DELETE", "/v1/holds/host-a/store-registry").status()).isEqualTo(404);
    }

    @Test
    void anExpiredHoldReadsExpiredAndANewHoldReplacesIt() throws Exception {
        Instant now = Times.now();
        HeldRegistry.hold(fx.zk.client(), fx.zk.paths(), HeldRecord.operator("host-a", "store", "store-registry", null, new ProcessRef(1, "t"),
                new HeldRecord.OperatorHold("bob", "old", now.minusSeconds(60), now.minusSeconds(1), null, null)));
        JsonNode held = fx.api.get("/v1/held").json();
        assertThat(held.get("holds")).singleElement().satisfies(n -> assertThat(n.get("expired").asBoolean()).isTrue());
        assertThat(HeldRegistry.inForce(fx.zk.client(), fx.zk.paths(), "host-a", Times.now())).as("an apply obeys it no more").isEmpty();

        CoordinatorExtension.Answer a = hold("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"new\"}");
        assertThat(a.status()).as(a.body()).isEqualTo(201);
        HeldRecord h = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().held("host-a", "store-registry")), HeldRecord.class);
        assertThat(h.hold().reason()).isEqualTo("new");
        assertThat(h.hold().until()).as("no --for: until released").isNull();
    }

    @Test
    void badInputIsRefusedNamingTheFieldAndNothingIsWritten() throws Exception {
        Map<String, String[]> cases = new java.util.LinkedHashMap<>();
        // body -> {status, field, words the message must contain}
        cases.put("{\"host\":\"host-z\",\"container\":\"store-registry\",\"reason\":\"r\"}", new String[] {"404", "host", "check the name"});
        // a newline or an escape in the reason would forge rows in mesh held (a review's find)
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"disk\\nhost-b  store-registry  FAKE \\u001b[31m\"}",
                new String[] {"400", "reason", "one line"});
        cases.put("{\"host\":\"bad/host\",\"container\":\"store-registry\",\"reason\":\"r\"}", new String[] {"400", "host", "host"});
        cases.put("{\"container\":\"store-registry\",\"reason\":\"r\"}", new String[] {"400", "host", "host is required"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-nope\",\"reason\":\"r\"}", new String[] {"404", "container", "<module>-<name>"});
        cases.put("{\"host\":\"host-a\",\"container\":\"../x\",\"reason\":\"r\"}", new String[] {"404", "container", "store-registry"});
        cases.put("{\"host\":\"host-b\",\"container\":\"store-registry\",\"reason\":\"r\"}", new String[] {"404", "container", "does not run on host host-b"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\"}", new String[] {"400", "reason", "reason: missing: say why"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"  \"}", new String[] {"400", "reason", "reason: missing: say why"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"for\":\"2 hours\"}", new String[] {"400", "for", "not a duration"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"for\":\"0s\"}", new String[] {"400", "for", "zero"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"for\":\"-2h\"}", new String[] {"400", "for", "not a duration"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"for\":\"400d\"}", new String[] {"400", "for", "such as 90s, 30m or 1h30m"});
        // 400 days in hours: the freezes' bound (OperatorWords.MAX_LENGTH), 366 days
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"for\":\"9600h\"}", new String[] {"400", "for", "at most 366 days"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"for\":\"8785h\"}", new String[] {"400", "for", "give a shorter --for"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"for\":5}", new String[] {"400", "for", "duration"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"stop\":\"yes\"}", new String[] {"400", "stop", "true or false"});
        cases.put("not json", new String[] {"400", "body", "must be JSON"});
        // A misspelled field or one a hold does not take would leave a hold other than asked: refused, naming it.
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"stopp\":true}", new String[] {"400", "stopp", "unknown field 'stopp'"});
        cases.put("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"until\":\"2020-01-01T00:00:00Z\"}", new String[] {"400", "until", "not until"});
        for (Map.Entry<String, String[]> c : cases.entrySet()) {
            CoordinatorExtension.Answer a = hold(c.getKey());
            assertThat(a.status()).as("%s -> %s", c.getKey(), a.body()).isEqualTo(Integer.parseInt(c.getValue()[0]));
            assertThat(a.json().get("field").asText()).as(c.getKey()).isEqualTo(c.getValue()[1]);
            assertThat(a.json().get("error").asText()).as(c.getKey()).contains(c.getValue()[2]);
        }
        assertThat(heldNodes()).as("nothing written").isEmpty();
        assertThat(fx.api.method("GET", "/v1/holds").status()).isEqualTo(405);

        // The bound itself is taken: 366 days, as a freeze's.
        CoordinatorExtension.Answer longest = hold("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\",\"for\":\"8784h\"}");
        assertThat(longest.status()).as(longest.body()).isEqualTo(201);
        HeldRecord h = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().held("host-a", "store-registry")), HeldRecord.class);
        assertThat(h.hold().until()).isEqualTo(h.hold().since().plus(OperatorWords.MAX_LENGTH));
    }

    /**
     * {@code GET /v1/holds/{host}/{container}}: the node as {@code POST} wrote it, then with {@code hold.confirmed} once
     * a stand-in for the host's agent confirmed it ({@link HeldRegistry#confirm}); {@code agent} says whether the host
     * has an agent node. 404 naming the fix when no operator hold is there, 400 for names mesh does not make.
     */
    @Test
    void getShowsTheHoldItsConfirmationAndWhetherItsHostsAgentRuns() throws Exception {
        CoordinatorExtension.Answer posted = hold("{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"disk swap\",\"for\":\"2h\"}");
        assertThat(posted.status()).as(posted.body()).isEqualTo(201);

        CoordinatorExtension.Answer got = fx.api.get("/v1/holds/host-a/store-registry");
        assertThat(got.status()).as(got.body()).isEqualTo(200);
        JsonNode g = got.json();
        posted.json().fields().forEachRemaining(f -> assertThat(g.get(f.getKey())).as(f.getKey()).isEqualTo(f.getValue()));
        assertThat(g.get("hold").has("confirmed")).as("recorded, not yet confirmed").isFalse();
        assertThat(g.get("agent").asBoolean()).isTrue();
        assertThat(g.get("expired").asBoolean()).isFalse();
        assertThat(fx.api.get("/").body()).contains("CONFIRMED", "NOT YET");

        // A stand-in for host-a's agent confirms it.
        Instant at = Instant.parse("2026-12-01T10:00:01.250Z");
        HeldRecord read = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().held("host-a", "store-registry")), HeldRecord.class);
        assertThat(HeldRegistry.confirm(fx.zk.client(), fx.zk.paths(), read, at)).isNotNull();
        JsonNode confirmed = fx.api.get("/v1/holds/host-a/store-registry").json();
        assertThat(Instant.parse(confirmed.get("hold").get("confirmed").asText())).isEqualTo(at);
        assertThat(Instant.parse(fx.api.get("/v1/held").json().get("holds").get(0).get("hold").get("confirmed").asText())).isEqualTo(at);
        assertThat(fx.api.get("/").body()).contains("CONFIRMED", "2026-12-01 10:00:01.250Z").doesNotContain("NOT YET");

        // host-b is known by a report only: no agent node, so nothing can confirm its hold now.
        assertThat(hold("{\"host\":\"host-b\",\"container\":\"web-app\",\"reason\":\"r\"}").status()).isEqualTo(201);
        JsonNode noAgent = fx.api.get("/v1/holds/host-b/web-app").json();
        assertThat(noAgent.get("agent").asBoolean()).isFalse();
        assertThat(noAgent.get("hold").has("confirmed")).isFalse();

        CoordinatorExtension.Answer none = fx.api.get("/v1/holds/host-a/web-app");
        assertThat(none.status()).as(none.body()).isEqualTo(404);
        assertThat(none.json().get("field").asText()).isEqualTo("container");
        assertThat(none.json().get("error").asText()).contains("no operator hold on web-app on host host-a", "mesh hold host-a web-app --reason");
        HeldRecord w = new HeldRecord("host-a", "web", "web-app", "9c1d", "nightly", "w-1", Times.now(), new ProcessRef(7, "mesh-agent run"));
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(fx.zk.paths().held("host-a", "web-app"), Json.bytes(w));
        CoordinatorExtension.Answer window = fx.api.get("/v1/holds/host-a/web-app");
        assertThat(window.status()).isEqualTo(404);
        assertThat(window.json().get("error").asText()).contains("held by window nightly", "not by an operator");

        CoordinatorExtension.Answer badHost = fx.api.get("/v1/holds/-host/store-registry");
        assertThat(badHost.status()).as(badHost.body()).isEqualTo(400);
        assertThat(badHost.json().get("field").asText()).isEqualTo("host");
        CoordinatorExtension.Answer badName = fx.api.get("/v1/holds/host-a/Store_Registry");
        assertThat(badName.status()).as(badName.body()).isEqualTo(400);
        assertThat(badName.json().get("field").asText()).isEqualTo("container");
        assertThat(badName.json().get("error").asText()).contains("<module>-<name>");
        CoordinatorExtension.Answer put = fx.api.method("PUT", "/v1/holds/host-a/store-registry");
        assertThat(put.status()).isEqualTo(405);
        assertThat(put.raw().headers().firstValue("Allow")).hasValue("GET, DELETE");
    }

    /**
     * A named token is who holds (SPEC.md "History and rollback"): {@code X-Mesh-User} is only a claim beside its name,
     * in a hold's {@code by} and in a window request's. The GET of a hold needs the token as its POST does.
     */
    @Test
    void aNamedTokensNameIsTheHoldsByAndXMeshUserOnlyAClaim(@TempDir Path dir) throws Exception {
        Path tokens = dir.resolve("tokens");
        Files.writeString(tokens, "ops:tok-ops-1\nci:tok-ci-1\n");
        fx.api.restart(BearerToken.fromFile(tokens), null);

        CoordinatorExtension.Answer a = fx.api.post("/v1/holds", "{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"r\"}".getBytes(StandardCharsets.UTF_8),
                Map.of("Content-Type", "application/json", "Authorization", "Bearer tok-ops-1", "X-Mesh-User", "alice"));
        assertThat(a.status()).as(a.body()).isEqualTo(201);
        assertThat(a.json().get("hold").get("by").asText()).isEqualTo("ops");
        HeldRecord h = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().held("host-a", "store-registry")), HeldRecord.class);
        assertThat(h.hold().by()).isEqualTo("ops");

        // The header naming the token's own name adds nothing; without the header, the name alone.
        CoordinatorExtension.Answer b = fx.api.post("/v1/holds", "{\"host\":\"host-b\",\"container\":\"web-app\",\"reason\":\"r\"}".getBytes(StandardCharsets.UTF_8),
                Map.of("Content-Type", "application/json", "Authorization", "Bearer tok-ci-1", "X-Mesh-User", "ci"));
        assertThat(b.status()).as(b.body()).isEqualTo(201);
        assertThat(b.json().get("hold").get("by").asText()).isEqualTo("ci");

        assertThat(fx.api.get("/v1/holds/host-a/store-registry").status()).as("the token, as the other hold requests").isEqualTo(401);
        CoordinatorExtension.Answer got = fx.api.method("GET", "/v1/holds/host-a/store-registry", new byte[0], Map.of("Authorization", "Bearer tok-ci-1"));
        assertThat(got.status()).as(got.body()).isEqualTo(200);
        assertThat(got.json().get("hold").get("by").asText()).isEqualTo("ops");

        // A window request: the same rule for who asked.
        CoordinatorExtension.Answer r = fx.api.post("/v1/hosts/host-a/windows", "{\"module\":\"store\",\"schedule\":\"garbage-collect\"}".getBytes(StandardCharsets.UTF_8),
                Map.of("Content-Type", "application/json", "Authorization", "Bearer tok-ops-1", "X-Mesh-User", "alice"));
        assertThat(r.status()).as(r.body()).isEqualTo(202);
        WindowRequest req = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().request("host-a", r.json().get("request").asText())), WindowRequest.class);
        assertThat(req.by().process()).startsWith("mesh window run by ops (says alice) from 127.0.0.1");
    }

    /**
     * {@code mesh release HOST CONTAINER --stale} (SPEC.md "Operator holds"): with an admin's token only, a held node
     * nothing owns is removed (one made by hand with a window's data, persistent; one whose data cannot be read); an
     * operator's hold is refused (plain release ends it), and so is a running window's node (ephemeral: its session
     * lives), each naming why and leaving the node.
     */
    @Test
    void aStaleHeldNodeIsRemovedWithAnAdminsTokenOnlyAndNeverAHoldOrARunningWindowsNode(@TempDir Path dir) throws Exception {
        Path tokens = dir.resolve("tokens");
        Files.writeString(tokens, "ops:tok-ops-1\nci:tok-ci-1\n");
        fx.api.restart(BearerToken.fromFile(tokens).withAdmins(List.of("ops")), null);
        Map<String, String> admin = Map.of("Authorization", "Bearer tok-ops-1");
        Map<String, String> ci = Map.of("Authorization", "Bearer tok-ci-1");
        String path = fx.zk.paths().held("host-a", "store-registry");
        HeldRecord windowData = new HeldRecord("host-a", "store", "store-registry", "0123abcd", "garbage-collect", "w-by-hand",
                Times.now(), ProcessRef.current("zkcli by hand"));
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(path, Json.bytes(windowData));
        String stale = "/v1/holds/host-a/store-registry?stale=true";

        CoordinatorExtension.Answer plain = fx.api.method("DELETE", "/v1/holds/host-a/store-registry", new byte[0], admin);
        assertThat(plain.status()).as("plain release is for operator holds").isEqualTo(409);
        assertThat(plain.body()).contains("--stale");
        CoordinatorExtension.Answer none = fx.api.method("DELETE", stale);
        assertThat(none.status()).as(none.body()).isEqualTo(401);
        assertThat(none.body()).contains("admin");
        CoordinatorExtension.Answer notAdmin = fx.api.method("DELETE", stale, new byte[0], ci);
        assertThat(notAdmin.status()).as(notAdmin.body()).isEqualTo(403);
        assertThat(notAdmin.body()).contains("token ci is not an admin's", "--admin NAME", "[ops]");
        CoordinatorExtension.Answer wrong = fx.api.method("DELETE", stale, new byte[0], Map.of("Authorization", "Bearer nope"));
        assertThat(wrong.status()).isEqualTo(403);
        assertThat(fx.zk.client().checkExists().forPath(path)).as("refused: nothing deleted").isNotNull();

        CoordinatorExtension.Answer removed = fx.api.method("DELETE", stale, new byte[0], admin);
        assertThat(removed.status()).as(removed.body()).isEqualTo(200);
        assertThat(removed.json().path("stale").asBoolean()).isTrue();
        assertThat(removed.json().path("released").path("window").asText()).isEqualTo("w-by-hand");
        assertThat(fx.zk.client().checkExists().forPath(path)).isNull();
        assertThat(fx.api.method("DELETE", stale, new byte[0], admin).status()).as("gone").isEqualTo(404);

        // Data that cannot be read (or names another container than its path): the path is the truth, and it is stale.
        fx.zk.client().create().withMode(CreateMode.PERSISTENT).forPath(path, Json.bytes(new HeldRecord("host-b", "store", "store-registry",
                null, "garbage-collect", "w-elsewhere", Times.now(), ProcessRef.current("by hand"))));
        CoordinatorExtension.Answer unreadable = fx.api.method("DELETE", stale, new byte[0], admin);
        assertThat(unreadable.status()).as(unreadable.body()).isEqualTo(200);
        assertThat(unreadable.json().path("released").path("window").asText()).isEqualTo(HeldRecord.UNREADABLE);
        assertThat(fx.zk.client().checkExists().forPath(path)).isNull();

        // An operator's hold: refused, plain release ends it.
        CoordinatorExtension.Answer held = fx.api.post("/v1/holds", "{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"disk swap\"}"
                .getBytes(StandardCharsets.UTF_8), Map.of("Content-Type", "application/json", "Authorization", "Bearer tok-ci-1"));
        assertThat(held.status()).as(held.body()).isEqualTo(201);
        CoordinatorExtension.Answer hold = fx.api.method("DELETE", stale, new byte[0], admin);
        assertThat(hold.status()).as(hold.body()).isEqualTo(409);
        assertThat(hold.body()).contains("an operator's hold", "mesh release host-a store-registry (without --stale)");
        assertThat(fx.zk.client().checkExists().forPath(path)).isNotNull();
        assertThat(fx.api.method("DELETE", "/v1/holds/host-a/store-registry", new byte[0], ci).status()).isEqualTo(200);

        // A running window's node: ephemeral, its session alive. Refused; it goes with its session.
        try (org.apache.curator.framework.CuratorFramework window = io.mesh.curator.MeshZk.connect(fx.zk.connect(), java.time.Duration.ofSeconds(10))) {
            window.create().withMode(CreateMode.EPHEMERAL).forPath(path, Json.bytes(windowData));
            CoordinatorExtension.Answer running = fx.api.method("DELETE", stale, new byte[0], admin);
            assertThat(running.status()).as(running.body()).isEqualTo(409);
            assertThat(running.body()).contains("ephemeral", "its window w-by-hand (schedule garbage-collect) runs; wait for it to end");
            assertThat(fx.zk.client().checkExists().forPath(path)).isNotNull();
        }
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> fx.zk.client().checkExists().forPath(path) == null);
    }

    /** {@code --admin NAME} names a token of the file; a name that is none is refused, naming the names there are. */
    @Test
    void anAdminMustBeATokensName(@TempDir Path dir) throws Exception {
        BearerToken t = BearerToken.fromFile(Files.writeString(dir.resolve("tokens"), "ops:tok-ops-1\nci:tok-ci-1\n"));
        assertThat(t.withAdmins(List.of("ops")).isAdmin("ops")).isTrue();
        assertThat(t.withAdmins(List.of("ops")).isAdmin("ci")).isFalse();
        assertThat(t.isAdmin("ops")).as("none by default").isFalse();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> t.withAdmins(List.of("root")))
                .hasMessageContaining("--admin root").hasMessageContaining("[ops, ci]");
        assertThat(t.withAdmins(List.of("ops")).toString()).contains("admins [ops]").doesNotContain("tok-");
    }
}
