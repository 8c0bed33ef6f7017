package io.mesh.faults;

import io.mesh.testing.ChildJvm;
import io.mesh.testing.TestDocker;
import io.mesh.wire.ApplyOutcome;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;

import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * ZooKeeper's quorum lost while an apply waits for a recreated container's readiness (failure model row 76): the
 * apply makes no further call under its lapsed lock but to put back, under the host fence alone, what it was in the
 * middle of. The previous container runs again under its name while ZooKeeper is still away, rather than stay stopped
 * aside for the whole outage and be recreated twice after. Checked with Docker's inspect and events.
 */
@Tag("slow")
class QuorumLossMidRecreateTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    @Test
    @DaemonWithR1(stepSeconds = 1)
    void thePreviousContainerIsPutBackUnderTheFenceWhileZooKeeperIsAway(ChildJvm daemon) throws Exception {
        String oldId = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();
        // r2 changes the registry, which then counts as ready only after 30 s: the apply waits, holding the section.
        String r2 = fx.yaml("two", "unless-stopped", sleepStep(1), "1m").replace("\n  web:\n", "\n    ready: {min-healthy: 30s}\n  web:\n");
        fx.setDesired(r2, "r2");
        // ignoreExceptions: between the recreate's renames the name is briefly nobody's
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).ignoreExceptions().until(() ->
                !oldId.equals(fx.inspect(fx.registry).getId()) && fx.running(fx.registry));
        String newId = fx.inspect(fx.registry).getId();
        assertThat(fx.running(oldId)).as("the previous one waits aside, stopped").isFalse();

        int[] lost = {fx.zk.leader(), fx.zk.follower()};
        for (int server : lost) fx.zk.kill(server);
        try {
            await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() ->
                    oldId.equals(fx.inspect(fx.registry).getId()) && fx.running(fx.registry));
            assertThat(TestDocker.engine().idByName(fx.registry + ".mesh-next")).isNull();
            assertThat(fx.eventsOf(newId, t0).stream().map(TestDocker::action)).as("the new one is removed").contains("destroy");
            FaultFixture.sleep(Duration.ofSeconds(3)); // deliberate: nothing stops it again while ZooKeeper is away
            assertThat(fx.inspect(fx.registry).getId()).isEqualTo(oldId);
            assertThat(fx.running(fx.registry)).isTrue();
            assertThat(fx.restartPolicy(oldId)).as("its policy is back").isEqualTo("unless-stopped");
        } finally {
            for (int server : lost) fx.zk.start(server);
            fx.zk.awaitQuorum(Duration.ofSeconds(60));
        }
        // ZooKeeper back: the push lands.
        fx.awaitReport(Duration.ofSeconds(120), r -> "r2".equals(r.revision()) && r.outcome() == ApplyOutcome.APPLIED);
        assertThat(daemon.isAlive()).isTrue();
    }
}
