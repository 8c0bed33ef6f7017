package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.agent.AuditRequests;
import io.mesh.coordinator.CoordinatorExtension;
import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.coordinator.Manifests;
import io.mesh.ledger.LedgerSource;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.AuditAnswer;
import io.mesh.wire.AuditPage;
import io.mesh.wire.AuditRequest;
import io.mesh.wire.AuditState;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code mesh audit} and {@code GET /v1/audit} end to end through a real ZooKeeper (SPEC.md "Audit", decision 28): the
 * coordinator writes the request, real {@link AuditRequests} answer for host-a and host-b from ledgers planted here (a
 * fixture of the transport: the ledger itself is the agent's), the coordinator judges them with the one checker, and
 * the client prints and exits as SPEC says. host-c has an agent node and nothing that answers for it.
 */
@Tag("slow") // a coordinator, agents and a dozen audits through ZooKeeper (46 s): the full run, not --fast
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class AuditCommandTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    /** host-a's and host-b's ledgers: what each fixture {@link LedgerSource} returns. */
    final List<LedgerEntry> ledgerA = new CopyOnWriteArrayList<>();
    final List<LedgerEntry> ledgerB = new CopyOnWriteArrayList<>();
    final List<AuditRequests> agents = new ArrayList<>();
    /** Half an hour ago, to the second: every window here has ended more than 60 s before now. */
    final Instant t0 = Instant.now().minus(Duration.ofMinutes(30)).truncatedTo(ChronoUnit.SECONDS);

    @BeforeEach
    void fleet() throws Exception {
        assertThat(fx.api.push(Manifests.TWO).status()).isEqualTo(202);
        for (String h : List.of("host-a", "host-b", "host-c")) {
            fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                    .forPath(fx.zk.paths().agent(h), Json.bytes(new AgentRecord(h, "0.1.0", 4242, Times.now())));
        }
        agents.add(answering("host-a", (from, to, modules) -> List.copyOf(ledgerA)));
        agents.add(answering("host-b", (from, to, modules) -> List.copyOf(ledgerB)));
    }

    AuditRequests answering(String host, LedgerSource ledger) {
        AuditRequests r = new AuditRequests(fx.zk.client(), fx.zk.paths(), host, ledger, Clock.systemUTC());
        r.start();
        return r;
    }

    @AfterEach
    void stop() {
        agents.forEach(AuditRequests::close);
    }

    ClientRun mesh(String... args) { return ClientRun.of(fx.api.uri().toString(), args); }

    /** A window w-1 of store's gc that stops store-registry and starts it again, each call with its Docker events. */
    void cleanWindow(List<LedgerEntry> ledger) {
        ProcessRef p = new ProcessRef(4242, "mesh-agent window");
        ledger.add(LedgerEntry.held(LedgerKind.HELD_OPEN, t0, "store", "store-registry", "c0ffee0123456789", LedgerEntry.WINDOW, "w-1", "gc", null, null, null));
        ledger.add(LedgerEntry.call(t0.plusSeconds(1), "store", "store-registry", "c0ffee0123456789", "stop", "window:gc", "w-1", "gc", p)
                .ended(t0.plusSeconds(3), null, null));
        ledger.add(LedgerEntry.event(t0.plusSeconds(2), "store", "store-registry", "c0ffee0123456789", "kill", null, null));
        ledger.add(LedgerEntry.event(t0.plusSeconds(2), "store", "store-registry", "c0ffee0123456789", "die", null, "0"));
        ledger.add(LedgerEntry.event(t0.plusSeconds(2), "store", "store-registry", "c0ffee0123456789", "stop", null, null));
        ledger.add(LedgerEntry.call(t0.plusSeconds(20), "store", "store-registry", "c0ffee0123456789", "start", "window:gc", "w-1", "gc", p)
                .ended(t0.plusSeconds(21), null, null));
        ledger.add(LedgerEntry.event(t0.plusSeconds(20), "store", "store-registry", "c0ffee0123456789", "start", null, null));
        ledger.add(LedgerEntry.held(LedgerKind.HELD_CLOSE, t0.plusSeconds(22), "store", "store-registry", "c0ffee0123456789", LedgerEntry.WINDOW, "w-1", "gc", null, null, null));
    }

    @Test
    void aCleanWindowIsListedWithItsStopsAndStartsAndExitsZero() throws Exception {
        cleanWindow(ledgerA);
        ClientRun r = mesh("audit", "--host", "host-a", "--since", "1h");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("host-a", "window", "w-1", "module store", "containers store-registry", "stops 1 starts 1", "OK", "no violations");

        ClientRun json = mesh("audit", "--host", "host-a", "--since", "1h", "--json");
        assertThat(json.code()).as(json.toString()).isZero();
        JsonNode body = Json.MAPPER.readTree(json.out());
        assertThat(body.path("exit").asInt()).isZero();
        JsonNode item = body.path("hosts").get(0).path("items").get(0);
        assertThat(item.path("type").asText()).isEqualTo("window");
        assertThat(item.path("stops").asInt()).isEqualTo(1);
        assertThat(item.path("starts").asInt()).isEqualTo(1);
        assertThat(item.path("status").asText()).isEqualTo("ok");
        // The request and its answers are gone once judged.
        assertThat(fx.zk.client().getChildren().forPath(fx.zk.paths().audits())).isEmpty();
    }

    @Test
    void aStartWithNoCallWhileHeldIsTouchedWhileHeldAndOutsideMeshAndExitsOne() throws Exception {
        ledgerA.add(LedgerEntry.held(LedgerKind.HELD_OPEN, t0, "store", "store-registry", "c0ffee0123456789", LedgerEntry.OPERATOR, null, null,
                "alice", "disk swap", null));
        ledgerA.add(LedgerEntry.event(t0.plusSeconds(60), "store", "store-registry", "c0ffee0123456789", "start", null, null));

        ClientRun r = mesh("audit", "--since", "1h", "--host", "host-a");
        assertThat(r.code()).as(r.toString()).isEqualTo(1);
        assertThat(r.out()).contains("touched-while-held", "outside-mesh", "store-registry", "evidence: event start store-registry c0ffee012345");

        CoordinatorExtension.Answer a = fx.api.get("/v1/audit?since=1h&host=host-a");
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        assertThat(a.json().path("exit").asInt()).isEqualTo(1);
        List<String> kinds = new ArrayList<>();
        a.json().path("hosts").get(0).path("violations").forEach(v -> kinds.add(v.path("kind").asText()));
        assertThat(kinds).containsExactlyInAnyOrder("touched-while-held", "outside-mesh");
    }

    @Test
    void aGapIsExitThree() {
        cleanWindow(ledgerA);
        ledgerA.add(LedgerEntry.gap(t0.plusSeconds(100), t0.plusSeconds(200), "the engine restarted (dockerd's buffer did not reach back)"));
        ClientRun r = mesh("audit", "--since", "1h", "--host", "host-a");
        assertThat(r.code()).as(r.toString()).isEqualTo(3);
        assertThat(r.out()).contains("gap", "the engine restarted");
    }

    @Test
    void aHostThatDoesNotAnswerIsNamedAndExitsThree() throws Exception {
        cleanWindow(ledgerA);
        ClientRun r = mesh("audit", "--since", "1h", "--timeout", "2s");
        assertThat(r.code()).as(r.toString()).isEqualTo(3);
        assertThat(r.out()).contains("host-a", "host-b", "host-c: NO LEDGER: did not answer within 2s");

        // The default wait is 10 s, and says so.
        CoordinatorExtension.Answer a = fx.api.get("/v1/audit?since=1h&host=host-c");
        assertThat(a.status()).as(a.body()).isEqualTo(200);
        assertThat(a.json().path("exit").asInt()).isEqualTo(3);
        assertThat(a.json().path("hosts").get(0).path("error").asText()).startsWith("did not answer within 10s");
        assertThat(fx.zk.client().getChildren().forPath(fx.zk.paths().audits())).isEmpty();
    }

    @Test
    void anAgentWithoutALedgerAnswersFailedAndExitsThree() {
        agents.add(answering("host-c", null));
        ClientRun r = mesh("audit", "--since", "1h", "--host", "host-c");
        assertThat(r.code()).as(r.toString()).isEqualTo(3);
        assertThat(r.out()).contains("host-c: NO LEDGER: no ledger");
    }

    @Test
    void badInputIsExitTwoNamingTheField() throws Exception {
        ClientRun r = mesh("audit", "--since", "yesterday");
        assertThat(r.code()).as(r.toString()).isEqualTo(2);
        assertThat(r.err()).contains("--since", "'yesterday' is neither a duration nor a time", "such as 1h or 24h");

        assertThat(field(fx.api.get("/v1/audit?since=yesterday"))).isEqualTo("since");
        assertThat(field(fx.api.get("/v1/audit?until=noon"))).isEqualTo("until");
        String future = URLEncoder.encode(Instant.now().plus(Duration.ofHours(1)).toString(), StandardCharsets.UTF_8);
        assertThat(field(fx.api.get("/v1/audit?since=" + future))).isEqualTo("since");
        String until = URLEncoder.encode(Instant.now().minus(Duration.ofHours(2)).toString(), StandardCharsets.UTF_8);
        CoordinatorExtension.Answer after = fx.api.get("/v1/audit?since=1h&until=" + until);
        assertThat(field(after)).isEqualTo("since");
        assertThat(after.body()).contains("is after until");
        CoordinatorExtension.Answer host = fx.api.get("/v1/audit?host=host-z");
        assertThat(field(host)).isEqualTo("host");
        assertThat(host.body()).contains("no host host-z is known");
        CoordinatorExtension.Answer module = fx.api.get("/v1/audit?module=nope");
        assertThat(field(module)).isEqualTo("module");
        assertThat(module.body()).contains("no module nope was pushed");
        ClientRun m = mesh("audit", "--module", "nope");
        assertThat(m.code()).as(m.toString()).isEqualTo(2);
        assertThat(m.err()).contains("--module", "no module nope was pushed");
        // nothing was asked of the hosts
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().audits())).isNull();
        // a module removed since keeps its push history, and its lines in the ledgers: it is audited
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().history("gone"));
        CoordinatorExtension.Answer gone = fx.api.get("/v1/audit?module=gone&timeout=1s");
        assertThat(gone.status()).as(gone.body()).isEqualTo(200);
    }

    static String field(CoordinatorExtension.Answer a) {
        assertThat(a.status()).as(a.body()).isEqualTo(400);
        return a.json().path("errors").get(0).path("field").asText();
    }

    @Test
    void aLargeLedgerTravelsInPagesOfAtMost512KiBAndIsJudgedWhole() throws Exception {
        String pad = "x".repeat(600);
        for (int i = 0; i < 2500; i++) ledgerB.add(LedgerEntry.follow(t0.plusMillis(i), "line " + i + " " + pad));
        cleanWindow(ledgerB);

        // The transport by hand: the agent's pages under its node, each at most 512 KiB, and all of them together.
        String audit = "audit-0000000000";
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().audit(audit), Json.bytes(new AuditRequest(audit,
                t0.minusSeconds(10), Instant.now(), null, List.of("host-b"), Times.now(), ProcessRef.current("test"))));
        fx.zk.client().create().forPath(fx.zk.paths().audit(audit, "host-b"), Json.bytes(AuditAnswer.pending(audit, "host-b")));
        await().atMost(Duration.ofSeconds(20)).until(() -> Json.read(fx.zk.client().getData().forPath(fx.zk.paths().audit(audit, "host-b")),
                AuditAnswer.class).state() == AuditState.ANSWERED);
        AuditAnswer answer = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().audit(audit, "host-b")), AuditAnswer.class);
        assertThat(answer.pages()).isGreaterThanOrEqualTo(3);
        List<AuditPage> pages = new ArrayList<>();
        for (int i = 0; i < answer.pages(); i++) {
            byte[] data = fx.zk.client().getData().forPath(fx.zk.paths().auditPage(audit, "host-b", i));
            assertThat(data.length).isLessThanOrEqualTo(AuditPage.MAX_BYTES);
            pages.add(Json.read(data, AuditPage.class));
        }
        assertThat(AuditPage.join(pages)).containsExactlyElementsOf(ledgerB);
        fx.zk.client().delete().deletingChildrenIfNeeded().forPath(fx.zk.paths().audit(audit));

        // And through the coordinator: the window after 2,500 lines is found.
        ClientRun r = mesh("audit", "--since", "1h", "--host", "host-b");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("w-1", "stops 1 starts 1");
    }

    @Test
    void anOldRequestIsNotAnswered() throws Exception {
        String audit = "audit-0000000000";
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().audit(audit), Json.bytes(new AuditRequest(audit,
                t0, Instant.now(), null, List.of("host-a"), Instant.now().minus(Duration.ofMinutes(6)), ProcessRef.current("test"))));
        fx.zk.client().create().forPath(fx.zk.paths().audit(audit, "host-a"), Json.bytes(AuditAnswer.pending(audit, "host-a")));
        // a young request written after it is answered: the old one was looked at before it, on the same thread
        String young = "audit-0000000002";
        fx.zk.client().create().forPath(fx.zk.paths().audit(young), Json.bytes(new AuditRequest(young,
                t0, Instant.now(), null, List.of("host-a"), Times.now(), ProcessRef.current("test"))));
        fx.zk.client().create().forPath(fx.zk.paths().audit(young, "host-a"), Json.bytes(AuditAnswer.pending(young, "host-a")));
        await().atMost(Duration.ofSeconds(10)).until(() -> Json.read(fx.zk.client().getData().forPath(fx.zk.paths().audit(young, "host-a")),
                AuditAnswer.class).state() == AuditState.ANSWERED);
        assertThat(Json.read(fx.zk.client().getData().forPath(fx.zk.paths().audit(audit, "host-a")), AuditAnswer.class).state())
                .isEqualTo(AuditState.PENDING);
    }

    @Test
    void whyNamesTheOperatorHoldTheDeferredPushTheFreezeAndTodaysViolation() throws Exception {
        CoordinatorExtension.Answer hold = fx.api.post("/v1/holds", "{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"disk swap\",\"for\":\"2h\"}"
                .getBytes(StandardCharsets.UTF_8), java.util.Map.of("Content-Type", "application/json", "X-Mesh-User", "alice"));
        assertThat(hold.status()).as(hold.body()).isEqualTo(201);
        Instant at = Times.now().minusSeconds(30);
        io.mesh.wire.ApplyReport deferred = new io.mesh.wire.ApplyReport("host-a", "store", "r2", "push-0000000001", io.mesh.wire.ApplyOutcome.DEFERRED,
                at, at.plusSeconds(1), new io.mesh.wire.ApplyReport.WindowRef("gc", "w-9", at.minusSeconds(60), List.of("store-registry")),
                List.of(new io.mesh.wire.ApplyReport.ContainerResult("registry", "store-registry", io.mesh.wire.ContainerAction.HELD,
                        List.of("held by operator alice from 127.0.0.1"), "c0ffee0123456789")), null, null, null, null);
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().report("host-a", "store"), Json.bytes(deferred));
        CoordinatorExtension.Answer freeze = fx.api.post("/v1/freezes", "{\"module\":\"store\",\"for\":\"1h\",\"reason\":\"release weekend\"}"
                .getBytes(StandardCharsets.UTF_8), java.util.Map.of("Content-Type", "application/json"));
        assertThat(freeze.status()).as(freeze.body()).isEqualTo(201);
        Instant touched = Instant.now().minusSeconds(20);
        ledgerA.add(LedgerEntry.held(LedgerKind.HELD_OPEN, touched.minusSeconds(5), "store", "store-registry", "c0ffee0123456789", LedgerEntry.OPERATOR,
                null, null, "alice", "disk swap", null));
        ledgerA.add(LedgerEntry.event(touched, "store", "store-registry", "c0ffee0123456789", "start", null, null));

        ClientRun r = mesh("why", "host-a", "store-registry");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("store-registry on host-a (module store): held by operator");
        List<String> lines = r.out().lines().map(String::strip).toList();
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("held-by-operator").contains("alice", "disk swap", "until "));
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("deferred").contains("push push-0000000001 (revision r2) deferred behind window w-9 of schedule gc"));
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("freeze").contains("module store frozen by", "release weekend"));
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("last-apply").contains("deferred", "store-registry held: held by operator alice"));
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("audit-violation").contains("touched-while-held"));
        // the chain's order: the hold, then what waits behind it
        assertThat(lines.indexOf(lines.stream().filter(l -> l.startsWith("held-by-operator")).findFirst().orElseThrow()))
                .isLessThan(lines.indexOf(lines.stream().filter(l -> l.startsWith("deferred")).findFirst().orElseThrow()));

        CoordinatorExtension.Answer j = fx.api.get("/v1/why/host-a/store-registry");
        assertThat(j.status()).as(j.body()).isEqualTo(200);
        assertThat(j.json().path("chain").get(0).path("reason").asText()).isEqualTo("held-by-operator");

        ClientRun noContainer = mesh("why", "host-a", "store-nope");
        assertThat(noContainer.code()).as(noContainer.toString()).isEqualTo(2);
        assertThat(noContainer.err()).contains("no container store-nope on host host-a", "<module>-<name>");
        ClientRun noHost = mesh("why", "host-z", "store-registry");
        assertThat(noHost.code()).as(noHost.toString()).isEqualTo(2);
        assertThat(noHost.err()).contains("no host host-z is known");
    }

    @Test
    void whySaysWhenTheHostsLedgerDoesNotAnswer() throws Exception {
        io.mesh.wire.ApplyReport applied = new io.mesh.wire.ApplyReport("host-c", "web", "r1", "push-0000000000", io.mesh.wire.ApplyOutcome.APPLIED,
                Times.now(), Times.now(), null, List.of(new io.mesh.wire.ApplyReport.ContainerResult("app", "web-app", io.mesh.wire.ContainerAction.UNCHANGED,
                List.of(), "9c1d")), null, null, null, null);
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().report("host-c", "web"), Json.bytes(applied));
        ClientRun r = mesh("why", "host-c", "web-app");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("last-apply", "web-app unchanged", "the host's ledger was not read: did not answer within 5s");
    }

    /** Decision 35: what the gate of the module's last window answered is a link of the chain. */
    @Test
    void whySaysWhatTheLastWindowsGateAnswered() throws Exception {
        io.mesh.wire.WindowResult skipped = io.mesh.wire.WindowResult.skipped("nightly", "w-7", Times.now(),
                "gate blocked (on-blocked: skip): blocked: vector(1) answered 1 series").withGate("blocked: vector(1) answered 1 series, such as {}");
        io.mesh.wire.ApplyReport applied = new io.mesh.wire.ApplyReport("host-c", "web", "r1", "push-0000000000", io.mesh.wire.ApplyOutcome.APPLIED,
                Times.now(), Times.now(), null, List.of(new io.mesh.wire.ApplyReport.ContainerResult("app", "web-app", io.mesh.wire.ContainerAction.UNCHANGED,
                List.of(), "9c1d")), null, skipped, null, null);
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().report("host-c", "web"), Json.bytes(applied));
        ClientRun r = mesh("why", "host-c", "web-app");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out().lines().map(String::strip).toList()).anySatisfy(l -> assertThat(l).startsWith("gate")
                .contains("last window w-7 of schedule nightly (skipped): its gate blocked: vector(1) answered 1 series"));
    }

    @Test
    void aFifthAuditAtOnceIsAnswered503AndTheOthersFinish() throws Exception {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(io.mesh.coordinator.HttpApi.MAX_AUDITS);
        try {
            List<java.util.concurrent.Future<CoordinatorExtension.Answer>> waiting = new ArrayList<>();
            for (int i = 0; i < io.mesh.coordinator.HttpApi.MAX_AUDITS; i++) {
                waiting.add(pool.submit(() -> fx.api.get("/v1/audit?since=1h&host=host-c&timeout=4s")));
            }
            Thread.sleep(1500); // host-c never answers: each of those waits 4 s
            CoordinatorExtension.Answer fifth = fx.api.get("/v1/audit?since=1h&host=host-a");
            assertThat(fifth.status()).as(fifth.body()).isEqualTo(503);
            assertThat(fifth.body()).contains("audits are waiting for their hosts");
            for (var f : waiting) {
                CoordinatorExtension.Answer a = f.get(30, TimeUnit.SECONDS);
                assertThat(a.status()).as(a.body()).isEqualTo(200);
                assertThat(a.json().path("exit").asInt()).isEqualTo(3);
            }
            assertThat(fx.api.get("/v1/audit?since=1h&host=host-a").status()).as("served again").isEqualTo(200);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void whyNamesTheRolloutWaveAndTheSlotQueueOfAContainerFoundByTheDesiredModule() throws Exception {
        CoordinatorExtension.Answer push = fx.api.push(Manifests.web("[host-a, host-b]").replace("containers:", "rollout: {canary: 1, max-parallel: 1}\ncontainers:"));
        assertThat(push.status()).as(push.body()).isEqualTo(202);
        String slot = fx.zk.paths().windowSlots("web", "nightly");
        io.mesh.wire.SlotRecord queued = new io.mesh.wire.SlotRecord("window-web-nightly", 1, "host-b", "web", "nightly", "w-5",
                io.mesh.wire.SlotState.WAITING, Times.now(), Times.now(), null, new ProcessRef(99, "mesh-agent run"));
        fx.zk.client().create().creatingParentsIfNeeded().forPath(io.mesh.wire.ZkPaths.slotQueue(slot) + "/q-0000000000", Json.bytes(queued));

        ClientRun r = mesh("why", "host-b", "web-app");
        assertThat(r.code()).as(r.toString()).isZero();
        List<String> lines = r.out().lines().map(String::strip).toList();
        assertThat(lines.get(0)).isEqualTo("web-app on host-b (module web): no report from host-b for module web yet");
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("rollout").contains("is rolling; this host waits for its wave (canaries host-a go first)"));
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("slot").contains("window w-5 of schedule nightly waits for slot window-web-nightly: position 1 of 1"));
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("audit ").contains("no audit violation on web-app since 00:00 UTC"));
    }
}
