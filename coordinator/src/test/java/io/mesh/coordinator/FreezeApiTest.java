package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.HistoryRecord;
import io.mesh.wire.Json;
import io.mesh.wire.LockHolder;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The coordinator's side of freezes, against a real ZooKeeper (decision 14): {@code POST /v1/freezes} writes
 * {@code /mesh/freezes/<module>} or {@code _all} with {@code {by, reason, since, until}}; a bad body is a 400 naming
 * the field and the fix, with nothing written; {@code GET} lists them and {@code DELETE} thaws.
 */
class FreezeApiTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();
    /** An end within a freeze's longest length (366 days), whole seconds. */
    static final String LATER = java.time.Instant.now().plus(java.time.Duration.ofDays(200)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();

    /** Freezes are of modules that were pushed: {@code store}'s desired node exists. */
    @org.junit.jupiter.api.BeforeEach
    void storeWasPushed() throws Exception {
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().desired("store"), "{}".getBytes(StandardCharsets.UTF_8));
    }

    private Answer freeze(String body) throws Exception {
        return fx.api.post("/v1/freezes", body.getBytes(StandardCharsets.UTF_8), Map.of());
    }

    private FreezeRecord node(String name) throws Exception {
        return Json.read(fx.zk.client().getData().forPath(fx.zk.paths().freeze(name)), FreezeRecord.class);
    }

    @Test
    void aFreezeIsWrittenListedReplacedAndThawed() throws Exception {
        Instant before = Instant.now();
        Answer a = freeze("{\"module\":\"store\",\"for\":\"2h\",\"reason\":\"release weekend\"}");
        assertThat(a.status()).as(a.body()).isEqualTo(201);
        FreezeRecord r = node("store");
        assertThat(r.by()).as("who asked, as a push's by").isEqualTo(HistoryRecord.BY_ANONYMOUS + " from 127.0.0.1");
        assertThat(r.reason()).isEqualTo("release weekend");
        assertThat(r.since()).isBetween(before.minusSeconds(1), Instant.now());
        assertThat(Duration.between(r.since(), r.until())).isEqualTo(Duration.ofHours(2));
        // One line of JSON, the four fields in SPEC's order.
        String data = new String(fx.zk.client().getData().forPath(fx.zk.paths().freeze("store")), StandardCharsets.UTF_8);
        assertThat(data).startsWith("{\"by\":").contains("\"reason\":").doesNotContain("\n");

        Answer all = freeze("{\"all\":true,\"until\":\"" + LATER + "\",\"reason\":\"year end\"}");
        assertThat(all.status()).as(all.body()).isEqualTo(201);
        assertThat(node(FreezeRecord.ALL).until()).isEqualTo(Instant.parse(LATER));

        JsonNode list = fx.api.get("/v1/freezes").json().path("freezes");
        assertThat(list).hasSize(2);
        assertThat(list.get(0).path("all").asBoolean()).as("_all first").isTrue();
        assertThat(list.get(1).path("module").asText()).isEqualTo("store");
        assertThat(list.get(1).path("active").asBoolean()).isTrue();

        // Freezing again replaces the freeze (a new reason, a new end), and the answer names the one it replaced.
        Answer again = freeze("{\"module\":\"store\",\"for\":\"30m\",\"reason\":\"extended\"}");
        assertThat(again.status()).isEqualTo(201);
        assertThat(again.json().path("replaced").path("reason").asText()).isEqualTo("release weekend");
        assertThat(node("store").reason()).isEqualTo("extended");

        // A module never pushed is refused (a typo would leave the module meant unfrozen); so is an end past 366 days.
        Answer typo = freeze("{\"module\":\"stroe\",\"for\":\"1h\",\"reason\":\"typo\"}");
        assertThat(typo.status()).isEqualTo(404);
        assertThat(typo.json().path("field").asText()).isEqualTo("module");
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().freeze("stroe"))).isNull();
        Answer far = freeze("{\"module\":\"store\",\"until\":\"+1000000000-12-31T23:59:59Z\",\"reason\":\"far\"}");
        assertThat(far.status()).as(far.body()).isEqualTo(400);
        assertThat(far.json().path("field").asText()).isEqualTo("until");
        assertThat(node("store").reason()).as("nothing written").isEqualTo("extended");

        assertThat(fx.api.method("DELETE", "/v1/freezes/store").status()).isEqualTo(200);
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().freeze("store"))).isNull();
        assertThat(fx.api.method("DELETE", "/v1/freezes/store").status()).as("thawed already").isEqualTo(404);
        assertThat(fx.api.method("DELETE", "/v1/freezes/_all").status()).isEqualTo(200);
        assertThat(fx.api.get("/v1/freezes").json().path("freezes")).isEmpty();
        assertThat(fx.api.method("DELETE", "/v1/freezes/No_Such!").status()).as("not a module name").isEqualTo(400);
        assertThat(fx.api.method("PUT", "/v1/freezes").status()).isEqualTo(405);
    }

    @Test
    void aBadBodyIsRefusedNamingTheFieldAndWritesNothing() throws Exception {
        Map<String, String> cases = new java.util.LinkedHashMap<>();
        cases.put("not json", "body");
        cases.put("[1]", "body");
        cases.put("{\"for\":\"2h\",\"reason\":\"r\"}", "module");
        cases.put("{\"module\":\"store\",\"all\":true,\"for\":\"2h\",\"reason\":\"r\"}", "module");
        cases.put("{\"all\":false,\"for\":\"2h\",\"reason\":\"r\"}", "all");
        cases.put("{\"module\":\"Store!\",\"for\":\"2h\",\"reason\":\"r\"}", "module");
        cases.put("{\"module\":\"store\",\"reason\":\"r\"}", "for");
        cases.put("{\"module\":\"store\",\"for\":\"2h\",\"until\":\"" + LATER + "\",\"reason\":\"r\"}", "until");
        cases.put("{\"module\":\"store\",\"for\":\"two hours\",\"reason\":\"r\"}", "for");
        cases.put("{\"module\":\"store\",\"for\":\"0s\",\"reason\":\"r\"}", "for");
        cases.put("{\"module\":\"store\",\"for\":7200,\"reason\":\"r\"}", "for");
        cases.put("{\"module\":\"store\",\"until\":\"tomorrow\",\"reason\":\"r\"}", "until");
        cases.put("{\"module\":\"store\",\"until\":\"2001-01-01T00:00:00Z\",\"reason\":\"r\"}", "until");
        cases.put("{\"module\":\"store\",\"for\":\"2h\"}", "reason");
        cases.put("{\"module\":\"store\",\"for\":\"2h\",\"reason\":\"  \"}", "reason");
        cases.put("{\"module\":\"store\",\"for\":\"2h\",\"reason\":\"a\\nb\"}", "reason");
        cases.put("{\"module\":\"store\",\"for\":\"2h\",\"reason\":\"r\",\"hosts\":[\"a\"]}", "hosts");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            Answer a = freeze(c.getKey());
            assertThat(a.status()).as(c.getKey() + " -> " + a.body()).isEqualTo(400);
            assertThat(a.json().path("field").asText()).as(c.getKey() + " -> " + a.body()).isEqualTo(c.getValue());
            assertThat(a.json().path("error").asText()).as("the message names the field").contains(c.getValue().equals("body") ? "JSON" : c.getValue());
        }
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().freezes())).as("nothing written").isNull();
    }

    /**
     * SPEC.md "Freezes", decision 14: an apply that holds the module lock when the freeze is written still lands what it
     * has begun, so the answer names it ({@code applying}); a window holding another lock is no apply, and the freeze of
     * every module names the applies of every module.
     */
    @Test
    void theAnswerNamesTheAppliesUnderWay() throws Exception {
        Instant since = Instant.parse("2026-12-01T10:00:00Z");
        InterProcessMutex apply = holder("store", "host-a", new LockHolder("host-a", 42, "mesh-agent run", LockHolder.APPLY, since));
        InterProcessMutex window = holder("cache", "host-b", new LockHolder("host-b", 43, "mesh-agent run", LockHolder.windowPurpose("gc"), since));
        assertThat(apply.acquire(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(window.acquire(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        try {
            Answer a = freeze("{\"module\":\"store\",\"for\":\"2h\",\"reason\":\"r\"}");
            assertThat(a.status()).as(a.body()).isEqualTo(201);
            assertThat(a.json().path("applying")).as(a.body()).hasSize(1);
            JsonNode one = a.json().path("applying").get(0);
            assertThat(one.path("module").asText()).isEqualTo("store");
            assertThat(one.path("host").asText()).isEqualTo("host-a");
            assertThat(one.path("since").asText()).isEqualTo(since.toString());
            assertThat(one.path("process").asText()).isEqualTo("mesh-agent run");

            Answer all = freeze("{\"all\":true,\"for\":\"2h\",\"reason\":\"r\"}");
            assertThat(all.json().path("applying")).as(all.body()).hasSize(1);
            assertThat(all.json().path("applying").get(0).path("module").asText()).isEqualTo("store");
        } finally {
            apply.release();
            window.release();
        }
        Answer none = freeze("{\"module\":\"store\",\"for\":\"1h\",\"reason\":\"r\"}");
        assertThat(none.json().has("applying")).as("no apply under way: no applying").isFalse();
    }

    /** A module lock whose child says {@code who}, as the agent's {@code ModuleLock} writes it. */
    private static InterProcessMutex holder(String module, String host, LockHolder who) {
        return new InterProcessMutex(fx.zk.client(), fx.zk.paths().lock(module, host)) {
            @Override
            protected byte[] getLockNodeBytes() { return Json.bytes(who); }
        };
    }

    /** A recurring freeze's body (decision 37): each refusal names its field and the fix. */
    @Test
    void aRecurringFreezeIsCheckedWhole() throws Exception {
        Instant now = Instant.parse("2026-12-01T10:00:00Z");
        FreezeRequest r = FreezeRequest.parse(Json.MAPPER.readTree(
                "{\"module\":\"store\",\"cron\":\"0 18 * * 5\",\"for\":\"14h\",\"timezone\":\"Europe/Berlin\",\"reason\":\"weekends\"}"), now);
        assertThat(r).isEqualTo(new FreezeRequest("store", "weekends", null, "0 18 * * 5", "Europe/Berlin", "14h"));
        assertThat(r.record("alice", now)).isEqualTo(new FreezeRecord("alice", "weekends", now, null, "0 18 * * 5", "Europe/Berlin", "14h"));
        java.util.Map<String, String> refused = new java.util.LinkedHashMap<>();
        refused.put("{\"module\":\"store\",\"cron\":\"0 18 * * 5\",\"reason\":\"r\"}", "for: missing");
        refused.put("{\"module\":\"store\",\"cron\":\"0 18 * *\",\"for\":\"1h\",\"reason\":\"r\"}", "cron: '0 18 * *' is not a 5-field");
        refused.put("{\"module\":\"store\",\"cron\":\"0 25 * * *\",\"for\":\"1h\",\"reason\":\"r\"}", "cron: '0 25 * * *' is not a valid");
        refused.put("{\"module\":\"store\",\"cron\":\"0 * * * *\",\"for\":\"1h\",\"reason\":\"r\"}", "for: 1h is as long as the shortest gap");
        refused.put("{\"module\":\"store\",\"cron\":\"0 18 * * 5\",\"for\":\"1h\",\"timezone\":\"Mars/Base\",\"reason\":\"r\"}", "timezone: 'Mars/Base'");
        refused.put("{\"module\":\"store\",\"for\":\"1h\",\"timezone\":\"UTC\",\"reason\":\"r\"}", "timezone: only a recurring freeze");
        refused.put("{\"module\":\"store\",\"cron\":\"0 18 * * 5\",\"for\":\"1h\",\"until\":\"2026-11-01T00:00:00Z\",\"reason\":\"r\"}", "until: 2026-11-01T00:00:00Z has passed");
        refused.put("{\"module\":\"store\",\"cron\":\"0 0 30 2 *\",\"for\":\"1h\",\"reason\":\"r\"}", "cron: '0 0 30 2 *' has no time to come");
        refused.put("{\"module\":\"store\",\"cron\":\"* * * * *\",\"for\":\"56s\",\"reason\":\"r\"}", "for: 56s is as long as the shortest gap");
        refused.put("{\"module\":\"store\",\"cron\":\"0 2 * * *\",\"for\":\"1h\",\"until\":\"2026-12-01T10:01:00Z\",\"reason\":\"r\"}",
                "until: 2026-12-01T10:01:00Z comes before the first start");
        for (java.util.Map.Entry<String, String> e : refused.entrySet()) {
            assertThatThrownBy(() -> FreezeRequest.parse(Json.MAPPER.readTree(e.getKey()), now)).as(e.getKey()).hasMessageContaining(e.getValue());
        }
    }

    @Test
    void theParserTakesEitherFormAndNamesTheFix() throws Exception {
        Instant now = Instant.parse("2026-12-01T10:00:00Z");
        FreezeRequest r = FreezeRequest.parse(Json.MAPPER.readTree("{\"module\":\"store\",\"for\":\"1h30m\",\"reason\":\" weekend \"}"), now);
        assertThat(r).isEqualTo(new FreezeRequest("store", "weekend", Instant.parse("2026-12-01T11:30:00Z"), null, null, null));
        FreezeRequest all = FreezeRequest.parse(Json.MAPPER.readTree("{\"all\":true,\"until\":\"2026-12-02T00:00:00Z\",\"reason\":\"r\"}"), now);
        assertThat(all.target()).isEqualTo(FreezeRecord.ALL);
        assertThat(all.record("token", now)).isEqualTo(new FreezeRecord("token", "r", now, Instant.parse("2026-12-02T00:00:00Z")));
        assertThatThrownBy(() -> FreezeRequest.parse(Json.MAPPER.readTree("{\"module\":\"store\",\"for\":\"90\",\"reason\":\"r\"}"), now))
                .hasMessageContaining("90s, 30m or 1h30m");
    }

    @Test
    void withATokenAFreezeAndAThawNeedIt() throws Exception {
        fx.api.restart(BearerToken.of("s3cret"), null);
        Answer a = freeze("{\"module\":\"store\",\"for\":\"2h\",\"reason\":\"r\"}");
        assertThat(a.status()).isEqualTo(401);
        assertThat(fx.api.method("DELETE", "/v1/freezes/store").status()).isEqualTo(401);
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().freezes())).isNull();
        Answer ok = fx.api.post("/v1/freezes", "{\"module\":\"store\",\"for\":\"2h\",\"reason\":\"r\"}".getBytes(StandardCharsets.UTF_8),
                Map.of("Authorization", "Bearer s3cret"));
        assertThat(ok.status()).as(ok.body()).isEqualTo(201);
        assertThat(node("store").by()).isEqualTo(HistoryRecord.BY_TOKEN + " from 127.0.0.1");
    }

    /** Freezes and thaws of one module at once: each answered 201, 200, 404 or 409, never a 500 (an attacker's find). */
    @Test
    void freezesAndThawsAtOnceAreNeverAnInternalError() throws Exception {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        try {
            List<java.util.concurrent.Future<Integer>> all = new java.util.ArrayList<>();
            for (int i = 0; i < 40; i++) {
                all.add(pool.submit(() -> freeze("{\"module\":\"store\",\"for\":\"1h\",\"reason\":\"race\"}").status()));
                all.add(pool.submit(() -> fx.api.method("DELETE", "/v1/freezes/store").status()));
            }
            // 409: the node moved under a request again and again (it says so, naming the fix); never a 500
            for (java.util.concurrent.Future<Integer> f : all) assertThat(f.get()).isIn(200, 201, 404, 409);
        } finally {
            pool.shutdownNow();
        }
    }

    /** A thaw of a one-span freeze past its until deletes its node and says it had ended: no second freeze.ended. */
    @Test
    void aThawOfAFreezeThatHadEndedSaysSoAndAnnouncesNoSecondEnd() throws Exception {
        Instant now = Instant.now();
        fx.zk.client().create().orSetData().creatingParentsIfNeeded().forPath(fx.zk.paths().freeze("store"),
                Json.bytes(new FreezeRecord("alice", "short", now.minusSeconds(60), now.minusSeconds(30))));
        Answer a = fx.api.method("DELETE", "/v1/freezes/store");
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        assertThat(a.json().path("ended").asText()).isEqualTo(now.minusSeconds(30).toString());
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().freeze("store"))).isNull();
        String events = fx.zk.paths().events(io.mesh.wire.ZkPaths.COORDINATOR_EVENTS);
        List<String> thawed = new java.util.ArrayList<>();
        if (fx.zk.client().checkExists().forPath(events) != null) {
            for (String n : fx.zk.client().getChildren().forPath(events)) {
                io.mesh.wire.MeshEvent e = Json.read(fx.zk.client().getData().forPath(events + "/" + n), io.mesh.wire.MeshEvent.class);
                if (e.type() == io.mesh.wire.EventType.FREEZE_ENDED && "thawed".equals(e.reason()) && "store".equals(e.module())
                        && !e.time().isBefore(now)) thawed.add(n);
            }
        }
        assertThat(thawed).as("no freeze.ended written by the thaw").isEmpty();
    }
}
