package io.mesh.faults;

import io.mesh.curator.HeldRegistry;
import io.mesh.curator.ZkClock;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.TestDocker;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;

import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An agent whose host's clock is five minutes ahead (failure model row 79): an operator's hold for 40 s is judged by
 * ZooKeeper's clock ({@code ZkClock}), not the host's (SPEC.md "Operator holds": durations are measured from the node's
 * ZooKeeper ctime). The agent runs in its own JVM under libfaketime; the hold and the push come from this JVM, whose
 * clock is right. Before, the agent took the hold for expired at once, deleted it and recreated the container.
 */
@Tag("slow")
class AgentClockSkewTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    @Test
    void anAgentFiveMinutesAheadObeysAHoldForItsWholeLength() throws Exception {
        fx.setDesired(fx.yaml("one", "unless-stopped", sleepStep(1), "1m"), "r1");
        ChildJvm daemon = fx.daemonWithClock("daemon", "2s", "+5m");
        fx.awaitApplied("r1", Duration.ofSeconds(60));
        String id = fx.inspect(fx.registry).getId();

        Instant since = ZkClock.now();
        HeldRecord hold = HeldRecord.operator(fx.host, fx.module, fx.registry, null, ProcessRef.current("mesh-coordinator (test)"),
                new HeldRecord.OperatorHold("alice", "disk swap", since, since.plusSeconds(40), null, null));
        HeldRegistry.hold(fx.client, fx.paths, hold);
        fx.setDesired(fx.yaml("two", "unless-stopped", sleepStep(1), "1m"), "r2");

        ApplyReport r2 = fx.awaitReport(Duration.ofSeconds(30), r -> "r2".equals(r.revision()) && r.outcome() == ApplyOutcome.DEFERRED);
        assertThat(r2.containers()).anySatisfy(c -> {
            assertThat(c.container()).isEqualTo(fx.registry);
            assertThat(c.action()).isEqualTo(ContainerAction.HELD);
        });
        HeldRecord there = await().atMost(Duration.ofSeconds(15)).ignoreExceptions()
                .until(() -> Json.read(fx.client.getData().forPath(fx.heldNode()), HeldRecord.class), h -> h.hold().isConfirmed());
        assertThat(there.hold().until()).isEqualTo(hold.hold().until());
        FaultFixture.sleep(Duration.ofSeconds(10)); // deliberate: well inside the hold, long past it by the host's own clock
        assertThat(fx.exists(fx.heldNode())).as("the hold stands until its until by ZooKeeper's clock").isTrue();
        assertThat(fx.inspect(fx.registry).getId()).as("the held container is not recreated").isEqualTo(id);
        assertThat(fx.eventsOf(id, since).stream().map(TestDocker::action)).doesNotContain("destroy", "stop", "kill");

        // At its until, the hold ends and the push lands, with no new push.
        fx.awaitReport(Duration.ofSeconds(60), r -> "r2".equals(r.revision()) && r.outcome() == ApplyOutcome.APPLIED);
        assertThat(Instant.now()).isAfter(hold.hold().until().minusSeconds(2));
        assertThat(daemon.isAlive()).isTrue();
    }
}
