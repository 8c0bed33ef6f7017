package io.mesh.faults;

import com.github.dockerjava.api.model.Event;
import io.mesh.curator.MeshZk;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
import io.mesh.wire.ApplyOutcome;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static io.mesh.faults.FaultFixture.actions;
import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fault 1 (docs/failure-model.md): {@code kill -9} of the process running a window, mid-step and mid-stop. The
 * window's journal ({@code <state-dir>/windows/<module>.json}, written before the first stop) lets the daemon finish
 * it: the step container does not keep running, the held container runs again (the same container), the znodes and
 * the journal go, the report's {@code lastWindow} names the window. No apply recreates the held container meanwhile.
 * Row 75: the daemon notices the death itself, within seconds, not at its next reconcile. The recovery runs the
 * {@code post-start} of each container it starts again (decision 38), as the window would have.
 */
@Tag("slow")
class WindowProcessKillTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    /** Mid-step, with the daemon running all along: an apply that gets the module lock finds the journal and recovers. */
    @Test
    @DaemonWithR1(stepSeconds = 12, timeout = "2m")
    void killedMidStepWhileTheDaemonRuns(ChildJvm daemon) throws Exception {
        String id = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();

        ChildJvm w = fx.window("window");
        String windowId = fx.awaitHeldWindowId();
        await().atMost(Duration.ofSeconds(30)).until(() -> !fx.runningStepContainers().isEmpty());
        assertThat(fx.journal()).exists();
        w.kill9();

        fx.assertRecovered(id, t0, windowId, Duration.ofSeconds(60));
        assertThat(daemon.isAlive()).isTrue();
        assertThat(fx.report().outcome()).isIn(ApplyOutcome.APPLIED, ApplyOutcome.DEFERRED);
    }

    /**
     * Mid-step, with a daemon that reconciles only every ten minutes: it notices the window's death from its journal
     * (the owner is dead) and applies the module at once, which gives the container back as soon as the dead
     * session's lock child goes (the session timeout). From Docker: the registry runs again within the session
     * timeout and 20 s of the kill.
     */
    @Test
    @DaemonWithR1(stepSeconds = 5, timeout = "2m", reconcile = "10m")
    void killedMidStepIsRecoveredWithinSecondsOfItsDeathNotAtTheNextReconcile(ChildJvm daemon) throws Exception {
        String id = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();

        ChildJvm w = fx.window("window");
        String windowId = fx.awaitHeldWindowId();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> !fx.runningStepContainers().isEmpty());
        assertThat(fx.journal()).exists();
        assertThat(fx.running(fx.registry)).isFalse();
        w.kill9();
        long killed = System.nanoTime();

        Duration bound = MeshZk.SESSION_TIMEOUT.plusSeconds(20);
        await().atMost(bound).pollInterval(Duration.ofMillis(100)).until(() -> fx.running(fx.registry));
        System.out.printf("window process killed: its held container ran again %d ms after%n", (System.nanoTime() - killed) / 1_000_000);
        fx.assertRecovered(id, t0, windowId, Duration.ofSeconds(20));
        List<Event> registry = fx.eventsOf(id, t0);
        assertThat(actions(registry)).as("Docker's events of the held container:\n%s", DockerEvents.describe(registry)).contains("stop", "start");
        assertThat(daemon.isAlive()).isTrue();
    }

    /**
     * Mid-stop (the registry takes 10 s to stop), with no daemon running: the daemon started afterwards recovers the
     * window at start-up, before its first apply.
     */
    @Test
    void killedMidStopThenTheDaemonStarts() throws Exception {
        fx.setDesired(fx.yaml("one", "unless-stopped", sleepStep(5), "2m", true), "r1");
        fx.applyInProcess();
        assertThat(fx.running(fx.registry)).isTrue();
        String id = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();

        ChildJvm w = fx.window("window");
        String windowId = fx.awaitHeldWindowId();
        // the stop has begun (SIGTERM sent, ignored) and the registry still runs
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50))
                .until(() -> fx.eventsOf(id, t0).stream().anyMatch(e -> "kill".equals(io.mesh.testing.TestDocker.action(e))));
        assertThat(fx.running(fx.registry)).isTrue();
        w.kill9();

        fx.daemon("daemon", "1s");
        fx.assertRecovered(id, t0, windowId, Duration.ofSeconds(60));
    }

    /**
     * Mid-step, with the daemon running all along and a {@code post-start} on the held registry: the daemon's recovery
     * runs it once the registry runs again, from the desired spec it caches (decision 38). Read from the registry's own
     * volume, where the hook appends a line, through Docker: one more line after the recovery than before the window.
     */
    @Test
    void aRecoveryRunsThePostStartOfTheContainerItStartsAgain() throws Exception {
        String hooks = "    hooks: {post-start: [sh, -c, \"echo started >> /data/post-start\"], timeout: 10s}\n";
        String yaml = fx.yaml("one", "unless-stopped", sleepStep(12), "2m");
        fx.setDesired(yaml.replaceFirst("    restart: unless-stopped\n", "    restart: unless-stopped\n" + hooks), "r1");
        ChildJvm daemon = fx.daemon("daemon", "1s");
        fx.awaitApplied("r1", Duration.ofSeconds(60));
        String id = fx.inspect(fx.registry).getId();
        int before = postStartLines(id);
        Instant t0 = Instant.now();

        ChildJvm w = fx.window("window");
        String windowId = fx.awaitHeldWindowId();
        await().atMost(Duration.ofSeconds(30)).until(() -> !fx.runningStepContainers().isEmpty());
        w.kill9();

        fx.assertRecovered(id, t0, windowId, Duration.ofSeconds(60));
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() -> postStartLines(id) == before + 1);
        assertThat(fx.report().lastWindow().hooks()).as("the recovered window's result").anyMatch(l -> l.startsWith("post-start of " + fx.registry));
        assertThat(daemon.isAlive()).isTrue();
    }

    /** @return the lines the registry's post-start wrote into its volume, read by an exec Docker runs */
    private static int postStartLines(String id) {
        io.mesh.docker.ExecResult r = io.mesh.testing.TestDocker.engine().exec(id, List.of("sh", "-c", "cat /data/post-start 2>/dev/null || true"),
                Duration.ofSeconds(10), 100);
        return (int) r.output().stream().filter("started"::equals).count();
    }
}
