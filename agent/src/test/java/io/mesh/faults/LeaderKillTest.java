package io.mesh.faults;

import com.github.dockerjava.api.model.Event;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static io.mesh.faults.FaultFixture.actions;
import static io.mesh.faults.FaultFixture.result;
import static io.mesh.faults.FaultFixture.retry;
import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fault 3 (docs/failure-model.md): the leader of the 3-server ensemble is killed ({@code kill -9}) in the middle of
 * a window, and in the middle of an apply. Both complete; the held container is stopped and started once, by its
 * window, and nobody else touches it; afterwards the module lock has no children while a daemon keeps running
 * (Curator's protected creates leave no orphan lock node behind a create whose answer was lost).
 */
@Tag("slow")
class LeaderKillTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    @Test
    @DaemonWithR1(stepSeconds = 8)
    void leaderKilledMidWindow(ChildJvm daemon) throws Exception {
        String id = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();

        ChildJvm w = fx.window("window");
        await().atMost(Duration.ofSeconds(30)).until(() -> !fx.runningStepContainers().isEmpty());
        int leader = fx.zk.leader();
        assertThat(leader).isPositive();
        fx.zk.kill(leader);
        // the window's push arrives while the ensemble elects a new leader
        retry(Duration.ofSeconds(30), () -> fx.setDesired(fx.yaml("two", "unless-stopped", sleepStep(8), "1m"), "r2"));

        assertThat(w.awaitExit(Duration.ofSeconds(90))).as("window log:\n%s", w.output()).isZero();
        WindowResult r = result(w);
        assertThat(r.outcome()).isEqualTo(WindowOutcome.SUCCEEDED);
        fx.zk.start(leader);

        ApplyReport landed = fx.awaitApplied("r2", Duration.ofSeconds(60));
        assertThat(landed.lastWindow()).isNotNull();
        fx.awaitConverged("two", Duration.ofSeconds(30));
        assertThat(daemon.isAlive()).isTrue();

        fx.events.settle();
        List<Event> mine = fx.eventsOf(id, t0).stream()
                .filter(e -> e.getTimeNano() <= (r.finishedAt().toEpochMilli() + 1) * 1_000_000L).toList();
        assertThat(actions(mine)).as("held container during the window:\n%s", DockerEvents.describe(mine))
                .doesNotContain("create", "destroy", "rename");
        assertThat(actions(mine).stream().filter("start"::equals).count()).isEqualTo(1);
        assertNoOrphanLockChildren();
    }

    @Test
    @DaemonWithR1(stepSeconds = 1)
    void leaderKilledMidApply(ChildJvm daemon) throws Exception {
        for (int round = 2; round <= 3; round++) {
            int leader = fx.zk.leader();
            assertThat(leader).isPositive();
            List<String> lockNodesBefore = fx.lockChildren();
            fx.setDesired(fx.yaml("m" + round, "unless-stopped", sleepStep(1), "1m"), "r" + round);
            // the apply has begun: it has made its module lock node (a reconcile that finds nothing to do makes none),
            // and goes on to list, create, stop ... for a second or more (both containers change)
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10)).ignoreExceptions()
                    .until(() -> !lockNodesBefore.containsAll(fx.lockChildren()));
            fx.zk.kill(leader);
            fx.awaitApplied("r" + round, Duration.ofSeconds(60));
            fx.awaitConverged("m" + round, Duration.ofSeconds(30));
            fx.zk.start(leader);
            fx.zk.awaitQuorum(Duration.ofSeconds(60));
        }
        assertThat(daemon.isAlive()).isTrue();
        assertNoOrphanLockChildren();
    }

    /**
     * An orphan lock child would stay forever, so the lock must be seen empty; then a new revision lands, so the next
     * apply still gets the lock (a reconcile that finds nothing changed takes no lock: decision 0004), and the lock
     * is empty again after it.
     */
    private void assertNoOrphanLockChildren() throws Exception {
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).ignoreExceptions()
                .until(() -> fx.lockChildren().isEmpty() && fx.lockChildren().isEmpty());
        fx.setDesired(fx.yaml("after", "unless-stopped", sleepStep(1), "1m"), "r-after");
        fx.awaitApplied("r-after", Duration.ofSeconds(60));
        fx.awaitConverged("after", Duration.ofSeconds(30)); // recreated with the new env, so under the lock
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).ignoreExceptions()
                .until(() -> fx.lockChildren().isEmpty());
    }
}
