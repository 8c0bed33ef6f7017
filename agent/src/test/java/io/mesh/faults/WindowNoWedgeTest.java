package io.mesh.faults;

import com.github.dockerjava.api.model.Event;
import io.mesh.section.ModuleLock;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.window.HostContext;
import io.mesh.window.WindowJournal;
import io.mesh.window.WindowRunner;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowOutcome;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static io.mesh.faults.FaultFixture.SCHEDULE;
import static io.mesh.faults.FaultFixture.actions;
import static io.mesh.faults.FaultFixture.nanos;
import static io.mesh.faults.FaultFixture.result;
import static io.mesh.faults.FaultFixture.sleep;
import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A window cannot wedge its module: whatever way a window ends, its containers run again with their
 * restart policies back, its journal is gone, and the module's applies are not deferred for ever.
 */
@Tag("slow")
class WindowNoWedgeTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    /**
     * A window left its journal behind while its process lives: the entry names the daemon's own (live) pid, a
     * stopped registry whose {@code always} policy was set to {@code no}, a deadline ten minutes away. (The test writes
     * it under the module lock, so that the daemon meets it only once it is complete.) This is failure model row
     * 20's fault: "one path leaves the journal naming a live process, after which every apply of the module is
     * {@code deferred} forever and every window refused, until the daemon restarts".
     *
     * <p>The daemon's next apply takes the fence, which proves that no window of the module runs on the host, finishes
     * the window (policy back, the same container started, the journal deleted) and reports {@code applied}, within
     * seconds; a window of the module then runs and succeeds.
     *
     * <p>On the code before commit 00dc6f7 the apply saw a journal whose owner lives and deferred, waiting for that
     * owner to end: the daemon itself. The registry stayed stopped; this test fails at the first bound.
     */
    @Test
    @DaemonWithR1(restart = "always", stepSeconds = 2)
    void aJournalLeftByALiveProcessIsFinishedByTheNextApply(ChildJvm daemon) throws Exception {
        String id = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();
        String windowId = "w-" + System.currentTimeMillis() + "-wedge";

        ModuleLock lock = new ModuleLock(fx.client, fx.paths, fx.module, fx.host, ProcessRef.current("fault test"), LockHolder.APPLY);
        assertThat(lock.acquire(Duration.ofSeconds(30))).as("the test takes the module lock").isTrue();
        try {
            fx.docker.stop(id, 2);
            fx.setRestartPolicy(id, "no");
            Instant daemonStart = ProcessHandle.of(daemon.pid()).orElseThrow().info().startInstant().orElseThrow();
            Instant since = Instant.now().minusSeconds(60);
            String entry = "{\"host\":\"" + fx.host + "\",\"module\":\"" + fx.module + "\",\"schedule\":\"" + SCHEDULE + "\",\"window\":\"" + windowId
                    + "\",\"since\":\"" + since + "\",\"deadline\":\"" + Instant.now().plusSeconds(600) + "\","
                    + "\"owner\":{\"pid\":" + daemon.pid() + ",\"process\":\"mesh-agent run\"},\"ownerStart\":\"" + daemonStart + "\","
                    + "\"stepContainer\":\"" + fx.module + "." + SCHEDULE + "." + windowId + "\","
                    + "\"held\":[{\"container\":\"" + fx.registry + "\",\"containerId\":\"" + id + "\",\"restorePolicy\":\"always\"}]}";
            Files.createDirectories(fx.journal().getParent());
            Files.writeString(fx.journal(), entry);
        } finally {
            lock.release();
        }
        Instant released = Instant.now();

        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().untilAsserted(() -> {
            assertThat(fx.running(fx.registry)).as("registry running").isTrue();
            assertThat(Files.exists(fx.journal())).as("journal %s gone", fx.journal()).isFalse();
        });
        assertThat(fx.inspect(fx.registry).getId()).as("the same container").isEqualTo(id);
        assertThat(fx.restartPolicy(id)).as("restart policy back").isEqualTo("always");
        ApplyReport r = fx.awaitReport(Duration.ofSeconds(30), x -> x.outcome() == ApplyOutcome.APPLIED
                && x.finishedAt() != null && x.finishedAt().isAfter(released));
        System.out.println("applied " + Duration.between(released, r.finishedAt()).toMillis() + " ms after the journal was left; lastWindow "
                + r.lastWindow());
        assertThat(r.revision()).isEqualTo("r1");
        ApplyReport withWindow = fx.awaitReport(Duration.ofSeconds(10), x -> x.lastWindow() != null && windowId.equals(x.lastWindow().window()));
        assertThat(withWindow.lastWindow().outcome()).isEqualTo(WindowOutcome.RECOVERED);

        // the module is not wedged: a window of it runs
        ChildJvm w = fx.window("window");
        assertThat(w.awaitExit(Duration.ofSeconds(90))).as("window exit; log:\n%s", w.output()).isZero();
        assertThat(result(w).outcome()).isEqualTo(WindowOutcome.SUCCEEDED);
        await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> fx.running(fx.registry));
        assertThat(fx.inspect(fx.registry).getId()).isEqualTo(id);
        assertThat(daemon.isAlive()).isTrue();

        fx.events.settle();
        List<Event> mine = fx.eventsOf(id, t0);
        assertThat(actions(mine)).as("events of the registry:\n%s", DockerEvents.describe(mine)).doesNotContain("create", "destroy", "rename");
    }

    /**
     * A window run in this JVM ({@link WindowRunner}) is interrupted while it stops its held container (a registry
     * that ignores SIGTERM: the stop lasts its 6 s stop-timeout), as a shutdown of the daemon that runs it would. Its
     * registry runs again, its {@code always} policy is back, the journal and the znodes are gone, no step runs, and
     * the next apply is {@code applied}, not deferred.
     *
     * <p>The bugs it catches (the interrupt left pending, and a stop dockerd finished after the window gave its
     * container back, hence the check past the stop-timeout): docs/failure-model.md, row 20; the fix, commit 62aa106.
     */
    @Test
    void aWindowInterruptedWhileItStopsItsContainersGivesThemBack() throws Exception {
        String slow = "trap 'echo ignored' TERM; while true; do sleep 1; done";
        fx.setDesired(fx.yaml("one", "always", sleepStep(3), "1m", slow, 6), "r1");
        assertThat(fx.applyInProcess().outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String id = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();

        WindowRunner runner = new WindowRunner(HostContext.of(fx.store, fx.docker, fx.host, ProcessRef.current("fault test window"),
                new WindowJournal(fx.stateDir)));
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                outcome.set(runner.run(fx.module, SCHEDULE, Duration.ofSeconds(30)));
            } catch (Throwable e) {
                outcome.set(e);
            }
        }, "window-under-test");
        t.start();
        // the window's stop has begun: SIGTERM (ignored) sent to the registry
        Event[] sigterm = new Event[1];
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> {
            sigterm[0] = fx.eventsOf(id, t0).stream().filter(e -> "kill".equals(TestDocker.action(e))).findFirst().orElse(null);
            return sigterm[0] != null;
        });
        t.interrupt();
        t.join(Duration.ofSeconds(120).toMillis());
        assertThat(t.isAlive()).as("window thread still running").isFalse();
        System.out.println("interrupted window ended with: " + outcome.get());

        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().untilAsserted(() -> {
            assertThat(fx.running(fx.registry)).as("registry running").isTrue();
            assertThat(Files.exists(fx.journal())).as("journal gone").isFalse();
            assertThat(fx.exists(fx.heldNode())).as("held node gone").isFalse();
            assertThat(fx.exists(fx.windowNode())).as("window node gone").isFalse();
        });
        assertThat(fx.inspect(fx.registry).getId()).isEqualTo(id);
        assertThat(fx.restartPolicy(id)).as("restart policy back").isEqualTo("always");
        assertThat(fx.runningStepContainers()).as("running step containers").isEmpty();
        // and it keeps running: past the moment dockerd would SIGKILL it if the window's stop were still under way
        Instant stopEnds = Instant.ofEpochSecond(0, nanos(sigterm[0])).plusSeconds(6 + 2);
        Duration left = Duration.between(Instant.now(), stopEnds);
        if (!left.isNegative()) sleep(left); // deliberate: a quiet period up to that moment
        fx.events.settle();
        assertThat(fx.running(fx.registry)).as("registry still running %s after the window's SIGTERM; its events:\n%s",
                Duration.ofSeconds(8), DockerEvents.describe(fx.eventsOf(id, t0))).isTrue();

        ApplyReport next = fx.applyInProcess();
        assertThat(next.outcome()).as("the next apply: %s", next).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(next.window()).isNull();
        assertThat(fx.inspect(fx.registry).getId()).isEqualTo(id);

        fx.events.settle();
        List<Event> mine = fx.eventsOf(id, t0);
        assertThat(actions(mine)).as("events of the registry:\n%s", DockerEvents.describe(mine)).doesNotContain("create", "destroy", "rename");
    }
}
