package io.mesh.faults;

import com.github.dockerjava.api.model.Event;
import io.mesh.testing.DockerEvents;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Instant;
import java.util.List;

import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fail safe on what cannot be read: a held node whose data does not parse still means held; a
 * window journal that cannot be read means a window may be open. In both cases the apply touches nothing of the
 * module, which Docker's events (recorded live) show, and its report says why.
 *
 * <p>The registry is stopped by hand first, as its window would have: an apply that did not know better would read
 * "stopped" as "broken" and recreate it (the seed's bug).
 */
@Tag("slow") // a fault test on the real engine: the full run, not --fast
class FailSafeTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    /**
     * On the code before commit 00dc6f7, {@code MeshStore.held} dropped a held node whose data did not parse (it read
     * as "no record"), so the apply planned the stopped registry {@code recreated}: create, stop, rename, start and
     * destroy of the held container. That is what this test catches there.
     */
    @Test
    void aHeldNodeThatDoesNotParseStillMeansHeld() throws Exception {
        fx.setDesired(fx.yaml("one", "unless-stopped", sleepStep(1), "1m"), "r1");
        assertThat(fx.applyInProcess().outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String id = fx.inspect(fx.registry).getId();
        fx.docker.stop(id, 2);   // stopped on purpose, as a window does
        fx.client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(fx.heldNode(), "{not json".getBytes(StandardCharsets.UTF_8));
        Instant t0 = Instant.now();

        ApplyReport r = fx.applyInProcess();

        ContainerResult reg = r.containers().stream().filter(c -> c.container().equals(fx.registry)).findFirst().orElseThrow();
        assertThat(reg.action()).as("registry in %s", r).isEqualTo(ContainerAction.HELD);
        assertThat(String.join(" ", reg.reasons())).contains("cannot be read");
        assertThat(r.outcome()).isNotEqualTo(ApplyOutcome.FAILED);
        assertThat(fx.running(fx.registry)).as("registry running").isFalse();
        assertThat(fx.inspect(fx.registry).getId()).isEqualTo(id);

        fx.events.settle();
        List<Event> touched = fx.events.since(t0).stream()
                .filter(e -> id.equals(e.getId()) || String.valueOf(io.mesh.testing.TestDocker.name(e)).startsWith(fx.registry)).toList();
        assertThat(touched).as("Docker events of the held registry after the apply began:\n%s", DockerEvents.describe(touched)).isEmpty();
    }

    /**
     * On the code before commit 00dc6f7 the apply also failed and touched nothing here (the journal read threw), but
     * its report said only {@code apply failed: znode data is not a Entry: Unexpected character ...}: neither the file
     * nor what to do. This test catches that: the report must name the file and the fix.
     */
    @Test
    void aJournalThatCannotBeReadMeansAWindowMayBeOpen() throws Exception {
        fx.setDesired(fx.yaml("one", "unless-stopped", sleepStep(1), "1m"), "r1");
        assertThat(fx.applyInProcess().outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String id = fx.inspect(fx.registry).getId();
        fx.docker.stop(id, 2);   // stopped on purpose, by a window whose journal is now torn
        Files.createDirectories(fx.journal().getParent());
        Files.writeString(fx.journal(), "{not json");
        Instant t0 = Instant.now();

        ApplyReport r = fx.applyInProcess();

        assertThat(r.outcome()).as("report %s", r).isEqualTo(ApplyOutcome.FAILED);
        assertThat(r.error()).as("error").contains(fx.journal().toString()).contains("move the file away");
        assertThat(r.push()).as("the report names the push").isNotNull();
        assertThat(fx.report().outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(fx.running(fx.registry)).as("registry running").isFalse();
        assertThat(Files.readString(fx.journal())).as("the journal is left for an operator").isEqualTo("{not json");

        fx.events.settle();
        List<Event> touched = fx.events.since(t0);
        assertThat(touched).as("Docker events of the module after the apply began:\n%s", DockerEvents.describe(touched)).isEmpty();
    }
}
