package io.mesh.faults;

import com.github.dockerjava.api.model.Event;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.Dockerd;
import io.mesh.testing.TestDocker;
import io.mesh.wire.ApplyOutcome;
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
import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fault 10 (docs/failure-model.md): the agent daemon restarts while a window runs in another process; and the host
 * "reboots" mid-window (every mesh process killed, dockerd stopped and started). After start-up the agent finishes
 * or recovers the window before its first apply, and never recreates the held container.
 */
@Tag("restarts-dockerd")
class AgentRestartTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    /** The daemon restarts while another process's window holds the registry: it defers, then lands the push after. */
    @Test
    @DaemonWithR1(name = "daemon-1", stepSeconds = 14)
    void daemonRestartedWhileAWindowRunsElsewhere(ChildJvm first) throws Exception {
        String id = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();

        ChildJvm w = fx.window("window");
        String windowId = fx.awaitHeldWindowId();
        await().atMost(Duration.ofSeconds(30)).until(() -> !fx.runningStepContainers().isEmpty());
        first.terminate(Duration.ofSeconds(20));
        ChildJvm second = fx.daemon("daemon-2", "1s");
        fx.setDesired(fx.yaml("two", "unless-stopped", sleepStep(14), "1m"), "r2");
        ApplyReport deferred = fx.awaitReport(Duration.ofSeconds(30), r -> r.outcome() == ApplyOutcome.DEFERRED && "r2".equals(r.revision()));
        assertThat(deferred.window().window()).isEqualTo(windowId);
        assertThat(fx.running(fx.registry)).isFalse();

        assertThat(w.awaitExit(Duration.ofSeconds(60))).as("window log:\n%s", w.output()).isZero();
        WindowResult r = result(w);
        assertThat(r.outcome()).isEqualTo(WindowOutcome.SUCCEEDED);
        fx.awaitApplied("r2", Duration.ofSeconds(30));
        fx.awaitConverged("two", Duration.ofSeconds(30));
        assertThat(second.isAlive()).isTrue();

        fx.events.settle();
        long end = (r.finishedAt().toEpochMilli() + 1) * 1_000_000L;
        List<Event> during = fx.events.since(t0).stream().filter(e -> e.getTimeNano() <= end)
                .filter(e -> id.equals(e.getId()) || fx.registry.equals(TestDocker.name(e))).toList();
        assertThat(actions(during)).as("held container during the window:\n%s", DockerEvents.describe(during))
                .doesNotContain("create", "destroy", "rename");
        assertThat(actions(during).stream().filter("start"::equals).count()).isEqualTo(1);
    }

    /**
     * A host reboot mid-window: the window's process and the daemon are killed, dockerd is stopped and started, and
     * the daemon starts again with the same --state-dir. Before its first apply acts it recovers the window: the held
     * registry runs again (the same container), the step is gone, the znodes and the journal are cleared, and the
     * first report that is not a deferral (the dead processes' lock node lives until their sessions expire) already
     * names the window, with outcome {@code recovered}.
     */
    @Test
    @DaemonWithR1(name = "daemon-1", stepSeconds = 30, timeout = "2m")
    void hostRebootedMidWindow(ChildJvm first) throws Exception {
        String id = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();

        ChildJvm w = fx.window("window");
        String windowId = fx.awaitHeldWindowId();
        await().atMost(Duration.ofSeconds(30)).until(() -> !fx.runningStepContainers().isEmpty());
        w.kill9();
        first.kill9();
        try {
            Duration down = Dockerd.restart();
            System.out.println("dockerd was down for " + down.toMillis() + " ms");
        } finally {
            Dockerd.ensureRunning();
        }
        assertThat(fx.running(fx.registry)).as("held registry after the reboot, before the agent starts").isFalse();
        long zxid = fx.zxidNow();

        fx.daemon("daemon-2", "1s");
        fx.assertRecovered(id, t0, windowId, Duration.ofSeconds(60));
        // Before the recovery, the new daemon's applies did nothing but defer (the dead processes' lock node lives
        // until their sessions expire); the first report that is not a deferral already names the recovered window.
        List<ApplyReport> after = fx.reportHistory(zxid);
        ApplyReport firstActing = after.stream().filter(x -> x.outcome() != ApplyOutcome.DEFERRED).findFirst()
                .orElseThrow(() -> new AssertionError("no report after start-up: " + after));
        assertThat(firstActing.lastWindow()).as("first non-deferred report after start-up: %s", firstActing).isNotNull();
        assertThat(firstActing.lastWindow().window()).isEqualTo(windowId);
        assertThat(firstActing.lastWindow().outcome()).isEqualTo(WindowOutcome.RECOVERED);
        fx.awaitConverged("one", Duration.ofSeconds(30));
    }
}
