package io.mesh.faults;

import io.mesh.ledger.LedgerFiles;
import io.mesh.testing.ChildJvm;
import io.mesh.wire.AuditChecker;
import io.mesh.wire.AuditReport;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The audit of a window whose process was killed together with its host's agent (decision 28; SPEC.md, "Audit"): the
 * window's calls were written ahead in its own ledger file, the killed daemon's anchor lets the next one replay what
 * happened while no agent followed, and the recovery's give-back is the window's own call (its window id). The ledger
 * of the span reads clean.
 */
@Tag("slow")
class AuditAfterKillTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    /**
     * {@code kill -9} of the window's process mid-step and of the daemon, then a new daemon with the same
     * {@code --state-dir} recovers the window (as {@code WindowProcessKillTest} and {@code AgentRestartTest} show). The
     * audit from before the window to after the recovery, over the agent's ledger, has no violation (exit 0): no
     * {@code gap} (the anchor was in dockerd's buffer), no {@code outside-mesh} (the step's kill and the registry's start
     * are the recovery's calls, none written twice), no {@code left-stopped}; the window's item is {@code ok} with its one
     * stop and its one start.
     */
    @Test
    @Tag("engine-alone") // dockerd keeps its last 256 events: with other tests' events beside it, they roll over while the agent is down
    @DaemonWithR1(name = "daemon-1", stepSeconds = 30, timeout = "2m")
    void aWindowKilledWithItsAgentAndRecoveredReadsClean(ChildJvm first) throws Exception {
        String id = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();

        ChildJvm w = fx.window("window");
        String windowId = fx.awaitHeldWindowId();
        await().atMost(Duration.ofSeconds(30)).until(() -> !fx.runningStepContainers().isEmpty());
        w.kill9();
        first.kill9();
        Instant killed = Instant.now();
        fx.daemon("daemon-2", "1s");
        fx.assertRecovered(id, t0, windowId, Duration.ofSeconds(90));

        LedgerFiles files = LedgerFiles.of(fx.stateDir);
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() -> {
            List<LedgerEntry> l = files.slice(t0, Instant.now(), Set.of(fx.module));
            return l.stream().anyMatch(e -> e.kind() == LedgerKind.HELD_CLOSE && windowId.equals(e.window()))
                    && l.stream().anyMatch(e -> e.kind() == LedgerKind.EVENT && id.equals(e.containerId()) && "start".equals(e.action())
                    && e.at().isAfter(killed));
        });
        Thread.sleep(1000); // the last batch of the daemon's writer
        Instant to = Instant.now();
        List<LedgerEntry> lines = files.slice(t0, to, Set.of(fx.module));

        assertThat(lines).as("the window's stop, written ahead by its own process")
                .anyMatch(e -> e.kind() == LedgerKind.CALL && "stop".equals(e.action()) && windowId.equals(e.window()) && id.equals(e.containerId())
                        && "mesh-agent window".equals(e.process()));
        assertThat(lines).as("the recovery's start, as the window's call")
                .anyMatch(e -> e.kind() == LedgerKind.CALL && "start".equals(e.action()) && windowId.equals(e.window()) && e.at().isAfter(killed));
        AuditReport r = AuditChecker.check(fx.host, lines, t0, to, Set.of(fx.module), to.plus(AuditChecker.LEFT_STOPPED_AFTER).plusSeconds(5));
        assertThat(r.violations()).as("violations: %s", r.violations()).isEmpty();
        assertThat(AuditReport.exitCode(List.of(r))).isEqualTo(AuditReport.CLEAN);
        AuditReport.Item item = r.items().stream().filter(i -> windowId.equals(i.id())).findFirst()
                .orElseThrow(() -> new AssertionError("no item of window " + windowId + " in " + r.items()));
        assertThat(item.type()).isEqualTo("window");
        assertThat(item.status()).isEqualTo("ok");
        assertThat(item.containers()).containsExactly(fx.registry);
        assertThat(item.stops()).isEqualTo(1);
        assertThat(item.starts()).isEqualTo(1);
        assertThat(item.to()).isAfter(killed);
    }
}
