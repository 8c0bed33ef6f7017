package io.mesh.faults;

import com.github.dockerjava.api.model.Event;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.Dockerd;
import io.mesh.zk.ApplyReport;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fault 9 (docs/failure-model.md): dockerd restarts in the middle of a window while the held container has
 * {@code restart: always}. Docker starts a manually stopped {@code always} container when dockerd starts: the
 * seed's bug by another road. The window switches the policy to {@code unless-stopped} while it holds the container,
 * so after dockerd is back the container stays stopped until its window starts it; then the policy is
 * {@code always} again, and it is the same container.
 *
 * <p>The window's process is frozen (SIGSTOP) across the restart, so that the observation "dockerd itself did not
 * start it" does not race with the window's own start (dockerd's shutdown stops every container on the machine,
 * up to its 15 s shutdown timeout, so the freeze may outlast the session: the window's journal still holds the
 * container then); a daemon reconciling every second runs throughout and must not touch the held container.
 */
class DockerRestartMidWindowTest extends FaultFixture {

    @Test
    void aHeldAlwaysContainerStaysStoppedAcrossADockerdRestart() throws Exception {
        ChildJvm daemon = daemonWithR1Applied("daemon", "1s", "always", 20, "1m");
        String id = inspect(registry).getId();
        assertThat(inspect(registry).getHostConfig().getRestartPolicy().getName()).isEqualTo("always");
        Instant t0 = Instant.now();

        ChildJvm w = window("window");
        await().atMost(Duration.ofSeconds(30)).until(() -> !runningStepContainers().isEmpty());
        assertThat(running(registry)).isFalse();
        assertThat(inspect(registry).getHostConfig().getRestartPolicy().getName()).isEqualTo("unless-stopped");

        w.pause();
        Duration down;
        try {
            down = Dockerd.restart();
            System.out.println("dockerd was down for " + down.toMillis() + " ms");
            sleep(Duration.ofSeconds(2));   // dockerd starts restart-policy containers as it comes up
            // the window is still open: its journal says so (its held node too, unless dockerd took longer to
            // restart than the frozen process's session lasts: fault 2, SessionExpiryTest)
            assertThat(journal()).as("window journal").exists();
            assertThat(running(registry)).as("held container started by dockerd").isFalse();
            assertThat(inspect(registry).getId()).isEqualTo(id);
        } finally {
            Dockerd.ensureRunning();
            w.resume();
        }

        w.awaitExit(Duration.ofSeconds(90));
        await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> running(registry));
        assertThat(inspect(registry).getId()).isEqualTo(id);
        assertThat(inspect(registry).getHostConfig().getRestartPolicy().getName()).isEqualTo("always");
        assertThat(exists(paths.held(host, registry))).isFalse();
        assertThat(exists(paths.window(host, module))).isFalse();
        ApplyReport r = awaitReport(Duration.ofSeconds(30), x -> x.lastWindow() != null);
        assertThat(r.lastWindow().held()).containsExactly(registry);
        assertThat(daemon.isAlive()).isTrue();

        events.settle();
        List<Event> mine = eventsOf(id, t0);
        assertThat(actions(mine)).as("events of the held container:\n%s", DockerEvents.describe(mine))
                .doesNotContain("create", "destroy", "rename");
        assertThat(actions(mine).stream().filter("start"::equals).count()).as("started once, by its window").isEqualTo(1);
    }
}
