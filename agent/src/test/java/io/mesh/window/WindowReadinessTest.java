package io.mesh.window;

import com.github.dockerjava.api.model.Event;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZkTxnLog;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.WindowResult;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A window keeps its held nodes until the containers it started again are ready (SPEC.md, "Health and readiness";
 * docs/decisions/0010-readiness.md), and says so in its result when one is not. Evidence: Docker's start event of the
 * held container against the deletion of its held node in ZooKeeper's transaction log. Real engine, real ZooKeeper.
 */
@Tag("slow") // waits out min-healthy, deadlines and Docker's restart back-off: the full run, not --fast
class WindowReadinessTest {
    private static final String HOST = ApplierExtension.HOST;
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "wr");
    private DockerEngine docker;
    private String module;

    @BeforeEach
    void setUp() {
        docker = here.docker();
        module = here.module();
    }

    /** @param web the command of the held container, which marks its first run in /tmp/ran */
    private void push(String web, String ready) throws Exception {
        zk.setDesired("module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  web:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"" + web + "\"]\n    network: none\n    stop-timeout: 1s\n"
                + "    restart: \"no\"\n    ready: " + ready + "\n"
                + "schedules:\n  gc:\n    cron: \"30 3 * * *\"\n    while-stopped: [web]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [\"true\"]\n    timeout: 1m\n", "r1");
        assertThat(here.applier().apply(module, () -> false).outcome())
                .isEqualTo(ApplyOutcome.APPLIED);
    }

    @Test
    void theHeldNodeOutlastsTheGiveBackByMinHealthy() throws Exception {
        push("trap 'exit 0' TERM; while true; do sleep 1; done", "{min-healthy: 3s}");
        String id = docker.idByName(module + "-web");
        long zxid = zk.client().checkExists().forPath("/").getPzxid();
        Instant from = Instant.now();
        WindowResult w = here.windows().run(module, "gc", Duration.ofSeconds(5));
        assertThat(w.succeeded()).as("result %s", w).isTrue();
        List<Event> events = TestDocker.events(module, from, Instant.now());
        long started = events.stream().filter(e -> id.equals(e.getId()) && TestDocker.action(e).equals("start"))
                .mapToLong(Event::getTimeNano).max().orElseThrow();
        String held = zk.paths().held(HOST, module + "-web");
        ZkTxnLog.Change released = ZkTxnLog.read(zk.server().getTempDirectory().toPath(), zxid).stream()
                .filter(c -> c.path().equals(held) && c.kind() == ZkTxnLog.Kind.DELETE).findFirst().orElseThrow();
        assertThat(Duration.ofMillis(released.time()).minusNanos(started))
                .as("held node deleted after the container ran 3 s again").isGreaterThanOrEqualTo(Duration.ofMillis(2_900));
        assertThat(docker.isRunning(id)).isTrue();
    }

    @Test
    void aContainerNotReadyAgainIsSaidInTheWindowsResultAndReleased() throws Exception {
        // Runs the first time; exits at once every time after (as if the step had broken what it needs).
        push("test -e /tmp/ran && echo cannot read /data/index && exit 5; touch /tmp/ran; trap 'exit 0' TERM; while true; do sleep 1; done",
                "{min-healthy: 2s}");
        WindowResult w = here.windows().run(module, "gc", Duration.ofSeconds(5));
        assertThat(w.succeeded()).as("result %s", w).isFalse();
        assertThat(w.error()).contains(module + "-web is not ready again: not ready: exited (5)").contains("log: cannot read /data/index");
        assertThat(zk.client().checkExists().forPath(zk.paths().held(HOST, module + "-web"))).as("released all the same").isNull();
    }
}
