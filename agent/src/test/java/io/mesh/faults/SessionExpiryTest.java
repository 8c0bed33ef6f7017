package io.mesh.faults;

import com.github.dockerjava.api.model.Event;
import io.mesh.curator.MeshZk;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.WindowResult;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static io.mesh.faults.FaultFixture.actions;
import static io.mesh.faults.FaultFixture.result;
import static io.mesh.faults.FaultFixture.sleep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fault 2 (docs/failure-model.md): the window's process loses its ZooKeeper session mid-window (frozen with SIGSTOP
 * for longer than the 15 s session timeout, as a long GC pause or a stalled VM would). Its lock node and its held
 * and window nodes vanish with the session: the CURATOR-206 class, where another client then gets the same lock.
 * A daemon reconciling every second (same host, same --state-dir) must still not touch the held container: the
 * window's journal names it and its owner is alive. When the window's process runs again it notices the lost
 * session before its next Docker call, its held and window nodes come back, and the window ends normally: the same
 * container started once, by the window.
 */
@Tag("slow")
class SessionExpiryTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    @Test
    @DaemonWithR1(stepSeconds = 32, timeout = "2m")
    void windowProcessLosesItsSessionMidWindow(ChildJvm daemon) throws Exception {
        String id = fx.inspect(fx.registry).getId();
        Instant t0 = Instant.now();

        ChildJvm w = fx.window("window");
        String windowId = fx.awaitHeldWindowId();
        await().atMost(Duration.ofSeconds(30)).until(() -> !fx.runningStepContainers().isEmpty());
        long firstOwner = fx.stat(fx.heldNode()).getEphemeralOwner();

        w.pause();
        try {
            // the session expires: the held node goes with it
            await().atMost(MeshZk.SESSION_TIMEOUT.plusSeconds(15)).pollInterval(Duration.ofMillis(200))
                    .until(() -> !fx.exists(fx.heldNode()));
            sleep(Duration.ofSeconds(3));   // deliberate: a quiet period of several reconciles of the daemon
            assertThat(fx.running(fx.registry)).as("held container running while its window's process is frozen").isFalse();
            assertThat(fx.inspect(fx.registry).getId()).isEqualTo(id);
        } finally {
            w.resume();
        }

        // the nodes come back, from the window's new session, while the step still runs
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(() -> {
            Stat s = fx.stat(fx.heldNode());
            return s != null && s.getEphemeralOwner() != firstOwner;
        });
        HeldRecord back = Json.read(fx.client.getData().forPath(fx.heldNode()), HeldRecord.class);
        assertThat(back.window()).isEqualTo(windowId);
        assertThat(fx.exists(fx.windowNode())).isTrue();

        w.awaitExit(Duration.ofSeconds(90));
        WindowResult r = result(w);
        assertThat(r.window()).isEqualTo(windowId);
        await().atMost(Duration.ofSeconds(20)).ignoreExceptions().until(() -> fx.running(fx.registry));
        assertThat(fx.inspect(fx.registry).getId()).isEqualTo(id);
        assertThat(daemon.isAlive()).isTrue();

        fx.events.settle();
        List<Event> mine = fx.events.since(t0).stream()
                .filter(e -> id.equals(e.getId()) || fx.registry.equals(TestDocker.name(e))).toList();
        assertThat(actions(mine)).as("events of the held container:\n%s", DockerEvents.describe(mine))
                .doesNotContain("create", "destroy", "rename");
        assertThat(actions(mine).stream().filter("start"::equals).count()).as("started once, by its window").isEqualTo(1);
    }
}
