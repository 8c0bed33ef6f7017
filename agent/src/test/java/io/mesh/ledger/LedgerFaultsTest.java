package io.mesh.ledger;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.ExecCreateCmdResponse;
import io.mesh.curator.HeldRegistry;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
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
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Faults the ledger must tell apart (decision 28; SPEC.md, "Audit"), on a real Docker engine and a real ZooKeeper,
 * judged by {@link AuditChecker} over the daemon's own ledger ({@link LedgerFiles#slice}) as {@code mesh audit} judges
 * it: Docker's restart policy starting a held container, a container removed by hand while its module is frozen, and
 * {@code docker stop}/{@code start} by hand while the agent is down for a minute.
 */
@Tag("slow")
class LedgerFaultsTest {
    private static final String HOST = "host-a";
    /** Crashes (exit 3) once each time {@code /tmp/crash} appears in it, else serves until SIGTERM. */
    private static final String CRASH_ON_DEMAND =
            "trap 'exit 0' TERM; while true; do if [ -f /tmp/crash ]; then rm -f /tmp/crash; exit 3; fi; sleep 1; done";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);
    private final DockerEngine docker = TestDocker.engine();
    private final String module = TestDocker.uniqueModule("lf");
    private final String app = module + "-app";

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    private String spec(String restart) {
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  app:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"" + CRASH_ON_DEMAND + "\"]\n    network: none\n    stop-timeout: 2s\n"
                + "    restart: " + restart + "\n";
    }

    private ApplyReport awaitReport(Predicate<ApplyReport> ok) {
        MeshStore store = new MeshStore(zk.client(), zk.paths());
        return await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> store.report(HOST, module), r -> r != null && ok.test(r));
    }

    private void applied(String revision) {
        awaitReport(r -> r.outcome() == ApplyOutcome.APPLIED && revision.equals(r.revision()));
    }

    private List<LedgerEntry> lines(Instant from) {
        agent.daemon().ledger().ledger().flush(Duration.ofSeconds(2));
        return LedgerFiles.of(agent.stateDir()).slice(from, Instant.now(), Set.of(module));
    }

    /** @return the ledger's lines of the module since {@code from}, once one passes {@code until} */
    private List<LedgerEntry> awaitLine(Instant from, Predicate<LedgerEntry> until) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> lines(from).stream().anyMatch(until));
        return lines(from);
    }

    private static Predicate<LedgerEntry> event(String id, String action) {
        return e -> e.kind() == LedgerKind.EVENT && id.equals(e.containerId()) && action.equals(e.action());
    }

    private static Predicate<LedgerEntry> eventAfter(String id, String action, Instant after) {
        return e -> event(id, action).test(e) && e.at().isAfter(after);
    }

    /** As {@code mesh audit} judges a span long after it: every window's left-stopped rule can be judged. */
    private AuditReport audit(List<LedgerEntry> lines, Instant from, Instant to) {
        return AuditChecker.check(HOST, lines, from, to, Set.of(module), Instant.now().plus(AuditChecker.LEFT_STOPPED_AFTER).plusSeconds(5));
    }

    private static List<AuditReport.Violation> of(AuditReport r, AuditViolationKind kind) {
        return r.violations().stream().filter(v -> v.kind() == kind).toList();
    }

    private void exec(String id, String... cmd) throws Exception {
        ExecCreateCmdResponse x = docker.client().execCreateCmd(id).withCmd(cmd).exec();
        docker.client().execStartCmd(x.getId()).exec(new ResultCallback.Adapter<>()).awaitCompletion(20, TimeUnit.SECONDS);
    }

    /**
     * A container under an operator's hold without {@code --stop} keeps running and keeps its restart policy
     * ({@code on-failure}; only a hold's {@code --stop} sets it to {@code no}: SPEC.md, "Operator holds"). When its
     * process exits 3, Docker's restart policy starts it again: no mesh call made that {@code start}, so it is both
     * {@code outside-mesh} and {@code touched-while-held} (SPEC.md, "Audit"), the hold's item reads {@code violations}
     * and the audit exits 1. The crash's {@code die} is no touch ({@link AuditChecker#TOUCH}) and is not reported.
     */
    @Test
    void dockersRestartOfAHeldOnFailureContainerIsOutsideMeshAndTouchedWhileHeld() throws Exception {
        Instant t0 = Instant.now();
        zk.setDesired(spec("on-failure"), "r1");
        applied("r1");
        String id = docker.inspect(app).getId();
        assertThat(docker.inspect(app).getHostConfig().getRestartPolicy().getName()).isEqualTo("on-failure");
        HeldRegistry.hold(zk.client(), zk.paths(), HeldRecord.operator(HOST, module, app, null, ProcessRef.current("mesh-coordinator (test)"),
                new HeldRecord.OperatorHold("alice", "looking at it OPS-7", Times.now(), null, Boolean.FALSE, null)));
        awaitLine(t0, e -> e.kind() == LedgerKind.HELD_OPEN && LedgerEntry.OPERATOR.equals(e.holder()) && app.equals(e.container()));
        assertThat(docker.inspect(app).getHostConfig().getRestartPolicy().getName()).as("a hold without --stop keeps the policy").isEqualTo("on-failure");
        Instant crash = Instant.now();
        exec(id, "touch", "/tmp/crash");
        List<LedgerEntry> lines = awaitLine(t0, eventAfter(id, "start", crash));
        assertThat(lines).anyMatch(e -> eventAfter(id, "die", crash).test(e) && "3".equals(e.exitCode()));
        assertThat(lines).noneMatch(e -> e.kind() == LedgerKind.CALL && e.at().isAfter(crash));
        assertThat(docker.inspect(app).getId()).isEqualTo(id);

        AuditReport r = audit(lines, t0, Instant.now());
        AuditReport.Violation touched = of(r, AuditViolationKind.TOUCHED_WHILE_HELD).stream().findFirst()
                .orElseThrow(() -> new AssertionError("no touched-while-held in " + r.violations()));
        assertThat(touched.evidence().action()).isEqualTo("start");
        assertThat(touched.evidence().containerId()).isEqualTo(id);
        assertThat(touched.at()).isAfter(crash);
        assertThat(touched.item()).isEqualTo("hold:" + app + ":alice");
        assertThat(touched.message()).contains("by no mesh call").contains("alice");
        assertThat(of(r, AuditViolationKind.OUTSIDE_MESH)).as("violations: %s", r.violations())
                .singleElement().satisfies(v -> assertThat(v.evidence()).isEqualTo(touched.evidence()));
        assertThat(r.violations()).as("only the restart").hasSize(2);
        AuditReport.Item hold = r.items().stream().filter(i -> i.type().equals("hold")).findFirst().orElseThrow();
        assertThat(hold.status()).isEqualTo("violations");
        assertThat(AuditReport.exitCode(List.of(r))).isEqualTo(AuditReport.VIOLATIONS);
    }

    /**
     * A module frozen (its {@code /mesh/freezes/<module>} node written as {@code FreezeStore} writes it) whose container
     * is removed by hand ({@code docker rm -f}): the {@code kill} and {@code destroy} are {@code outside-mesh}; while
     * frozen, an apply makes no {@code create} (a missing container is a change, not a repair: SPEC.md, "Freezes");
     * after the thaw the apply creates it again, and that {@code create} is not {@code changed-while-frozen}. The freeze
     * item is {@code ok}: only an apply's change breaks a freeze.
     */
    @Test
    void aContainerRemovedByHandWhileFrozenIsOutsideMeshAndItsCreateAfterTheThawIsNotChangedWhileFrozen() throws Exception {
        Instant t0 = Instant.now();
        zk.setDesired(spec("unless-stopped"), "r1");
        applied("r1");
        String id = docker.inspect(app).getId();
        FreezeRecord f = new FreezeRecord("bob", "change freeze", Times.now(), Times.now().plusSeconds(3600));
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().freeze(module), Json.bytes(f));
        awaitLine(t0, e -> e.kind() == LedgerKind.FREEZE_OPEN);
        Instant removed = Instant.now();
        docker.client().removeContainerCmd(id).withForce(true).exec();
        awaitLine(t0, event(id, "destroy"));
        agent.daemon().requestApply(module);
        ApplyReport frozen = awaitReport(r -> r.outcome() == ApplyOutcome.DEFERRED && r.freeze() != null);
        // a frozen module's apply that changes nothing may write no new report: time for it to run, then look
        Thread.sleep(5000);
        assertThat(docker.inspect(app)).as("not created again while frozen: %s", frozen).isNull();
        Instant thawed = Instant.now();
        assertThat(lines(t0)).as("no create while frozen")
                .noneMatch(e -> (e.kind() == LedgerKind.CALL || e.kind() == LedgerKind.EVENT) && "create".equals(e.action()) && e.at().isAfter(removed));

        zk.client().delete().forPath(zk.paths().freeze(module));
        awaitLine(t0, e -> e.kind() == LedgerKind.FREEZE_CLOSE);
        agent.daemon().requestApply(module);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            var i = docker.inspect(app);
            return i != null && Boolean.TRUE.equals(i.getState().getRunning());
        });
        String again = docker.inspect(app).getId();
        List<LedgerEntry> lines = awaitLine(t0, event(again, "start"));

        LedgerEntry create = lines.stream().filter(e -> e.kind() == LedgerKind.CALL && "create".equals(e.action()) && e.at().isAfter(thawed))
                .findFirst().orElseThrow(() -> new AssertionError("no create call after the thaw in " + lines));
        assertThat(create.cause()).startsWith("push-");
        LedgerEntry freezeClose = lines.stream().filter(e -> e.kind() == LedgerKind.FREEZE_CLOSE).findFirst().orElseThrow();
        assertThat(create.at()).isAfter(freezeClose.at());

        AuditReport r = audit(lines, t0, Instant.now());
        assertThat(of(r, AuditViolationKind.CHANGED_WHILE_FROZEN)).as("violations: %s", r.violations()).isEmpty();
        List<AuditReport.Violation> outside = of(r, AuditViolationKind.OUTSIDE_MESH);
        assertThat(outside).anySatisfy(v -> {
            assertThat(v.evidence().action()).isEqualTo("destroy");
            assertThat(v.evidence().containerId()).isEqualTo(id);
            assertThat(v.message()).contains("docker rm");
        });
        assertThat(outside).as("only the removal by hand is outside mesh: %s", outside)
                .allSatisfy(v -> assertThat(v.evidence().containerId()).isEqualTo(id))
                .allSatisfy(v -> assertThat(v.at()).isAfter(removed.minusSeconds(1)).isBefore(thawed));
        assertThat(r.violations()).as("violations: %s", r.violations()).allMatch(v -> v.kind() == AuditViolationKind.OUTSIDE_MESH);
        assertThat(r.items()).anyMatch(i -> i.type().equals("freeze") && "bob".equals(i.by()) && "ok".equals(i.status()));
        assertThat(AuditReport.exitCode(List.of(r))).isEqualTo(AuditReport.VIOLATIONS);
    }

    /**
     * The agent down for a minute while dockerd keeps its events: two {@code docker stop}s and two
     * {@code docker start}s by hand of the module's container meanwhile (about ten events, far fewer than dockerd's 256
     * buffered). The restarted agent finds its anchor in the engine's replay (the {@code follow} line says no event was
     * missed): no {@code gap}; the four hand-made touches are {@code outside-mesh}, and nothing else is reported (no
     * event is written twice). dockerd's buffer is counted in events, not time: a minute shows the replay as two did.
     */
    @Test
    @Tag("engine-alone") // dockerd keeps its last 256 events: with other tests' events beside it, they roll over in minutes
    void theAgentDownForAMinuteLosesNoEventAndTheHandMadeOnesAreOutsideMesh() throws Exception {
        Instant t0 = Instant.now();
        zk.setDesired(spec("unless-stopped"), "r1");
        applied("r1");
        String id = docker.inspect(app).getId();
        awaitLine(t0, event(id, "start"));
        agent.close();
        Instant down = Instant.now();
        for (int i = 0; i < 2; i++) {
            Thread.sleep(10_000);
            docker.client().stopContainerCmd(id).withTimeout(2).exec(); // by hand, nobody following
            Thread.sleep(10_000);
            docker.client().startContainerCmd(id).exec();
        }
        Thread.sleep(Math.max(0, Duration.ofMinutes(1).minus(Duration.between(down, Instant.now())).toMillis()));
        Instant up = Instant.now();
        agent.start(); // the same --state-dir, its anchor in ledger/cursor
        List<LedgerEntry> lines = awaitLine(t0, e -> e.kind() == LedgerKind.FOLLOW && e.at().isAfter(up.minusSeconds(1)));
        lines = awaitLine(t0, event(id, "stop"));

        assertThat(lines).noneMatch(e -> e.kind() == LedgerKind.GAP);
        LedgerEntry follow = lines.stream().filter(e -> e.kind() == LedgerKind.FOLLOW && e.at().isAfter(up.minusSeconds(1))).findFirst().orElseThrow();
        assertThat(follow.reason()).contains("no event was missed");
        List<LedgerEntry> hand = lines.stream().filter(e -> e.kind() == LedgerKind.EVENT && id.equals(e.containerId())
                && e.at().isAfter(down) && e.at().isBefore(up)).toList();
        assertThat(hand.stream().filter(e -> e.action().equals("stop"))).hasSize(2);
        assertThat(hand.stream().filter(e -> e.action().equals("start"))).hasSize(2);

        AuditReport r = audit(lines, t0, Instant.now());
        assertThat(r.violations()).as("violations: %s", r.violations()).allMatch(v -> v.kind() == AuditViolationKind.OUTSIDE_MESH)
                .allMatch(v -> v.at().isAfter(down) && v.at().isBefore(up));
        List<String> actions = of(r, AuditViolationKind.OUTSIDE_MESH).stream().map(v -> v.evidence().action()).toList();
        assertThat(actions.stream().filter("stop"::equals)).hasSize(2);
        assertThat(actions.stream().filter("start"::equals)).hasSize(2);
        assertThat(actions).as("every touch made by hand, once each").hasSize((int) hand.stream().filter(e -> AuditChecker.TOUCH.contains(e.action())).count());
        assertThat(AuditReport.exitCode(List.of(r))).isEqualTo(AuditReport.VIOLATIONS);
    }
}
