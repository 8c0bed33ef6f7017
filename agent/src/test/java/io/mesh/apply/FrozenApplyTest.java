package io.mesh.apply;

import com.github.dockerjava.api.model.Event;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZkTxnLog;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.Json;
import io.mesh.wire.Times;
import io.mesh.zk.MeshStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Freezes and an apply (SPEC.md "Freezes"; decision 14; failure model rows 74 and 75), on a real Docker engine and a
 * real ZooKeeper: a freeze that comes while an apply runs stops the changes it has not begun; and a freeze stops
 * changes, not repairs: a container left stopped is started again, the same container, while frozen. What Docker did
 * is read from its events.
 */
@Tag("slow")
class FrozenApplyTest {
    private static final String HOST = "host-a";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    /** Reconciles every 10 minutes: pushes and freezes drive every apply here. */
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);
    private final DockerEngine docker = TestDocker.engine();
    private final String module = TestDocker.uniqueModule("fz");
    private final String first = module + "-a1", second = module + "-b2";

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    /**
     * {@code a1} counts as ready only after {@code minHealthy}: an apply that recreates it waits that long; {@code b2}
     * depends on it, so that its change begins only after {@code a1}'s ended.
     */
    private String manifest(String mode, String minHealthy) {
        String serve = "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    env: {MODE: \"" + mode + "\"}\n    network: none\n    stop-timeout: 2s\n    restart: unless-stopped\n";
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  a1:\n    image: " + BUSYBOX + "\n" + serve + "    ready: {min-healthy: " + minHealthy + "}\n"
                + "  b2:\n    image: " + BUSYBOX + "\n" + serve + "    depends-on: {a1: {condition: started}}\n";
    }

    private ApplyReport awaitReport(String revision, java.util.function.Predicate<ApplyReport> ok, Duration within) {
        MeshStore store = new MeshStore(zk.client(), zk.paths());
        return await().atMost(within).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                .until(() -> store.report(HOST, module), r -> r != null && revision.equals(r.revision()) && ok.test(r));
    }

    private void freeze() throws Exception {
        FreezeRecord f = new FreezeRecord("alice", "change window closed", Times.now(), Times.now().plusSeconds(3600));
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().freeze(module), Json.bytes(f));
    }

    private static ApplyReport.ContainerResult result(ApplyReport r, String container) {
        return r.containers().stream().filter(c -> container.equals(c.container())).findFirst().orElseThrow();
    }

    private static boolean touches(Event e, String container) {
        String n = TestDocker.name(e);
        return n != null && (n.equals(container) || n.startsWith(container + "."));
    }

    /**
     * A freeze written while the apply waits for its first container's readiness: that container's recreate finishes,
     * the second one is not begun (no Docker event of it after the freeze), and the report reads deferred with the
     * freeze; thawed, the rest lands.
     */
    @Test
    void aFreezeThatComesMidApplyStopsTheChangesNotYetBegun() throws Exception {
        zk.setDesired(manifest("one", "1s"), "r1");
        awaitReport("r1", r -> r.outcome() == ApplyOutcome.APPLIED, Duration.ofSeconds(60));
        String secondId = docker.inspect(second).getId();
        Instant frozenAt;
        try (DockerEvents events = DockerEvents.record(module)) {
            zk.setDesired(manifest("two", "6s"), "r2");
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> events.all().stream()
                    .anyMatch(e -> "start".equals(TestDocker.action(e)) && first.equals(TestDocker.name(e))));
            frozenAt = Instant.now();
            long zxid = zk.client().checkExists().forPath(zk.paths().desired(module)).getMzxid();
            freeze();
            awaitReport("r2", r -> r.outcome() == ApplyOutcome.DEFERRED, Duration.ofSeconds(40));
            // The apply the freeze met wrote its report first; later applies of the frozen module only repair.
            ApplyReport r2 = ZkTxnLog.read(zk.server().getTempDirectory().toPath(), zxid).stream()
                    .filter(c -> c.path().equals(zk.paths().report(HOST, module)) && c.data() != null)
                    .map(c -> Json.read(c.data(), ApplyReport.class)).filter(r -> "r2".equals(r.revision())).findFirst().orElseThrow();
            assertThat(r2.outcome()).isEqualTo(ApplyOutcome.DEFERRED);
            assertThat(r2.freeze()).as("the report names the freeze").isNotNull();
            assertThat(result(r2, first).action()).as("the change under way finished").isEqualTo(ContainerAction.RECREATED);
            assertThat(result(r2, second).action()).isEqualTo(ContainerAction.UNCHANGED);
            assertThat(result(r2, second).reasons()).anySatisfy(x -> assertThat(x).startsWith("not applied: module frozen since the apply began"));
            events.settle();
            long frozenNanos = frozenAt.getEpochSecond() * 1_000_000_000L + frozenAt.getNano();
            List<Event> secondAfter = events.all().stream().filter(e -> touches(e, second) && e.getTimeNano() != null && e.getTimeNano() > frozenNanos).toList();
            assertThat(secondAfter).as("Docker saw nothing done to %s after the freeze: %s", second, DockerEvents.describe(events.all())).isEmpty();
        }
        assertThat(docker.inspect(second).getId()).isEqualTo(secondId);
        assertThat(docker.inspect(second).getConfig().getEnv()).contains("MODE=one");

        zk.client().delete().forPath(zk.paths().freeze(module));
        agent.daemon().requestApply(module);
        awaitReport("r2", r -> r.outcome() == ApplyOutcome.APPLIED, Duration.ofSeconds(60));
        assertThat(docker.inspect(second).getConfig().getEnv()).contains("MODE=two");
    }

    /**
     * Frozen, a container stopped by someone (a window's give-back that failed, a crash) is started again as it was,
     * the same container, while the push that came meanwhile waits for the thaw.
     */
    @Test
    void aFreezeStopsChangesNotRepairs() throws Exception {
        zk.setDesired(manifest("one", "1s"), "r1");
        awaitReport("r1", r -> r.outcome() == ApplyOutcome.APPLIED, Duration.ofSeconds(60));
        String secondId = docker.inspect(second).getId();
        freeze();
        docker.stop(secondId, 2);
        assertThat(Boolean.TRUE.equals(docker.inspect(second).getState().getRunning())).isFalse();
        zk.setDesired(manifest("two", "1s"), "r2");

        ApplyReport r2 = awaitReport("r2", r -> r.outcome() == ApplyOutcome.DEFERRED && r.freeze() != null, Duration.ofSeconds(30));
        assertThat(result(r2, second).action()).isEqualTo(ContainerAction.UNCHANGED);
        assertThat(result(r2, second).reasons()).anySatisfy(x -> assertThat(x).contains("started again as it was (module frozen"));
        assertThat(Boolean.TRUE.equals(docker.inspect(second).getState().getRunning())).as("repaired while frozen").isTrue();
        assertThat(docker.inspect(second).getId()).as("the same container").isEqualTo(secondId);
        assertThat(docker.inspect(second).getConfig().getEnv()).as("the change waits for the thaw").contains("MODE=one");
    }
}
