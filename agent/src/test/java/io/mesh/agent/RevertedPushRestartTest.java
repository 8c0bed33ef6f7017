package io.mesh.agent;

import com.github.dockerjava.api.model.Event;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.Json;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Failure model row 82: a push whose new container was reverted is not tried again while the previous container runs
 * (decision 10), but only this process remembered it: an agent restart (or a window's or a freeze's report in between)
 * forgot it, and the next apply stopped the running container to try the push again, for as long as the new one took to
 * fail. The agent remembers it under {@code --state-dir}. Evidence: Docker's own events, recorded live, across a restart
 * of the daemon (the same state dir, as a restarted agent has).
 */
@Tag("slow") // watches the restarted daemon for 8 s
class RevertedPushRestartTest {
    private static final String HOST = "host-a";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST).reconcileEvery(Duration.ofSeconds(1));
    private final String module = TestDocker.uniqueModule("rr");

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    private String yaml(String command, String env) {
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n  web:\n    image: " + TestDocker.BUSYBOX
                + "\n    network: none\n    stop-timeout: 1s\n    restart: \"no\"\n    env: {V: \"" + env + "\"}\n"
                + "    command: " + command + "\n    ready: {min-healthy: 1s}\n";
    }

    private ApplyReport report() throws Exception {
        byte[] data = zk.client().getData().forPath(zk.paths().report(HOST, module));
        return Json.read(data, ApplyReport.class);
    }

    private List<Event> creates(DockerEvents events, Instant from) {
        events.settle();
        String web = module + "-web";
        return events.since(from).stream().filter(e -> "create".equals(TestDocker.action(e)))
                .filter(e -> TestDocker.name(e) != null && TestDocker.name(e).startsWith(web)).toList();
    }

    @Test
    void aRevertedPushIsNotTriedAgainAfterTheAgentRestartsAndANewPushIs() throws Exception {
        String serve = "[sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]";
        String broken = "[sh, -c, \"echo no config; exit 3\"]";
        zk.setDesired(yaml(serve, "1"), "r1");
        await().atMost(Duration.ofSeconds(30)).until(() -> zk.client().checkExists().forPath(zk.paths().report(HOST, module)) != null
                && report().outcome() == ApplyOutcome.APPLIED);
        String running = TestDocker.engine().idByName(module + "-web");

        try (DockerEvents events = DockerEvents.record(module)) {
            zk.setDesired(yaml(broken, "2"), "r2");
            await().atMost(Duration.ofSeconds(30)).until(() -> report().push().equals("push-0000000002")
                    && report().containers().get(0).action() == ContainerAction.REVERTED);
            assertThat(TestDocker.engine().idByName(module + "-web")).isEqualTo(running);

            agent.close();
            Instant restarted = Instant.now();
            agent.start();
            // Eight reconciles, and past the push's first back-off (2 s): the restarted agent does not try it again.
            Thread.sleep(8_000);
            assertThat(creates(events, restarted)).as("creates after the restart:%n%s", DockerEvents.describe(events.since(restarted)))
                    .isEmpty();
            assertThat(TestDocker.engine().idByName(module + "-web")).isEqualTo(running);
            assertThat(TestDocker.engine().isRunning(running)).isTrue();
            ApplyReport r = report();
            assertThat(r.outcome()).isEqualTo(ApplyOutcome.FAILED);
            assertThat(r.containers().get(0).action()).as("report %s", r).isEqualTo(ContainerAction.REVERTED);
            assertThat(r.containers().get(0).reasons()).contains("log: no config")
                    .anyMatch(s -> s.startsWith("not tried again for this push while the previous container runs"));

            // A new push tries again at once.
            Instant pushed = Instant.now();
            zk.setDesired(yaml(broken, "3"), "r3");
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).until(() -> !creates(events, pushed).isEmpty());
        }
    }
}
