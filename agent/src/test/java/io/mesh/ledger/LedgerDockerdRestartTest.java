package io.mesh.ledger;

import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.Dockerd;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.AuditChecker;
import io.mesh.wire.AuditReport;
import io.mesh.wire.AuditViolationKind;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;
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

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * dockerd restarted while the host's agent is down (decision 28, "Events are followed with an anchor"): dockerd keeps
 * no events across its own restart, so the restarted agent does not find its anchor in the engine's replay and writes
 * the span from the anchor on as a {@code gap}. The audit of the span shows that gap and nothing else: exit 3 (SPEC.md,
 * "Audit"), a span mesh cannot vouch for, not a broken promise.
 *
 * <p>Restarting dockerd stops every container of the machine for a few seconds: run it alone.
 */
@Tag("slow")
@Tag("restarts-dockerd")
class LedgerDockerdRestartTest {
    private static final String HOST = "host-a";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);
    private final DockerEngine docker = TestDocker.engine();
    private final String module = TestDocker.uniqueModule("ld");
    private final String app = module + "-app";

    @AfterEach
    void tearDown() {
        Dockerd.ensureRunning();
        agent.close();
        TestDocker.clean(module);
    }

    /** Restart policy {@code no}: dockerd's restart does not start it (that start would be one more, outside mesh). */
    private String spec() {
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  app:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n    network: none\n    stop-timeout: 2s\n"
                + "    restart: \"no\"\n";
    }

    private List<LedgerEntry> lines(Instant from) {
        agent.daemon().ledger().ledger().flush(Duration.ofSeconds(2));
        return LedgerFiles.of(agent.stateDir()).slice(from, Instant.now(), Set.of(module));
    }

    /**
     * The daemon is stopped, dockerd is restarted (which stops the module's container: its {@code kill}, {@code die} and
     * {@code stop} are lost with dockerd's buffer), the daemon starts again with the same {@code --state-dir} and its
     * apply runs the container again (one not running is recreated: its own calls). The ledger has a {@code gap} from
     * the anchor on, its {@code follow} line says so; the audit over the span reports that gap and nothing else, exit 3.
     */
    @Test
    void dockerdRestartedWhileTheAgentIsDownIsAGapAndExitsThree() throws Exception {
        Instant t0 = Instant.now();
        zk.setDesired(spec(), "r1");
        MeshStore store = new MeshStore(zk.client(), zk.paths());
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> store.report(HOST, module), r -> r != null && r.outcome() == ApplyOutcome.APPLIED && "r1".equals(r.revision()));
        String id = docker.inspect(app).getId();
        assertThat(docker.inspect(app).getHostConfig().getRestartPolicy().getName()).as("policy no (Docker may say it empty)").isIn("", "no");
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
                .until(() -> lines(t0).stream().anyMatch(e -> e.kind() == LedgerKind.EVENT && id.equals(e.containerId()) && "start".equals(e.action())));
        agent.close();
        Instant down = Instant.now();
        try {
            Duration took = Dockerd.restart();
            System.out.println("dockerd was down for " + took.toMillis() + " ms");
        } finally {
            Dockerd.ensureRunning();
        }
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> !Boolean.TRUE.equals(docker.inspect(app).getState().getRunning()));
        Instant up = Instant.now();
        agent.start(); // the same --state-dir, its anchor in ledger/cursor
        agent.daemon().requestApply(module);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> Boolean.TRUE.equals(docker.inspect(app).getState().getRunning()));
        String again = docker.inspect(app).getId(); // recreated, since it was not running (ApplyPlanner)
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> lines(t0).stream()
                .anyMatch(e -> e.kind() == LedgerKind.EVENT && again.equals(e.containerId()) && "start".equals(e.action()) && e.at().isAfter(up)));
        Thread.sleep(1000);
        Instant to = Instant.now();
        List<LedgerEntry> lines = lines(t0);

        LedgerEntry gap = lines.stream().filter(e -> e.kind() == LedgerKind.GAP).findFirst()
                .orElseThrow(() -> new AssertionError("no gap in " + lines));
        assertThat(gap.at()).isBefore(down.plusSeconds(1));
        assertThat(gap.end()).isAfter(down);
        assertThat(gap.reason()).contains("dockerd restarted");
        assertThat(lines).anyMatch(e -> e.kind() == LedgerKind.FOLLOW && e.at().isAfter(up.minusSeconds(1)) && e.reason().contains("is a gap"));
        assertThat(lines).as("the apply's start").anyMatch(e -> e.kind() == LedgerKind.CALL && "start".equals(e.action()) && e.at().isAfter(up));

        AuditReport r = AuditChecker.check(HOST, lines, t0, to, Set.of(module), to.plus(AuditChecker.LEFT_STOPPED_AFTER).plusSeconds(5));
        assertThat(r.violations()).as("violations: %s", r.violations()).isNotEmpty().allMatch(v -> v.kind() == AuditViolationKind.GAP);
        assertThat(r.violations()).anyMatch(v -> v.evidence().equals(gap));
        assertThat(AuditReport.exitCode(List.of(r))).isEqualTo(AuditReport.GAPS_ONLY);
    }
}
