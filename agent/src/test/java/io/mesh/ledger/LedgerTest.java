package io.mesh.ledger;

import io.mesh.agent.AgentMain;
import io.mesh.curator.HeldRegistry;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.TestPolicy;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.AuditChecker;
import io.mesh.wire.AuditReport;
import io.mesh.wire.AuditViolationKind;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import io.mesh.zk.MeshStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The ledger on a real Docker engine and a real ZooKeeper (decision 28; SPEC.md, "Audit"): what the daemon writes of
 * a window, of a {@code docker start} by hand of a held container, and of a {@code docker stop} by hand while the agent
 * was down, judged by {@link AuditChecker} as {@code mesh audit} judges it.
 */
@Tag("slow")
class LedgerTest {
    private static final String HOST = "host-a";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);
    private final DockerEngine docker = TestDocker.engine();
    private final String module = TestDocker.uniqueModule("lg");
    private final String app = module + "-app";

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    private String spec(int stepSeconds) {
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  app:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n    stop-timeout: 2s\n"
                + "schedules:\n  sweep:\n    cron: \"30 3 * * *\"\n    timezone: UTC\n    while-stopped: [app]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [sh, -c, \"sleep " + stepSeconds + "; echo swept\"]\n"
                + "    timeout: 1m\n";
    }

    private void applied(String revision) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            ApplyReport r = new MeshStore(zk.client(), zk.paths()).report(HOST, module);
            return r != null && r.outcome() == ApplyOutcome.APPLIED && revision.equals(r.revision());
        });
    }

    /** @return the ledger's lines of the module since {@code from}, once one passes {@code until} */
    private List<LedgerEntry> awaitLine(Instant from, Predicate<LedgerEntry> until) {
        LedgerFiles files = LedgerFiles.of(agent.stateDir());
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
            agent.daemon().ledger().ledger().flush(Duration.ofSeconds(2));
            return files.slice(from, Instant.now(), Set.of(module)).stream().anyMatch(until);
        });
        return files.slice(from, Instant.now(), Set.of(module));
    }

    private static Predicate<LedgerEntry> event(String id, String action) {
        return e -> e.kind() == LedgerKind.EVENT && id.equals(e.containerId()) && action.equals(e.action());
    }

    /** As {@code mesh audit} judges a span long after it: every window's left-stopped rule can be judged. */
    private AuditReport audit(List<LedgerEntry> lines, Instant from, Instant to) {
        return AuditChecker.check(HOST, lines, from, to, Set.of(module), Instant.now().plus(AuditChecker.LEFT_STOPPED_AFTER).plusSeconds(5));
    }

    @Test
    void aWindowReadsCleanWithOneStopAndOneStart() throws Exception {
        Instant t0 = Instant.now();
        zk.setDesired(spec(2), "r1");
        applied("r1");
        String id = docker.inspect(app).getId();
        WindowResult w = agent.daemon().runWindow(module, "sweep").get(90, TimeUnit.SECONDS);
        assertThat(w.outcome()).isEqualTo(WindowOutcome.SUCCEEDED);
        List<LedgerEntry> lines = awaitLine(t0, e -> event(id, "start").test(e) && e.at().isAfter(w.startedAt()));

        assertThat(lines).anyMatch(e -> e.kind() == LedgerKind.CALL && "stop".equals(e.action()) && id.equals(e.containerId())
                && "window:sweep".equals(e.cause()) && w.window().equals(e.window()) && e.end() != null);
        assertThat(lines).anyMatch(e -> e.kind() == LedgerKind.CALL && "create".equals(e.action()) && e.cause().startsWith("push-"));
        // the apply says when it began, before its first call: the freeze rule reads it
        LedgerEntry create = lines.stream().filter(e -> e.kind() == LedgerKind.CALL && "create".equals(e.action())).findFirst().orElseThrow();
        assertThat(lines).anyMatch(e -> e.kind() == LedgerKind.APPLY && create.cause().equals(e.cause()) && module.equals(e.module())
                && create.pid().equals(e.pid()) && !e.at().isAfter(create.at()));
        assertThat(lines).anyMatch(e -> e.kind() == LedgerKind.HELD_OPEN && w.window().equals(e.window()) && id.equals(e.containerId()));
        assertThat(lines).anyMatch(e -> e.kind() == LedgerKind.HELD_CLOSE && w.window().equals(e.window()));

        AuditReport r = audit(lines, t0, Instant.now());
        assertThat(r.violations()).as("violations: %s", r.violations()).isEmpty();
        AuditReport.Item item = r.items().stream().filter(i -> i.id().equals(w.window())).findFirst().orElseThrow();
        assertThat(item.type()).isEqualTo("window");
        assertThat(item.status()).isEqualTo("ok");
        assertThat(item.stops()).isEqualTo(1);
        assertThat(item.starts()).isEqualTo(1);
        assertThat(item.containers()).containsExactly(app);
        assertThat(r.items()).anyMatch(i -> i.type().equals("apply"));
    }

    @Test
    void aDockerStartByHandOfAHeldContainerIsTouchedWhileHeldAndOutsideMesh() throws Exception {
        Instant t0 = Instant.now();
        List<String> counted = new java.util.concurrent.CopyOnWriteArrayList<>();
        agent.daemon().ledger().onViolation((m, kind) -> counted.add(m + " " + kind));
        zk.setDesired(spec(10), "r1");
        applied("r1");
        String id = docker.inspect(app).getId();
        Future<WindowResult> window = agent.daemon().runWindow(module, "sweep");
        awaitLine(t0, event(id, "stop")); // the window stopped it: held now, for the step's 10 s
        Instant byHand = Instant.now();
        docker.client().startContainerCmd(id).exec();
        WindowResult w = window.get(90, TimeUnit.SECONDS);
        List<LedgerEntry> lines = awaitLine(t0, e -> event(id, "start").test(e) && e.at().isAfter(byHand.minusSeconds(1)));

        AuditReport r = audit(lines, t0, Instant.now());
        AuditReport.Violation touched = r.violations().stream().filter(v -> v.kind() == AuditViolationKind.TOUCHED_WHILE_HELD)
                .findFirst().orElseThrow(() -> new AssertionError("no touched-while-held in " + r.violations()));
        assertThat(touched.container()).isEqualTo(app);
        assertThat(touched.item()).isEqualTo(w.window());
        assertThat(touched.evidence().action()).isEqualTo("start");
        assertThat(touched.evidence().containerId()).isEqualTo(id);
        assertThat(touched.message()).contains("by no mesh call");
        assertThat(r.violations()).anyMatch(v -> v.kind() == AuditViolationKind.OUTSIDE_MESH && v.at().equals(touched.at())
                && v.evidence().equals(touched.evidence()));
        assertThat(r.items().stream().filter(i -> i.id().equals(w.window())).findFirst().orElseThrow().status()).isEqualTo("violations");

        // the daemon's continuous audit counts each once (mesh_audit_violations_total)
        agent.daemon().ledger().audit(Instant.now());
        agent.daemon().ledger().audit(Instant.now());
        assertThat(counted).contains(module + " outside-mesh");
        assertThat(counted.stream().filter(c -> c.equals(module + " touched-while-held"))).hasSize(1);
        // and writes each once into the host's outbox for webhooks: audit.violation (decision 34)
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(io.mesh.testing.Outboxes.events(zk, HOST)).filteredOn(e -> e.type() == io.mesh.wire.EventType.AUDIT_VIOLATION)
                        .extracting(io.mesh.wire.MeshEvent::reason).anyMatch(s -> s.startsWith("touched-while-held at "))
                        .anyMatch(s -> s.startsWith("outside-mesh at ")));
        assertThat(io.mesh.testing.Outboxes.events(zk, HOST)).filteredOn(e -> e.type() == io.mesh.wire.EventType.AUDIT_VIOLATION
                && e.reason().startsWith("touched-while-held")).singleElement().satisfies(e -> {
                    assertThat(e.module()).isEqualTo(module);
                    assertThat(e.container()).isEqualTo(app);
                    assertThat(e.host()).isEqualTo(HOST);
                });
    }

    @Test
    void aDockerStopWhileTheAgentWasDownIsReplayedNotAGap() throws Exception {
        Instant t0 = Instant.now();
        zk.setDesired(spec(2), "r1");
        applied("r1");
        String id = docker.inspect(app).getId();
        awaitLine(t0, event(id, "start"));
        agent.close();
        Instant stopped = Instant.now();
        docker.client().stopContainerCmd(id).withTimeout(2).exec(); // by hand, nobody following
        Thread.sleep(3000);
        agent.start(); // the same --state-dir, its anchor in ledger/cursor
        List<LedgerEntry> lines = awaitLine(t0, event(id, "stop"));

        assertThat(lines).noneMatch(e -> e.kind() == LedgerKind.GAP);
        List<LedgerEntry> follows = LedgerFiles.of(agent.stateDir()).all().stream().filter(e -> e.kind() == LedgerKind.FOLLOW).toList();
        assertThat(follows.get(0).reason()).startsWith("the ledger begins");
        assertThat(follows).anyMatch(f -> f.reason().contains("no event was missed"));
        AuditReport r = audit(lines, t0, Instant.now());
        assertThat(r.violations()).noneMatch(v -> v.kind() == AuditViolationKind.GAP);
        AuditReport.Violation outside = r.violations().stream()
                .filter(v -> v.kind() == AuditViolationKind.OUTSIDE_MESH && v.evidence().action().equals("stop")).findFirst()
                .orElseThrow(() -> new AssertionError("no outside-mesh stop in " + r.violations()));
        assertThat(outside.evidence().containerId()).isEqualTo(id);
        assertThat(outside.container()).isEqualTo(app);
        assertThat(outside.at()).isAfter(stopped.minusSeconds(1));
    }

    @Test
    void anOperatorHoldsStopAndAFreezeAreWrittenAndReadClean() throws Exception {
        Instant t0 = Instant.now();
        zk.setDesired(spec(2), "r1");
        applied("r1");
        String id = docker.inspect(app).getId();
        HeldRegistry.hold(zk.client(), zk.paths(), HeldRecord.operator(HOST, module, app, null, ProcessRef.current("mesh-coordinator (test)"),
                new HeldRecord.OperatorHold("alice", "disk swap OPS-12", Times.now(), null, Boolean.TRUE, null)));
        awaitLine(t0, event(id, "stop"));
        FreezeRecord f = new FreezeRecord("bob", "change freeze", Times.now(), Times.now().plusSeconds(3600));
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().freeze(module), Json.bytes(f));
        awaitLine(t0, e -> e.kind() == LedgerKind.FREEZE_OPEN);
        zk.client().delete().forPath(zk.paths().freeze(module));
        awaitLine(t0, e -> e.kind() == LedgerKind.FREEZE_CLOSE);
        HeldRegistry.release(zk.client(), zk.paths(), HOST, app);
        List<LedgerEntry> lines = awaitLine(t0, e -> e.kind() == LedgerKind.EVENT && app.equals(e.container()) && "start".equals(e.action())
                && lines(t0).stream().anyMatch(h -> h.kind() == LedgerKind.HELD_CLOSE) && e.at().isAfter(heldClose(t0)));

        assertThat(lines).anyMatch(e -> e.kind() == LedgerKind.HELD_OPEN && LedgerEntry.OPERATOR.equals(e.holder()) && "alice".equals(e.by()));
        assertThat(lines).anyMatch(e -> e.kind() == LedgerKind.CALL && "stop".equals(e.action()) && "hold".equals(e.cause()));
        assertThat(lines.stream().filter(e -> e.kind() == LedgerKind.FREEZE_OPEN)).hasSize(1);
        AuditReport r = audit(lines, t0, Instant.now());
        assertThat(r.violations()).as("violations: %s", r.violations()).isEmpty();
        AuditReport.Item hold = r.items().stream().filter(i -> i.type().equals("hold")).findFirst().orElseThrow();
        assertThat(hold.by()).isEqualTo("alice");
        assertThat(hold.stops()).isEqualTo(1);
        assertThat(hold.status()).isEqualTo("ok");
        assertThat(r.items()).anyMatch(i -> i.type().equals("freeze") && "bob".equals(i.by()) && "ok".equals(i.status()));
    }

    /**
     * A put-back (failure model row 35) inside an apply of a push is a repair, which a freeze lets through (SPEC.md
     * "Freezes"): its calls are recorded so, not as the push's, and the audit's freeze rule does not judge them as the
     * push's changes (the fleet history flagged a put-back's removes and rename, made while the agent recovered a dead
     * window's module, as {@code changed-while-frozen}).
     */
    @Test
    void aPutBackInAnApplyOfAPushIsRecordedAsARepair() throws Exception {
        Instant t0 = Instant.now();
        zk.setDesired(spec(2), "r1");
        applied("r1");
        String id = docker.inspect(app).getId();
        agent.close();
        // What a recreate cut after moving the old container aside leaves: it, stopped, under .mesh-prev.
        docker.client().stopContainerCmd(id).withTimeout(5).exec();
        docker.client().renameContainerCmd(id).withName(app + ".mesh-prev").exec();
        zk.setDesired(spec(2).replace("    stop-timeout: 2s\n", "    stop-timeout: 2s\n    env: {V: \"2\"}\n"), "r2");
        Instant t1 = Instant.now();
        agent.start();
        applied("r2");
        List<LedgerEntry> lines = awaitLine(t1, e -> e.kind() == LedgerKind.CALL && "create".equals(e.action()) && e.at().isAfter(t0)
                && e.cause() != null && e.cause().startsWith("push-"));

        List<LedgerEntry> putBack = lines.stream().filter(e -> e.kind() == LedgerKind.CALL && id.equals(e.containerId()) && e.at().isAfter(t1)
                && ("rename".equals(e.action()) || "start".equals(e.action())) && e.at().isBefore(
                lines.stream().filter(c -> c.kind() == LedgerKind.CALL && "create".equals(c.action())).reduce((a, b) -> b).orElseThrow().at())).toList();
        assertThat(putBack).as("the put-back's rename and start: %s", putBack).isNotEmpty()
                .allMatch(e -> CallCause.REPAIR.cause().equals(e.cause()));
        assertThat(lines).anyMatch(e -> e.kind() == LedgerKind.CALL && "create".equals(e.action()) && e.cause().startsWith("push-"));
    }

    @Test
    void aWindowInASecondProcessWritesItsCallsBesideTheDaemonsAndReadsClean() throws Exception {
        Instant t0 = Instant.now();
        zk.setDesired(spec(2), "r1");
        applied("r1");
        String id = docker.inspect(app).getId();
        String javaBin = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"), AgentMain.class.getName(), "window",
                "--host", HOST, "--zk", zk.connect(), "--module", module, "--schedule", "sweep", "--state-dir", agent.stateDir().toString(),
                TestPolicy.HOST_NETWORK_FLAG).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        Instant ended = Instant.now();
        List<LedgerEntry> lines = awaitLine(t0, e -> event(id, "start").test(e) && e.at().isAfter(ended.minusSeconds(10))
                && lines(t0).stream().anyMatch(h -> h.kind() == LedgerKind.HELD_CLOSE));

        assertThat(lines).anyMatch(e -> e.kind() == LedgerKind.CALL && "stop".equals(e.action()) && "mesh-agent window".equals(e.process())
                && e.pid() == p.pid());
        assertThat(LedgerFiles.of(agent.stateDir()).files()).anyMatch(f -> f.getFileName().toString().contains("-" + p.pid()));
        AuditReport r = audit(lines, t0, Instant.now());
        assertThat(r.violations()).as("violations: %s", r.violations()).isEmpty();
        AuditReport.Item w = r.items().stream().filter(i -> i.type().equals("window")).findFirst().orElseThrow();
        assertThat(w.stops()).isEqualTo(1);
        assertThat(w.starts()).isEqualTo(1);
    }

    @Test
    void aFreezeThawedWhileTheAgentWasDownIsClosedWhenItStartsAgain() throws Exception {
        Instant t0 = Instant.now();
        zk.setDesired(spec(2), "r1");
        applied("r1");
        FreezeRecord f = new FreezeRecord("bob", "change freeze", Times.now(), null);
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().freeze(module), Json.bytes(f));
        awaitLine(t0, e -> e.kind() == LedgerKind.FREEZE_OPEN);
        agent.close();
        zk.client().delete().forPath(zk.paths().freeze(module));
        agent.start();
        List<LedgerEntry> lines = awaitLine(t0, e -> e.kind() == LedgerKind.FREEZE_CLOSE);
        assertThat(lines.stream().filter(e -> e.kind() == LedgerKind.FREEZE_CLOSE).findFirst().orElseThrow().reason())
                .contains("ended while no agent of this host ran");
        assertThat(LedgerFiles.of(agent.stateDir()).slice(Instant.now(), Instant.now(), Set.of(module)))
                .noneMatch(e -> e.kind() == LedgerKind.FREEZE_OPEN);
    }

    @Test
    void aWindowKilledBeforeItsJournalIsClosedWhenTheAgentStartsAgainAndALiveOneIsNot() throws Exception {
        Instant t0 = Instant.now();
        zk.setDesired(spec(2), "r1");
        applied("r1");
        String id = docker.inspect(app).getId();
        agent.close();
        // a window process killed after its opening line, before its journal: nothing was stopped, no recovery runs
        try (Ledger l = Ledger.open(agent.stateDir())) {
            l.write(LedgerEntry.held(LedgerKind.HELD_OPEN, l.now(), module, app, id, LedgerEntry.WINDOW, "w-killed", "sweep", null, null, null));
            l.write(LedgerEntry.held(LedgerKind.HELD_OPEN, l.now(), module, module + "-db", "db1", LedgerEntry.WINDOW, "w-live", "sweep", null, null, null));
            assertThat(l.flush(Duration.ofSeconds(10))).isTrue();
        }
        // the other one's process lives: its held node is there
        HeldRegistry live = HeldRegistry.publish(zk.client(), zk.paths(), HOST, module, "sweep", "w-live", Times.now(),
                List.<String[]>of(new String[] {module + "-db", "db1"}), ProcessRef.current("mesh-agent window (test)"), Duration.ofSeconds(10));
        try {
            agent.start();
            List<LedgerEntry> lines = awaitLine(t0, e -> e.kind() == LedgerKind.HELD_CLOSE && "w-killed".equals(e.window()));
            assertThat(lines.stream().filter(e -> e.kind() == LedgerKind.HELD_CLOSE && "w-killed".equals(e.window())).findFirst().orElseThrow().reason())
                    .contains("ended while no agent of this host ran");
            assertThat(lines).noneMatch(e -> e.kind() == LedgerKind.HELD_CLOSE && "w-live".equals(e.window()));
        } finally {
            live.close();
        }
    }

    /**
     * The ledger's held interval opens only once the window's journal has the window: one that could not write its
     * journal (as one killed before it) opened none, for no recovery would ever close it. Opened first, it stayed open
     * and every later apply of the container read as a touch while held (the fleet history, failure model).
     */
    @Test
    void aWindowWhoseJournalCannotBeWrittenOpensNoHeldInterval() throws Exception {
        Instant t0 = Instant.now();
        zk.setDesired(spec(2), "r1");
        applied("r1");
        java.nio.file.Path tmp = agent.stateDir().resolve("windows").resolve(module + ".json.tmp");
        java.nio.file.Files.createDirectories(tmp); // the journal's write goes through <module>.json.tmp: a folder fails it
        try {
            WindowResult w = agent.daemon().runWindow(module, "sweep").get(90, TimeUnit.SECONDS);
            assertThat(w.outcome()).isEqualTo(WindowOutcome.FAILED);
            assertThat(w.error()).contains("window journal");
            assertThat(lines(t0)).noneMatch(e -> e.kind() == LedgerKind.HELD_OPEN && w.window().equals(e.window()));
        } finally {
            java.nio.file.Files.delete(tmp);
        }
    }

    private List<LedgerEntry> lines(Instant from) {
        return LedgerFiles.of(agent.stateDir()).slice(from, Instant.now(), Set.of(module));
    }

    private Instant heldClose(Instant from) {
        return lines(from).stream().filter(h -> h.kind() == LedgerKind.HELD_CLOSE).map(LedgerEntry::at).findFirst().orElse(Instant.MAX);
    }
}
