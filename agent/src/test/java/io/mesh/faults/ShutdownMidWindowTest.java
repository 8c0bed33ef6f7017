package io.mesh.faults;

import com.github.dockerjava.api.model.Event;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.window.WindowJournal;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowRequest;
import io.mesh.wire.WindowResult;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static io.mesh.faults.FaultFixture.SCHEDULE;
import static io.mesh.faults.FaultFixture.actions;
import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Failure model rows 15 and 74 (docs/decisions/0026-agent-stop.md): a mesh process told to stop (SIGTERM, as
 * {@code systemctl stop|restart mesh-agent} or a {@code systemctl restart docker} through the unit's
 * {@code Requires=} sends it) while its window's step runs cuts the step short, gives its held container back and
 * exits within a minute, whatever the window's timeout: a step longer than any stop budget (ten minutes, with a
 * fifteen-minute timeout) must not keep the container stopped nor have the process killed with it stopped. The
 * evidence is Docker's: the same container id runs, started after the SIGTERM (Docker's events), the step container is
 * gone; then the journal, and the report's {@code lastWindow} saying why. A real {@code mesh-agent run} and
 * {@code mesh-agent window} JVM, the real ensemble and Docker engine.
 */
@Tag("slow")
class ShutdownMidWindowTest {
    /** How long a stopping process may take, far below the step's ten minutes. */
    private static final Duration STOP_BOUND = Duration.ofSeconds(60);

    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    @Test
    @DaemonWithR1(stepSeconds = 600, timeout = "15m", reconcile = "10m")
    void sigtermToTheDaemonMidStepCutsTheStepShortGivesTheHeldContainerBackAndExits(ChildJvm daemon) throws Exception {
        String id = fx.inspect(fx.registry).getId();

        // ask this host's agent for a window, as `mesh window run` does through the coordinator
        fx.client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath(fx.paths.windowRequestPrefix(fx.host),
                Json.bytes(WindowRequest.of(fx.module, SCHEDULE, Times.now(), ProcessRef.current("shutdown test"))));
        String windowId = fx.awaitHeldWindowId();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> !fx.runningStepContainers().isEmpty());
        WindowJournal.Entry entry = new WindowJournal(fx.stateDir).read(fx.module).orElseThrow();
        assertThat(entry.window()).isEqualTo(windowId);
        assertThat(fx.running(fx.registry)).isFalse();

        Instant t0 = Instant.now();
        long n0 = System.nanoTime();
        daemon.sigterm();
        String cutting = "stopping: cutting window " + windowId + " of " + fx.module + "/" + SCHEDULE + " short";
        long saidAfterMs = -1; // what it does, said at once: checked after the exit, which matters most
        while (System.nanoTime() - n0 < Duration.ofSeconds(5).toNanos() && daemon.isAlive()) {
            if (daemon.output().contains(cutting)) {
                saidAfterMs = (System.nanoTime() - n0) / 1_000_000;
                break;
            }
            FaultFixture.sleep(Duration.ofMillis(20));
        }

        daemon.sigterm(); // a second one changes nothing: the window still gives its container back
        int exit = daemon.awaitExit(STOP_BOUND);
        long exitedAfterMs = (System.nanoTime() - n0) / 1_000_000;
        assertThat(exit).as(daemon.output()).isNotEqualTo(137);
        assertThat(saidAfterMs).as("'%s' said within 5 s of the SIGTERM:\n%s", cutting, daemon.output()).isBetween(0L, 5_000L);
        assertThat(daemon.output()).contains("a second SIGTERM changes nothing");

        assertGivenBack(id, t0);
        String log = daemon.output();
        int said = log.indexOf(cutting);
        int ended = log.indexOf("window=" + windowId + " outcome=" + WindowOutcome.FAILED.wire());
        int stopped = log.indexOf("agent host=" + fx.host + " stopped");
        assertThat(ended).as("the window's end in the log:\n%s", log).isGreaterThan(said);
        assertThat(stopped).as("the daemon stops after the window ended:\n%s", log).isGreaterThan(ended);
        assertLastWindowSaysWhy(windowId);
        System.out.printf("shutdown mid-window: said what it does %d ms after SIGTERM, exited after %d ms%n", saidAfterMs, exitedAfterMs);
    }

    @Test
    void sigtermToAWindowProcessMidStepCutsTheStepShortGivesTheHeldContainerBackAndExits() throws Exception {
        fx.setDesired(fx.yaml("one", "unless-stopped", sleepStep(600), "15m"), "r1");
        fx.applyInProcess();
        assertThat(fx.running(fx.registry)).isTrue();
        String id = fx.inspect(fx.registry).getId();

        ChildJvm w = fx.window("window"); // no daemon on this host: nobody else would give the container back
        String windowId = fx.awaitHeldWindowId();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> !fx.runningStepContainers().isEmpty());
        assertThat(fx.running(fx.registry)).isFalse();

        Instant t0 = Instant.now();
        long n0 = System.nanoTime();
        w.sigterm();
        int exit = w.awaitExit(STOP_BOUND);
        long exitedAfterMs = (System.nanoTime() - n0) / 1_000_000;
        assertThat(exit).as(w.output()).isNotIn(0, 137);

        assertGivenBack(id, t0);
        WindowResult printed = FaultFixture.result(w);
        assertThat(printed.window()).isEqualTo(windowId);
        assertThat(printed.outcome()).isEqualTo(WindowOutcome.FAILED);
        assertThat(printed.error()).contains("the agent is stopping").contains("cut short");
        assertLastWindowSaysWhy(windowId);
        System.out.printf("shutdown of a window process: exited %d ms after SIGTERM%n", exitedAfterMs);
    }

    /**
     * From Docker: the held container runs again, the same one, started after {@code t0} and neither created,
     * destroyed nor renamed since; the step container was killed and is gone. Then the journal and the held node.
     */
    private void assertGivenBack(String id, Instant t0) {
        assertThat(fx.running(fx.registry)).as("registry running").isTrue();
        assertThat(fx.inspect(fx.registry).getId()).isEqualTo(id);
        fx.events.settle();
        List<Event> registry = fx.eventsOf(id, t0);
        assertThat(actions(registry)).as("Docker's events of the held container since the SIGTERM:\n%s", DockerEvents.describe(registry))
                .contains("start").doesNotContain("create", "destroy", "rename");
        List<String> lifecycle = actions(registry).stream().filter(FaultFixture.TOUCH::contains).toList();
        assertThat(lifecycle.get(lifecycle.size() - 1)).as("the last thing Docker did to it").isEqualTo("start");
        assertThat(fx.stepContainers()).as("step containers left").isEmpty();
        List<String> step = fx.stepEvents(t0).stream().map(TestDocker::action).toList();
        assertThat(step).as("Docker's events of the step container since the SIGTERM").contains("die", "destroy");
        assertThat(Files.exists(fx.journal())).as("journal %s", fx.journal()).isFalse();
        await().atMost(Duration.ofSeconds(20)).until(() -> !fx.exists(fx.heldNode()));
    }

    /** The report's {@code lastWindow}: the window failed because its step was cut short by the agent's stop. */
    private void assertLastWindowSaysWhy(String windowId) {
        ApplyReport r = fx.awaitReport(Duration.ofSeconds(10), x -> x.lastWindow() != null && windowId.equals(x.lastWindow().window()));
        assertThat(r.lastWindow().outcome()).isEqualTo(WindowOutcome.FAILED);
        assertThat(r.lastWindow().error()).as("lastWindow %s", r.lastWindow()).contains("the agent is stopping").contains("cut short");
        assertThat(r.lastWindow().held()).containsExactly(fx.registry);
    }
}
