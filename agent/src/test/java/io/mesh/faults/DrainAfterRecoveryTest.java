package io.mesh.faults;

import io.mesh.testing.ChildJvm;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DrainRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.Times;
import io.mesh.wire.WindowOutcome;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;

import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A drain that comes while its host is down mid-window (decision 37): the window's process is killed with its container
 * stopped; the host is drained (no --stop) while no agent runs; the agent comes back. The dead window's recovery gives
 * its container back first (the same container, started: a drain without --stop keeps containers running), and only
 * then does the drain's hold come. The fleet history saw the drain's hold placed first, and the recovery keep the
 * container stopped "held by operator" for a drain that asked nothing stopped.
 */
@Tag("slow")
class DrainAfterRecoveryTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    @Test
    void aDrainWhileTheHostIsDownMidWindowHoldsTheContainerOnlyAfterItsRecoveryStartedIt() throws Exception {
        fx.setDesired(fx.yaml("one", "unless-stopped", sleepStep(30), "2m"), "r1");
        fx.applyInProcess();
        String id = fx.inspect(fx.registry).getId();

        ChildJvm w = fx.window("window");
        String windowId = fx.awaitHeldWindowId();
        await().atMost(Duration.ofSeconds(60)).until(() -> !fx.runningStepContainers().isEmpty() && !fx.running(fx.registry));
        w.kill9();
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> !fx.exists(fx.heldNode()));

        fx.client.create().creatingParentsIfNeeded().forPath(fx.paths.drain(fx.host),
                Json.bytes(new DrainRecord("alice", "kernel OPS-9", Times.now(), null, null)));
        fx.daemon("daemon", "1s");
        ApplyReport r = fx.awaitReport(Duration.ofSeconds(90), x -> x.lastWindow() != null && windowId.equals(x.lastWindow().window()));
        assertThat(r.lastWindow().outcome()).isEqualTo(WindowOutcome.RECOVERED);
        assertThat(r.lastWindow().error()).as("nothing kept stopped").doesNotContain("kept stopped");
        await().atMost(Duration.ofSeconds(30)).until(() -> fx.running(fx.registry));
        assertThat(fx.inspect(fx.registry).getId()).as("the same container").isEqualTo(id);

        // ... and then the drain holds it, running (no --stop)
        HeldRecord h = await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                .until(() -> Json.read(fx.client.getData().forPath(fx.heldNode()), HeldRecord.class), x -> x.hold() != null && x.hold().isConfirmed());
        assertThat(h.hold().ofDrain()).isTrue();
        FaultFixture.sleep(Duration.ofSeconds(2)); // deliberate: nobody may stop it now
        assertThat(fx.running(fx.registry)).isTrue();
        assertThat(fx.inspect(fx.registry).getId()).isEqualTo(id);
    }
}
