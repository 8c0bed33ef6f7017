package io.mesh.agent;

import com.github.dockerjava.api.model.Event;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyReport;
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
 * Failure model row 81: a module whose container never starts was created again at every reconcile and every retry
 * (a review counted 16 creates in 20 s of a two-container module). A push whose containers did not become ready is
 * tried again on a back-off that doubles per failed try (2 s, 4 s, 8 s ... 5 min); a reconcile in between reports the
 * failure as it stands, naming the next try, and creates nothing; a new push tries at once. Evidence: Docker's own
 * events, recorded live, with a daemon reconciling every second.
 */
@Tag("slow") // watches the daemon for 30 s
class NotReadyBackoffTest {
    private static final String HOST = "host-a";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST).reconcileEvery(Duration.ofSeconds(1));
    private final String module = TestDocker.uniqueModule("nb");

    @AfterEach
    void tearDown() {
        agent.close(); // first: its next try would make the container again after the clean-up
        TestDocker.clean(module);
    }

    private String yaml() {
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  web:\n    image: " + TestDocker.BUSYBOX + "\n    network: none\n    stop-timeout: 1s\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n    ready: {min-healthy: 0s}\n"
                + "  bad:\n    image: " + TestDocker.BUSYBOX + "\n    network: none\n    restart: \"no\"\n"
                + "    command: [sh, -c, \"echo no config here; exit 3\"]\n";
    }

    private List<Event> creates(DockerEvents events, Instant from, String name) {
        events.settle();
        return events.since(from).stream().filter(e -> "create".equals(TestDocker.action(e)) && name.equals(TestDocker.name(e))).toList();
    }

    @Test
    void aContainerThatExitsAtOnceIsTriedOnItsBackOffNotAtEveryReconcileAndANewPushTriesAtOnce() throws Exception {
        String bad = module + "-bad";
        String report = zk.paths().report(HOST, module);
        try (DockerEvents events = DockerEvents.record(module)) {
            Instant t0 = Instant.now();
            zk.setDesired(yaml(), "r1");
            Thread.sleep(30_000);
            List<Event> tries = creates(events, t0, bad);
            // 2 s, 4 s, 8 s, 16 s after each failed try: four tries in 30 s (a fifth at the edge); thirty reconciles.
            assertThat(tries).as("creates of %s in 30 s, reconciling every second:%n%s", bad, DockerEvents.describe(events.since(t0)))
                    .hasSizeBetween(2, 5);
            assertThat(creates(events, t0, module + "-web")).as("the container that runs is created once").hasSize(1);

            // A reconcile between two tries says why and when the next one is.
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                ApplyReport r = Json.read(zk.client().getData().forPath(report), ApplyReport.class);
                ApplyReport.ContainerResult c = r.containers().stream().filter(x -> x.name().equals("bad")).findFirst().orElseThrow();
                assertThat(c.reasons()).as("report %s", r).anyMatch(s -> s.startsWith("not ready: exited (3)"))
                        .contains("log: no config here").anyMatch(s -> s.startsWith("not tried again before "));
            });

            // A new push tries at once, whatever the back-off had come to.
            Instant pushed = Instant.now();
            zk.setDesired(yaml(), "r2");
            await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(200))
                    .until(() -> !creates(events, pushed, bad).isEmpty());
        }
    }
}
