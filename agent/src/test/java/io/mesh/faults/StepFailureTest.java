package io.mesh.faults;

import com.github.dockerjava.api.model.Event;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
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
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fault 7 (docs/failure-model.md): the step fails, or runs past its {@code timeout}. The step is killed at the
 * timeout; the held container starts again (the same container: no create or destroy); the held and window nodes
 * go; the window's process exits non-zero; the module's report ({@code lastWindow} at
 * {@code /mesh/reports/<host>/<module>}) says which outcome and why.
 */
@Tag("slow")
class StepFailureTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    @Test
    void aFailingStepStillStartsTheHeldContainerAndTheReportSaysWhy() throws Exception {
        fx.setDesired(fx.yaml("one", "unless-stopped", "echo collecting; exit 3", "1m"), "r1");
        assertThat(fx.applyInProcess().outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String id = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();

        ChildJvm w = fx.window("window");
        assertThat(w.awaitExit(Duration.ofSeconds(60))).as("exit code; log:\n%s", w.output()).isEqualTo(1);
        WindowResult r = result(w);
        assertThat(r.outcome()).isEqualTo(WindowOutcome.STEP_FAILED);
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.error()).isEqualTo("step exited 3");
        assertThat(r.logTail()).contains("collecting");
        assertThat(r.held()).containsExactly(fx.registry);

        assertHeldContainerBackAndReported(id, t0, r);
    }

    @Test
    void aStepPastItsTimeoutIsKilledAndTheHeldContainerStartsAgain() throws Exception {
        fx.setDesired(fx.yaml("one", "unless-stopped", "echo started; sleep 600", "3s"), "r1");
        assertThat(fx.applyInProcess().outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String id = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();

        ChildJvm w = fx.window("window");
        assertThat(w.awaitExit(Duration.ofSeconds(60))).as("exit code; log:\n%s", w.output()).isEqualTo(1);
        WindowResult r = result(w);
        assertThat(r.outcome()).isEqualTo(WindowOutcome.TIMED_OUT);
        assertThat(r.error()).contains("timeout").contains("3s");
        assertThat(r.logTail()).contains("started");
        // killed at the timeout, not at the end of its sleep
        assertThat(Duration.between(r.startedAt(), r.finishedAt())).isLessThan(Duration.ofSeconds(30));
        assertThat(fx.runningStepContainers()).as("step containers still running").isEmpty();

        assertHeldContainerBackAndReported(id, t0, r);
    }

    private void assertHeldContainerBackAndReported(String id, Instant t0, WindowResult r) throws Exception {
        assertThat(fx.running(fx.registry)).isTrue();
        assertThat(fx.inspect(fx.registry).getId()).isEqualTo(id);
        assertThat(fx.exists(fx.heldNode())).isFalse();
        assertThat(fx.exists(fx.windowNode())).isFalse();
        assertThat(fx.lockChildren()).isEmpty();

        ApplyReport report = fx.report();
        assertThat(report.lastWindow()).isNotNull();
        assertThat(report.lastWindow().window()).isEqualTo(r.window());
        assertThat(report.lastWindow().outcome()).isEqualTo(r.outcome());
        assertThat(report.lastWindow().error()).isEqualTo(r.error());

        fx.events.settle();
        List<Event> mine = fx.eventsOf(id, t0);
        assertThat(actions(mine)).as("events of the held container:\n%s", DockerEvents.describe(mine))
                .doesNotContain("create", "destroy", "rename")
                .containsSubsequence("stop", "start");
        assertThat(actions(mine).stream().filter("start"::equals).count()).isEqualTo(1);
    }
}
