package io.mesh.agent;

import com.github.dockerjava.api.command.InspectContainerResponse;
import io.mesh.docker.Labels;
import io.mesh.docker.IdleThreads;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An agent at rest keeps no thread per module or per task kind (docs/benchmark-notes.md, B8; decision 23): once its modules are
 * applied, no apply, window, plan, hold or Docker watchdog thread is left, and the next push still lands (a thread
 * comes back for it). Evidence: ZooKeeper reports, {@code docker inspect}, and the threads of this JVM.
 */
@Tag("slow") // waits for a daemon's threads to go idle: the full run, not --fast
class AgentAtRestTest {
    private static final String HOST = "hb8-host";
    /** The names of the threads that exist only while there is work (IdleThreads, DockerEngine's watchdog). */
    private static final List<String> ON_DEMAND = List.of("apply-", "window-", "plans-", "audits-", "operator-holds-", "docker-watchdog");

    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST); // reconcile every 10 min: at rest meanwhile
    private final List<String> modules = IntStream.range(0, 3).mapToObj(i -> TestDocker.uniqueModule("hb8-rest" + i + "-")).toList();

    @AfterEach
    void tearDown() {
        modules.forEach(TestDocker::clean);
    }

    @Test
    void noThreadIsKeptWhileIdleAndTheNextPushStillLands() throws Exception {
        for (String m : modules) zk.setDesired(manifest(m, "1"), "r1");
        for (String m : modules) awaitApplied(m, "r1");
        assertThat(onDemandThreads()).as("while applying, or just after").isNotEmpty();

        await().atMost(IdleThreads.IDLE.multipliedBy(3)).pollInterval(Duration.ofMillis(200))
                .untilAsserted(() -> assertThat(onDemandThreads()).as("threads left at rest").isEmpty());

        zk.setDesired(manifest(modules.get(1), "2"), "r2");
        awaitApplied(modules.get(1), "r2");
        List<String> ids = TestDocker.engine().containersWithLabel(Labels.MODULE, modules.get(1));
        assertThat(ids).hasSize(1);
        InspectContainerResponse c = TestDocker.engine().client().inspectContainerCmd(ids.get(0)).exec();
        assertThat(c.getConfig().getEnv()).contains("ROUND=2");
        assertThat(c.getState().getRunning()).isTrue();
    }

    private void awaitApplied(String module, String revision) {
        String report = zk.paths().report(HOST, module);
        await().atMost(Duration.ofSeconds(60)).until(() -> {
            if (zk.client().checkExists().forPath(report) == null) return false;
            ApplyReport r = Json.readOrNull(zk.client().getData().forPath(report), ApplyReport.class);
            return r != null && r.outcome() == ApplyOutcome.APPLIED && revision.equals(r.revision());
        });
    }

    private static List<String> onDemandThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> ON_DEMAND.stream().anyMatch(n::startsWith)).sorted().toList();
    }

    private static String manifest(String module, String round) {
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n  c:\n    image: " + TestDocker.BUSYBOX
                + "\n    command: [sleep, \"3600\"]\n    env: {ROUND: \"" + round + "\"}\n    network: none\n    stop-timeout: 1s\n";
    }
}
