package io.mesh.faults;

import io.mesh.testing.ChildJvm;
import io.mesh.wire.ApplyOutcome;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fault 1 (docs/failure-model.md): {@code kill -9} of the process running a window, mid-step and mid-stop. The
 * window's journal ({@code <state-dir>/windows/<module>.json}, written before the first stop) lets the daemon finish
 * it: the step container does not keep running, the held container runs again (the same container), the znodes and
 * the journal go, the report's {@code lastWindow} names the window. No apply recreates the held container meanwhile.
 */
@Tag("slow")
class WindowProcessKillTest extends FaultFixture {

    /** Mid-step, with the daemon running all along: an apply that gets the module lock finds the journal and recovers. */
    @Test
    void killedMidStepWhileTheDaemonRuns() throws Exception {
        ChildJvm daemon = daemonWithR1Applied("daemon", "1s", "unless-stopped", 12, "2m");
        String id = inspect(registry).getId();
        Instant t0 = Instant.now();

        ChildJvm w = window("window");
        String windowId = awaitHeldWindowId();
        await().atMost(Duration.ofSeconds(30)).until(() -> !runningStepContainers().isEmpty());
        assertThat(journal()).exists();
        w.kill9();

        assertRecovered(id, t0, windowId, Duration.ofSeconds(60));
        assertThat(daemon.isAlive()).isTrue();
        assertThat(report().outcome()).isIn(ApplyOutcome.APPLIED, ApplyOutcome.DEFERRED);
    }

    /**
     * Mid-stop (the registry takes 10 s to stop), with no daemon running: the daemon started afterwards recovers the
     * window at start-up, before its first apply.
     */
    @Test
    void killedMidStopThenTheDaemonStarts() throws Exception {
        setDesired(yaml("one", "unless-stopped", sleepStep(5), "2m", true), "r1");
        applyInProcess();
        assertThat(running(registry)).isTrue();
        String id = inspect(registry).getId();
        Instant t0 = Instant.now();

        ChildJvm w = window("window");
        String windowId = awaitHeldWindowId();
        // the stop has begun (SIGTERM sent, ignored) and the registry still runs
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                .until(() -> eventsOf(id, t0).stream().anyMatch(e -> "kill".equals(io.mesh.testing.TestDocker.action(e))));
        assertThat(running(registry)).isTrue();
        w.kill9();

        daemon("daemon", "1s");
        assertRecovered(id, t0, windowId, Duration.ofSeconds(60));
    }
}
