package io.mesh.agent;

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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link AuditRequests} on a real ZooKeeper, with a fixture ledger (decision 28): a request written before it watched
 * is answered, another host's node is left alone, and a slice over the pages an answer may have is refused with the
 * fix, writing no page.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AuditRequestsTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();

    AuditRequests requests;

    @AfterEach
    void close() {
        if (requests != null) requests.close();
    }

    String write(long seq, String... hosts) throws Exception {
        String audit = ZkPaths.auditName(seq);
        Instant now = Times.now();
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().audit(audit),
                Json.bytes(new AuditRequest(audit, now.minusSeconds(3600), now, null, List.of(hosts), now, ProcessRef.current("test"))));
        for (String h : hosts) zk.client().create().forPath(zk.paths().audit(audit, h), Json.bytes(AuditAnswer.pending(audit, h)));
        return audit;
    }

    AuditAnswer answer(String audit, String host) throws Exception {
        return Json.read(zk.client().getData().forPath(zk.paths().audit(audit, host)), AuditAnswer.class);
    }

    @Test
    void aRequestWrittenBeforeTheWatchIsAnsweredAndAnotherHostsNodeIsLeftAlone() throws Exception {
        String audit = write(0, "host-a", "host-b");
        List<LedgerEntry> lines = List.of(LedgerEntry.follow(Times.now().minusSeconds(5), "the engine's buffer reached back"));
        requests = new AuditRequests(zk.client(), zk.paths(), "host-a", (from, to, modules) -> lines, Clock.systemUTC());
        requests.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> answer(audit, "host-a").state() == AuditState.ANSWERED);
        assertThat(answer(audit, "host-a").pages()).isEqualTo(1);
        assertThat(Json.read(zk.client().getData().forPath(zk.paths().auditPage(audit, "host-a", 0)), AuditPage.class).lines()).isEqualTo(lines);
        assertThat(answer(audit, "host-b").state()).isEqualTo(AuditState.PENDING);
        assertThat(zk.client().getChildren().forPath(zk.paths().audit(audit, "host-b"))).isEmpty();
    }

    @Test
    void aSliceOverThePagesAnAnswerMayHaveIsRefusedWithTheFixAndWritesNoPage() throws Exception {
        List<LedgerEntry> lines = new ArrayList<>();
        String pad = "p".repeat(1000);
        for (int i = 0; i < 1200; i++) lines.add(LedgerEntry.follow(Times.now().minusSeconds(60), i + pad)); // over 2 pages
        requests = new AuditRequests(zk.client(), zk.paths(), "host-a", (from, to, modules) -> lines, Clock.systemUTC(), 2);
        requests.start();
        String audit = write(0, "host-a");
        await().atMost(Duration.ofSeconds(10)).until(() -> answer(audit, "host-a").state() == AuditState.FAILED);
        assertThat(answer(audit, "host-a").error()).contains("holds 1200 lines", "over the 2 pages of 512 KiB",
                "audit a shorter span (--since, --until) or one module (--module)");
        assertThat(zk.client().getChildren().forPath(zk.paths().audit(audit, "host-a"))).isEmpty();
    }
}
