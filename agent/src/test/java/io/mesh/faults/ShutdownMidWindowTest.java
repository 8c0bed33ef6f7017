package io.mesh.faults;

import io.mesh.testing.ChildJvm;
import io.mesh.window.WindowJournal;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowRequest;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

import static io.mesh.faults.FaultFixture.SCHEDULE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 11, requirement 12 (failure model: "the agent is told to stop mid-window"): a daemon that gets SIGTERM while
 * its window's step runs says at once, in its log, which window it waits for and until when (the deadline its journal
 * names), waits for the window to end (a second SIGTERM changes nothing), and exits with the held container running
 * again: the same container. A real {@code mesh-agent run} JVM, the real ensemble and Docker engine.
 */
@Tag("slow")
class ShutdownMidWindowTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    @Test
    @DaemonWithR1(stepSeconds = 12)
    void sigtermMidWindowSaysAtOnceWhichWindowItWaitsForAndUntilWhenThenExitsWithTheContainerRunning(ChildJvm daemon) throws Exception {
        String id = fx.inspect(fx.registry).getId();

        // ask this host's agent for a window, as `mesh window run` does through the coordinator
        fx.client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath(fx.paths.windowRequestPrefix(fx.host),
                Json.bytes(WindowRequest.of(fx.module, SCHEDULE, Times.now(), ProcessRef.current("shutdown test"))));
        String windowId = fx.awaitHeldWindowId();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> !fx.runningStepContainers().isEmpty());
        WindowJournal.Entry entry = new WindowJournal(fx.stateDir).read(fx.module).orElseThrow();
        assertThat(entry.window()).isEqualTo(windowId);
        assertThat(fx.running(fx.registry)).isFalse();

        long t0 = System.nanoTime();
        daemon.sigterm();
        String waiting = "stopping: waiting for window " + windowId + " of " + fx.module + "/" + SCHEDULE + " to end (by "
                + ceilSeconds(entry.deadline()) + ": it holds [" + fx.registry + "]";
        await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(20)).until(() -> daemon.output().contains(waiting));
        long saidAfterMs = (System.nanoTime() - t0) / 1_000_000;
        assertThat(daemon.output()).contains("a second SIGTERM changes nothing");

        daemon.sigterm(); // a second one changes nothing: the window still ends as it would
        assertThat(daemon.awaitExit(Duration.ofSeconds(90))).as(daemon.output()).isNotEqualTo(137);
        String log = daemon.output();
        int said = log.indexOf(waiting);
        int ended = log.indexOf("window=" + windowId + " outcome=" + WindowOutcome.SUCCEEDED.wire());
        int stopped = log.indexOf("agent host=" + fx.host + " stopped");
        assertThat(ended).as("the window's end in the log:\n%s", log).isGreaterThan(said);
        assertThat(stopped).as("the daemon stops after the window ended:\n%s", log).isGreaterThan(ended);

        // the held container runs again: the same one, no longer held; the window closed normally
        assertThat(fx.running(fx.registry)).isTrue();
        assertThat(fx.inspect(fx.registry).getId()).isEqualTo(id);
        assertThat(fx.exists(fx.heldNode())).isFalse();
        assertThat(fx.runningStepContainers()).isEmpty();
        assertThat(Files.exists(fx.journal())).isFalse();
        ApplyReport r = fx.awaitReport(Duration.ofSeconds(10), x -> x.lastWindow() != null && windowId.equals(x.lastWindow().window()));
        assertThat(r.lastWindow().outcome()).isEqualTo(WindowOutcome.SUCCEEDED);
        System.out.printf("shutdown mid-window: said what it waits for %d ms after SIGTERM%n", saidAfterMs);
    }

    /** As the daemon writes a deadline: the next whole second, ISO-8601. */
    private static String ceilSeconds(Instant t) {
        Instant s = t.truncatedTo(ChronoUnit.SECONDS);
        return (s.equals(t) ? s : s.plusSeconds(1)).toString();
    }
}
