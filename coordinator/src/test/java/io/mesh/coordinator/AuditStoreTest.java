package io.mesh.coordinator;

import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.AuditAnswer;
import io.mesh.wire.AuditReport;
import io.mesh.wire.AuditRequest;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link AuditStore} on a real ZooKeeper without agents (decision 28): what it does about hosts that cannot answer,
 * requests abandoned by a coordinator that died, and a timeout out of range. Agents answering: {@code AuditCommandTest}.
 */
class AuditStoreTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();

    final Instant now = Times.now();
    final ProcessRef by = ProcessRef.current("test");

    @Test
    void aHostWithoutAnAgentIsNotWaitedForButNamed() throws Exception {
        AuditStore store = new AuditStore(zk.client(), zk.paths(), Clock.systemUTC());
        long t = System.nanoTime();
        AuditStore.Result r = store.audit(now.minusSeconds(3600), now, List.of("host-z"), null, Duration.ofSeconds(10), by);
        assertThat(Duration.ofNanos(System.nanoTime() - t)).as("not waited for").isLessThan(Duration.ofSeconds(5));
        assertThat(r.exit()).isEqualTo(AuditReport.GAPS_ONLY);
        assertThat(r.hosts()).singleElement().satisfies(h -> {
            assertThat(h.host()).isEqualTo("host-z");
            assertThat(h.error()).contains("did not answer: it has no agent (no /mesh/agents/host-z)", "mesh-agent run --host host-z");
        });
        assertThat(zk.client().getChildren().forPath(zk.paths().audits())).as("deleted once judged").isEmpty();
    }

    @Test
    void noHostKnownIsAnEmptyCleanAudit() throws Exception {
        AuditStore.Result r = new AuditStore(zk.client(), zk.paths(), Clock.systemUTC()).audit(now.minusSeconds(60), now, null, null,
                AuditStore.DEFAULT_TIMEOUT, by);
        assertThat(r.hosts()).isEmpty();
        assertThat(r.exit()).isEqualTo(AuditReport.CLEAN);
    }

    @Test
    void aRequestAbandonedOverTenMinutesAgoIsDeletedByTheNextAudit() throws Exception {
        String old = ZkPaths.auditName(0);
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().audit(old),
                Json.bytes(new AuditRequest(old, now.minusSeconds(60), now, null, List.of("host-a"), now, by)));
        zk.client().create().forPath(zk.paths().audit(old, "host-a"), Json.bytes(AuditAnswer.pending(old, "host-a")));
        zk.client().create().forPath(zk.paths().auditPage(old, "host-a", 0), "{}".getBytes());

        // Nine minutes on: kept (its coordinator may still wait, with a long timeout and a slow clock).
        new AuditStore(zk.client(), zk.paths(), Clock.offset(Clock.systemUTC(), Duration.ofMinutes(9)))
                .audit(now.minusSeconds(60), now, List.of("host-z"), null, Duration.ofSeconds(1), by);
        assertThat(zk.client().checkExists().forPath(zk.paths().audit(old))).isNotNull();
        // Eleven minutes on: gone, with its answers and pages.
        new AuditStore(zk.client(), zk.paths(), Clock.offset(Clock.systemUTC(), Duration.ofMinutes(11)))
                .audit(now.minusSeconds(60), now, List.of("host-z"), null, Duration.ofSeconds(1), by);
        assertThat(zk.client().checkExists().forPath(zk.paths().audit(old))).isNull();
    }

    @Test
    void aTimeoutOutOfRangeIsRefusedNamingTheRange() {
        AuditStore store = new AuditStore(zk.client(), zk.paths(), Clock.systemUTC());
        assertThatThrownBy(() -> store.audit(now.minusSeconds(60), now, List.of("host-z"), null, Duration.ZERO, by))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 25s");
        assertThatThrownBy(() -> store.audit(now.minusSeconds(60), now, List.of("host-z"), null, Duration.ofSeconds(26), by))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 25s");
    }

    @Test
    void queryErrorsNameTheFieldAndTheFix() {
        Instant at = Instant.parse("2026-12-06T08:00:00Z");
        assertThat(errors("since=2d", at)).containsExactly("since: '2d' is neither a duration nor a time: write a duration back from now, "
                + "such as 1h or 24h, or an ISO-8601 UTC time such as 2026-12-06T08:00:00Z");
        assertThat(errors("since=2026-12-06T09:00:00Z", at)).singleElement().asString().startsWith("since: 2026-12-06T09:00:00Z is in the future");
        assertThat(errors("since=2026-12-06T07:00:00Z&until=2026-12-06T06:00:00Z", at)).singleElement().asString()
                .contains("since 2026-12-06T07:00:00Z is after until 2026-12-06T06:00:00Z");
        assertThat(errors("until=tomorrow&host=bad%20host&module=Store&timeout=90s&colour=red", at)).containsExactly(
                "colour: unknown parameter 'colour': GET /v1/audit takes since, until, host, module and timeout",
                "until: 'tomorrow' is not an ISO-8601 UTC time: write it such as 2026-12-06T08:00:00Z",
                "host: 'bad host' is not a host id: host ids match [A-Za-z0-9][A-Za-z0-9._-]{0,62}, such as host-a",
                "module: 'Store' is not a module name (mesh status lists the modules)",
                "timeout: '90s' is over 25s: give up to 25s, such as 10s");
    }

    @Test
    void aQueryReadsDurationsTimesAndLists() throws Exception {
        Instant at = Instant.parse("2026-12-06T08:00:00Z");
        AuditQuery q = AuditQuery.parse("since=1h30m&host=host-a,host-b&host=host-c&module=store", at);
        assertThat(q.since()).isEqualTo(Instant.parse("2026-12-06T06:30:00Z"));
        assertThat(q.until()).isEqualTo(at);
        assertThat(q.hosts()).containsExactly("host-a", "host-b", "host-c");
        assertThat(q.modules()).containsExactly("store");
        assertThat(q.timeout()).isEqualTo(AuditStore.DEFAULT_TIMEOUT);
        AuditQuery d = AuditQuery.parse(null, at);
        assertThat(d.since()).as("24h by default").isEqualTo(Instant.parse("2026-12-05T08:00:00Z"));
        assertThat(AuditQuery.parse("since=2026-12-06T07%3A00%3A00Z", at).since()).isEqualTo(Instant.parse("2026-12-06T07:00:00Z"));
    }

    private static List<String> errors(String query, Instant at) {
        try {
            AuditQuery.parse(query, at);
            return List.of();
        } catch (AuditQuery.InvalidException e) {
            return e.errors.stream().map(x -> x.field() + ": " + x.message()).toList();
        }
    }
}
