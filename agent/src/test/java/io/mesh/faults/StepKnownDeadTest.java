package io.mesh.faults;

import com.github.dockerjava.api.exception.DockerClientException;
import com.github.dockerjava.api.model.Event;
import io.mesh.docker.ContainerRuntime;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.window.HostContext;
import io.mesh.window.WindowJournal;
import io.mesh.window.WindowRunner;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static io.mesh.faults.FaultFixture.SCHEDULE;
import static io.mesh.faults.FaultFixture.actions;
import static io.mesh.faults.FaultFixture.nanos;
import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The step is known dead before held containers start. A window whose wait for its step breaks
 * (dockerd's wait stream cut, a proxy timeout) must not take "the wait failed" for "the step ended": it confirms the
 * step gone (lets it run to the window's deadline, then kills it and sees it stopped) before it starts the held
 * containers again. Evidence: Docker's events, the held container's {@code start} after the step container's
 * {@code die}.
 *
 * <p>The window runs in this JVM ({@link WindowRunner}) over the real Docker engine, through a decorator of the
 * engine ({@link #brokenWait}): not a mock, every call goes to the real {@code DockerEngine}, except that
 * {@code runStep} starts the step for real and then throws as a broken wait stream does. (A real broken stream is
 * hard to make on demand: restarting dockerd also stops the step.)
 *
 * <p>The bug both tests catch (the held container started beside the running step): docs/failure-model.md, row 21.
 */
@Tag("slow")
class StepKnownDeadTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    /** The step outlives the broken wait by a few seconds and ends by itself: the window waits for it. */
    @Test
    void aBrokenWaitIsNotTheStepsEndTheWindowWaitsForIt() throws Exception {
        Run run = windowWithABrokenWait(sleepStep(6), "1m");
        assertThat(run.stepExit()).as("the step ran to its own end").isZero();
        assertThat(run.result().exitCode()).isEqualTo(0);
    }

    /**
     * The step would run for ten minutes: the window lets it run to the window's deadline (its timeout, 2 s, plus the
     * held containers' stop budget, plus 30 s), kills it, sees it dead, and only then starts the registry.
     */
    @Test
    void aStepThatOutlivesItsBrokenWaitIsKilledAtTheDeadlineBeforeTheHeldContainerStarts() throws Exception {
        Run run = windowWithABrokenWait("trap '' TERM; sleep 600", "2s");
        assertThat(run.stepExit()).as("the step was killed").isEqualTo(137);
        assertThat(run.elapsed()).as("the window waited for its deadline").isGreaterThan(Duration.ofSeconds(30));
    }

    private record Run(WindowResult result, int stepExit, Duration elapsed) {}

    private Run windowWithABrokenWait(String step, String timeout) throws Exception {
        fx.setDesired(fx.yaml("one", "unless-stopped", step, timeout), "r1");
        assertThat(fx.applyInProcess().outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String id = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();

        WindowRunner runner = new WindowRunner(HostContext.of(fx.store, brokenWait(fx.docker), fx.host,
                ProcessRef.current("fault test window"), new WindowJournal(fx.stateDir)));
        WindowResult r = runner.run(fx.module, SCHEDULE, Duration.ofSeconds(30));
        Duration elapsed = Duration.between(t0, Instant.now());
        System.out.println("window: " + r + " after " + elapsed.toMillis() + " ms");

        fx.events.settle();
        List<Event> steps = fx.stepEvents(t0);
        List<Event> mine = fx.eventsOf(id, t0);
        String timeline = "step:\n" + DockerEvents.describe(steps) + "registry:\n" + DockerEvents.describe(mine);
        Event die = steps.stream().filter(e -> "die".equals(TestDocker.action(e))).findFirst()
                .orElseThrow(() -> new AssertionError("the step never died:\n" + timeline));
        Event start = mine.stream().filter(e -> "start".equals(TestDocker.action(e))).findFirst()
                .orElseThrow(() -> new AssertionError("the registry never started again:\n" + timeline));
        assertThat(nanos(start)).as("the registry's start after the step's die:\n%s", timeline).isGreaterThan(nanos(die));
        assertThat(actions(mine).stream().filter("start"::equals).count()).as("started once").isEqualTo(1);
        assertThat(actions(mine)).doesNotContain("create", "destroy", "rename");
        assertThat(fx.running(fx.registry)).isTrue();
        assertThat(fx.inspect(fx.registry).getId()).isEqualTo(id);
        assertThat(fx.runningStepContainers()).isEmpty();
        assertThat(r.error()).as("the window says its wait broke").contains("wait stream");
        String exit = die.getActor().getAttributes().get("exitCode");
        return new Run(r, exit == null ? -1 : Integer.parseInt(exit), elapsed);
    }

    /**
     * The real engine, every call forwarded, except {@code runStep}: it starts the step container (for real) and then
     * throws as docker-java does when the wait stream breaks.
     */
    private static ContainerRuntime brokenWait(ContainerRuntime real) {
        return (ContainerRuntime) Proxy.newProxyInstance(ContainerRuntime.class.getClassLoader(), new Class<?>[] {ContainerRuntime.class},
                (p, m, args) -> {
                    if (m.getName().equals("runStep")) {
                        real.start((String) args[0]);
                        throw new DockerClientException("Error while waiting for the step: wait stream broken (simulated)");
                    }
                    try {
                        return m.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
