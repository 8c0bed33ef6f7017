package io.mesh.e2e;

import com.github.dockerjava.api.model.Event;
import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.Json;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A recurring freeze (SPEC.md "The rest of the operator's stack"; decision 37), every minute for 30 s, against a real
 * Docker engine and ZooKeeper: a push inside a span is deferred and lands when the span ends, by itself; a push
 * between spans lands at once. When each landed is read from Docker's events (the new container's {@code create}),
 * not from mesh's report. The agent reconciles every 10 minutes: only the freeze's own timers can land the deferred push.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
@Tag("slow") // waits for the minute's spans
class RecurringFreezeTest {
    private static final String HOST = "host-frz-cron";
    @RegisterExtension
    @Order(1)
    final CoordinatorFixture fx = new CoordinatorFixture();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(fx.zk, HOST).reconcileEvery(Duration.ofMinutes(10));
    private final String module = TestDocker.uniqueModule("frzc");
    private final FreezeSteps steps = new FreezeSteps(fx.zk, fx.api, HOST);

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    @Test
    void aPushLandsOnlyBetweenSpans() throws Exception {
        Instant t0 = Instant.now();
        steps.landed(module);
        try (DockerEvents events = DockerEvents.record(module)) {
            JsonNode frozen = steps.freeze("{\"module\":\"" + module + "\",\"cron\":\"* * * * *\",\"for\":\"30s\",\"reason\":\"every minute\"}").json();
            assertThat(frozen.path("cron").asText()).isEqualTo("* * * * *");
            FreezeRecord rule = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().freeze(module)), FreezeRecord.class);
            assertThat(rule.lasts()).isEqualTo("30s");
            // Both pushes, in the order the clock gives: inside a span with at least 8 s of it left, and between spans
            // with at least 8 s before the next.
            boolean inside = false, between = false;
            int revision = 2;
            while (!inside || !between) {
                Instant now = Instant.now();
                long second = now.getEpochSecond() % 60;
                if (!inside && second < 22) {
                    inside = true;
                    pushInside(events, revision++);
                } else if (!between && second >= 31 && second < 52) {
                    between = true;
                    pushBetween(events, revision++);
                } else {
                    Thread.sleep(250);
                }
            }
        }
        // The agent's ledger: each span it obeyed opens with the span's end as its until, and its own checker finds
        // no apply's change in one.
        java.util.List<io.mesh.wire.LedgerEntry> lines = io.mesh.ledger.LedgerFiles.of(agent.stateDir()).slice(t0, Instant.now(), java.util.Set.of(module));
        assertThat(lines).anyMatch(e -> e.kind() == io.mesh.wire.LedgerKind.FREEZE_OPEN && e.until() != null
                && e.until().equals(e.until().truncatedTo(ChronoUnit.MINUTES).plusSeconds(30)));
        assertThat(lines).anyMatch(e -> e.kind() == io.mesh.wire.LedgerKind.FREEZE_CLOSE);
        io.mesh.wire.AuditReport audit = io.mesh.wire.AuditChecker.check(HOST, lines, t0, Instant.now(), null, Instant.now());
        assertThat(audit.violations()).as("%s", audit.violations()).isEmpty();
    }

    /** A push in a span is deferred with the span's end, and its container is made at that end, not before. */
    private void pushInside(DockerEvents events, int revision) throws Exception {
        Instant spanStart = Instant.now().truncatedTo(ChronoUnit.MINUTES), spanEnd = spanStart.plusSeconds(30);
        Instant from = Instant.now();
        String p = steps.push(steps.manifest(module, "r" + revision), "r" + revision);
        await().atMost(Duration.ofSeconds(5)).until(() -> steps.state(p, module).equals("deferred"));
        assertThat(Instant.parse(steps.target(p, module).path("freeze").path("until").asText())).as("the span's end").isEqualTo(spanEnd);
        await().atMost(Duration.ofSeconds(60)).until(() -> steps.state(p, module).equals("applied"));
        assertThat(steps.env(module)).contains("MODE=r" + revision);
        List<Instant> creates = creates(events, from);
        assertThat(creates).as("the push's container, made once").hasSize(1);
        assertThat(creates.get(0)).as("made when the span ended (" + spanEnd + "), not in it").isAfterOrEqualTo(spanEnd);
    }

    /** A push between spans lands at once: its container is made before the next span starts. */
    private void pushBetween(DockerEvents events, int revision) throws Exception {
        Instant nextSpan = Instant.now().truncatedTo(ChronoUnit.MINUTES).plusSeconds(60);
        Instant from = Instant.now();
        String p = steps.push(steps.manifest(module, "r" + revision), "r" + revision);
        await().atMost(Duration.ofSeconds(30)).until(() -> steps.state(p, module).equals("applied"));
        List<Instant> creates = creates(events, from);
        assertThat(creates).as("the push's container, made once").hasSize(1);
        assertThat(creates.get(0)).as("made between the spans, before " + nextSpan).isBefore(nextSpan);
    }

    /** @return the times of the module's container creates since {@code from}, by Docker's events */
    private List<Instant> creates(DockerEvents events, Instant from) {
        events.settle();
        return events.since(from).stream().filter(e -> "create".equals(TestDocker.action(e)))
                // made under a name of its own and renamed once the old one is gone: the module's, not a window's step
                .filter(e -> e.getActor() != null && module.equals(e.getActor().getAttributes().get(io.mesh.docker.Labels.MODULE))
                        && !e.getActor().getAttributes().containsKey(io.mesh.docker.Labels.WINDOW))
                .map(RecurringFreezeTest::time).toList();
    }

    private static Instant time(Event e) {
        return e.getTimeNano() != null ? Instant.ofEpochSecond(0, e.getTimeNano()) : Instant.ofEpochSecond(e.getTime());
    }
}
