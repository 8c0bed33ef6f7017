package io.mesh.agent;

import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.AuditAnswer;
import io.mesh.wire.AuditPage;
import io.mesh.wire.AuditRequest;
import io.mesh.wire.AuditState;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The daemon answers its host's audits (decision 28): {@code failed} with "no ledger" until it is given one
 * ({@link AgentDaemon#ledger}), then from that ledger.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AgentDaemonAuditTest {
    private static final String HOST = "audit-host";

    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);

    String ask(long seq) throws Exception {
        String audit = ZkPaths.auditName(seq);
        Instant now = Times.now();
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().audit(audit),
                Json.bytes(new AuditRequest(audit, now.minusSeconds(3600), now, null, List.of(HOST), now, ProcessRef.current("test"))));
        zk.client().create().forPath(zk.paths().audit(audit, HOST), Json.bytes(AuditAnswer.pending(audit, HOST)));
        return audit;
    }

    AuditAnswer answered(String audit) {
        return await().atMost(Duration.ofSeconds(15)).until(
                () -> Json.read(zk.client().getData().forPath(zk.paths().audit(audit, HOST)), AuditAnswer.class),
                a -> a.state() != AuditState.PENDING);
    }

    @Test
    void itAnswersFromItsOwnLedgerWithoutOneFailedAndFromAnotherOneGiven() throws Exception {
        // the follower writes its first line as it subscribes, a moment after the daemon starts
        await().atMost(Duration.ofSeconds(15)).until(() -> agent.daemon().ledger().files().slice(Times.now().minusSeconds(3600), Times.now(), null)
                .stream().anyMatch(l -> l.kind() == io.mesh.wire.LedgerKind.FOLLOW));
        AuditAnswer own = answered(ask(0));
        assertThat(own.state()).as("the daemon's own ledger, under its --state-dir").isEqualTo(AuditState.ANSWERED);
        assertThat(Json.read(zk.client().getData().forPath(zk.paths().auditPage(ZkPaths.auditName(0), HOST, 0)), AuditPage.class).lines())
                .as("the daemon's follower began the ledger").anySatisfy(l -> assertThat(l.kind()).isEqualTo(io.mesh.wire.LedgerKind.FOLLOW));

        agent.daemon().ledger(null);
        AuditAnswer none = answered(ask(1));
        assertThat(none.state()).isEqualTo(AuditState.FAILED);
        assertThat(none.error()).startsWith("no ledger: the agent of " + HOST + " keeps no ledger");

        List<LedgerEntry> lines = List.of(LedgerEntry.follow(Times.now().minusSeconds(30), "the engine's buffer reached back"));
        agent.daemon().ledger((from, to, modules) -> lines);
        String audit = ask(2);
        AuditAnswer a = answered(audit);
        assertThat(a.state()).isEqualTo(AuditState.ANSWERED);
        assertThat(Json.read(zk.client().getData().forPath(zk.paths().auditPage(audit, HOST, 0)), AuditPage.class).lines()).isEqualTo(lines);
    }
}
