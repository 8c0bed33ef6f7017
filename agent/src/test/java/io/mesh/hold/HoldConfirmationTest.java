package io.mesh.hold;

import com.github.dockerjava.api.model.Event;
import io.mesh.curator.HeldRegistry;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
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

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An operator's hold is in force once its host confirms it (SPEC.md "Operator holds"; failure model row 73;
 * docs/decisions/0025-hold-confirmation.md): the agent writes {@code hold.confirmed} inside the module's critical
 * section, so that an apply that began before the hold has made its last Docker call by then. Checked against Docker's
 * own events on a real engine and a real ZooKeeper.
 */
@Tag("slow")
class HoldConfirmationTest {
    private static final String HOST = "host-a";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    /** Reconciles every 10 minutes: nothing here may depend on a reconcile. */
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);
    private final DockerEngine docker = TestDocker.engine();
    private final String module = TestDocker.uniqueModule("hc");
    private final String app = module + "-app";

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    /** {@code app} must run {@code minHealthy} before it counts as ready: an apply that recreates it waits that long. */
    private String manifest(String mode, String minHealthy) {
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  app:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    env: {MODE: \"" + mode + "\"}\n    network: host\n    stop-timeout: 2s\n"
                + "    ready: {min-healthy: " + minHealthy + "}\n";
    }

    private ApplyReport awaitReport(ApplyOutcome outcome, String revision, Duration within) {
        MeshStore store = new MeshStore(zk.client(), zk.paths());
        return await().atMost(within).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> store.report(HOST, module), r -> r != null && r.outcome() == outcome && revision.equals(r.revision()));
    }

    private HeldRecord hold() throws Exception {
        HeldRecord h = HeldRecord.operator(HOST, module, app, null, ProcessRef.current("mesh-coordinator (test)"),
                new HeldRecord.OperatorHold("alice", "forensic copy", Times.now(), null, null, null));
        HeldRegistry.hold(zk.client(), zk.paths(), h);
        return h;
    }

    private HeldRecord node() throws Exception {
        return Json.read(zk.client().getData().forPath(zk.paths().held(HOST, app)), HeldRecord.class);
    }

    @Test
    void anIdleAgentConfirmsAHoldAtOnceAndNothingTouchesTheContainerAfter() throws Exception {
        zk.setDesired(manifest("one", "1s"), "r1");
        awaitReport(ApplyOutcome.APPLIED, "r1", Duration.ofSeconds(60));
        HeldRecord placed = hold();
        assertThat(placed.hold().isConfirmed()).as("recorded, not yet in force").isFalse();
        HeldRecord confirmed = await().atMost(Duration.ofSeconds(10)).until(this::node, h -> h.hold().isConfirmed());
        assertThat(confirmed.hold().confirmed()).isAfterOrEqualTo(placed.hold().since());
        assertThat(confirmed.hold().by()).isEqualTo("alice");
        assertThat(Boolean.TRUE.equals(docker.inspect(app).getState().getRunning())).as("without --stop it keeps running").isTrue();
    }

    /**
     * A hold placed while an apply waits for its recreated container's readiness: the hold is confirmed only once that
     * apply has made its last Docker call (the previous container's removal after the readiness wait), never before.
     */
    @Test
    void aHoldPlacedMidApplyIsConfirmedOnlyAfterTheApplysLastDockerCall() throws Exception {
        zk.setDesired(manifest("one", "1s"), "r1");
        awaitReport(ApplyOutcome.APPLIED, "r1", Duration.ofSeconds(60));
        try (DockerEvents events = DockerEvents.record(module)) {
            zk.setDesired(manifest("two", "8s"), "r2");
            // The new container runs: the apply waits 8 s for it to count as ready, holding the module's section.
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> events.all().stream()
                    .anyMatch(e -> "start".equals(TestDocker.action(e)) && app.equals(TestDocker.name(e))));
            hold();
            Thread.sleep(2_000); // deliberate: well inside the readiness wait
            assertThat(node().hold().isConfirmed()).as("not confirmed while the apply that began before it runs").isFalse();

            HeldRecord confirmed = await().atMost(Duration.ofSeconds(40)).until(this::node, h -> h.hold().isConfirmed());
            ApplyReport r2 = awaitReport(ApplyOutcome.APPLIED, "r2", Duration.ofSeconds(10));
            assertThat(r2.finishedAt()).as("the apply ended before the confirmation").isBeforeOrEqualTo(confirmed.hold().confirmed());
            Thread.sleep(2_000); // deliberate: a quiet spell after the confirmation
            events.settle();
            List<Event> ofApp = events.all().stream()
                    .filter(e -> TestDocker.name(e) != null && (TestDocker.name(e).equals(app) || TestDocker.name(e).startsWith(app + ".")))
                    .toList();
            assertThat(ofApp).as("the apply touched the container before the hold: %s", DockerEvents.describe(ofApp))
                    .anyMatch(e -> "destroy".equals(TestDocker.action(e)));
            long confirmedNanos = confirmed.hold().confirmed().getEpochSecond() * 1_000_000_000L + confirmed.hold().confirmed().getNano();
            List<Event> after = ofApp.stream().filter(e -> e.getTimeNano() != null && e.getTimeNano() >= confirmedNanos).toList();
            assertThat(after).as("no Docker event of the container after its hold was confirmed at %s:\n%s", confirmed.hold().confirmed(),
                    DockerEvents.describe(ofApp)).isEmpty();
        }
    }
}
