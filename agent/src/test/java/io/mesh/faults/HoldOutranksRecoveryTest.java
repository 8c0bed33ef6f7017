package io.mesh.faults;

import com.github.dockerjava.api.model.Event;
import io.mesh.curator.HeldRegistry;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.ZkTxnLog;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.WindowOutcome;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An operator's hold outranks a window's recovery (SPEC.md "Operator holds"; failure model row 71;
 * docs/decisions/0025-hold-confirmation.md). The host crashes mid-window (the window's process is killed with its
 * container stopped and no daemon runs); the operator holds the stopped registry while the host is down; the agent
 * comes back. Its recovery must leave the registry stopped, put its restart policy back and say so, and the hold must
 * stay as the operator wrote it until the agent confirms it. Checked from Docker's events and ZooKeeper's transaction
 * log, not from mesh's report alone.
 */
@Tag("slow")
class HoldOutranksRecoveryTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    @Test
    void aHoldPlacedWhileTheHostIsDownKeepsTheDeadWindowsContainerStopped() throws Exception {
        fx.setDesired(fx.yaml("one", "unless-stopped", sleepStep(30), "2m"), "r1");
        fx.applyInProcess();
        String id = fx.inspect(fx.registry).getId();

        ChildJvm w = fx.window("window");
        String windowId = fx.awaitHeldWindowId();
        await().atMost(Duration.ofSeconds(60)).until(() -> !fx.runningStepContainers().isEmpty() && !fx.running(fx.registry));
        assertThat(fx.restartPolicy(id)).as("a window sets policy no while it holds").isEqualTo("no");
        w.kill9();
        // The window's ephemeral nodes go with its session; the coordinator places a hold only once they are gone.
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> !fx.exists(fx.heldNode()));

        long zxid = fx.zxidNow();
        Instant t0 = Instant.now();
        HeldRecord hold = HeldRecord.operator(fx.host, fx.module, fx.registry, null, ProcessRef.current("mesh-coordinator (test)"),
                new HeldRecord.OperatorHold("alice", "disk swap OPS-7", Times.now(), null, null, null));
        HeldRegistry.hold(fx.client, fx.paths, hold);

        fx.daemon("daemon", "1s");
        ApplyReport r = fx.awaitReport(Duration.ofSeconds(90), x -> x.lastWindow() != null && windowId.equals(x.lastWindow().window()));
        assertThat(r.lastWindow().outcome()).isEqualTo(WindowOutcome.RECOVERED);
        assertThat(r.lastWindow().error()).as("the recovery says what it kept").contains(fx.registry + " kept stopped: held by operator alice: disk swap OPS-7");
        assertThat(Files.exists(fx.journal())).as("the window is finished").isFalse();

        HeldRecord there = await().atMost(Duration.ofSeconds(30)).ignoreExceptions()
                .until(() -> Json.read(fx.client.getData().forPath(fx.heldNode()), HeldRecord.class), h -> h.hold() != null && h.hold().isConfirmed());
        assertThat(there.hold().by()).isEqualTo("alice");
        assertThat(there.window()).as("never a window's node").isNull();
        FaultFixture.sleep(Duration.ofSeconds(3)); // deliberate: a quiet spell in which nobody may start it
        assertThat(fx.running(fx.registry)).as("the held registry is kept stopped").isFalse();
        assertThat(fx.inspect(fx.registry).getId()).isEqualTo(id);
        assertThat(fx.restartPolicy(id)).as("the window's policy change is undone").isEqualTo("unless-stopped");

        // Docker's own account: the container was not started, stopped, made or removed since the hold.
        fx.events.settle();
        List<Event> touched = fx.events.since(t0).stream().filter(e -> id.equals(e.getId())).toList();
        assertThat(FaultFixture.actions(touched)).as("events of the held container since the hold:\n%s", DockerEvents.describe(touched))
                .doesNotContain("start", "stop", "kill", "die", "create", "destroy", "rename", "restart");
        // ZooKeeper's own account: the hold's node was never deleted, and never written with a window's data.
        List<ZkTxnLog.Change> changes = ZkTxnLog.read(fx.zk, zxid).stream().filter(c -> c.path().equals(fx.heldNode())).toList();
        assertThat(changes).as("changes of %s", fx.heldNode()).isNotEmpty()
                .allSatisfy(c -> {
                    assertThat(c.kind()).isNotEqualTo(ZkTxnLog.Kind.DELETE);
                    assertThat(Json.read(c.data(), HeldRecord.class).operatorHold()).as("an operator's hold at zxid %s", c.zxid()).isTrue();
                });

        // Released, the next apply starts it (drift): the hold, not a crash, kept it down.
        HeldRegistry.release(fx.client, fx.paths, fx.host, fx.registry);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() -> fx.running(fx.registry));
    }
}
