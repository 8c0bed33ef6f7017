package io.mesh.agent;

import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutHostState;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Failure-model row 110 (FleetHistoryIT seed 8300543777425145737): a canary whose engine was restarted under its
 * recreate ("java.io.IOException: Broken pipe", no answer from Docker) failed the rollout, which reverted it on every
 * host for good, though nothing was wrong with the revision. The engine's failure is given by an intercepting runtime
 * over the real engine (the first create is cut as a dockerd restart cuts it); every other call is real, and the
 * container's state is read from Docker. And the other side of the rule (decision 13, Consequences): an image the
 * revision names that cannot be had is the revision's failure, and fails the canary (the rollout pauses), though the
 * image lookups throw mesh's own {@code IllegalStateException}, no {@code DockerException} with a status; no registry
 * is needed for it.
 */
class RolloutCanaryFailureTest {
    private static final String HOST = "re-a";
    private final String module = TestDocker.uniqueModule("reaway");
    private final AtomicInteger cut = new AtomicInteger();
    /** What the first create meets: dockerd gone under it, unless a test sets Docker's answer while it shuts down. */
    private final AtomicReference<RuntimeException> first = new AtomicReference<>(new RuntimeException(new IOException("Broken pipe")));
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST).withRuntime(TestDocker.intercepting(TestDocker.engine(),
            (method, args, proceed) -> {
                if (method.getName().equals("create") && cut.getAndIncrement() == 0 && first.get() != null) throw first.get();
                return proceed.call();
            }));

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    @Test
    void aCanaryWhoseEngineDidNotAnswerWaitsInItsWaveAndAppliesOnTheRetry() throws Exception {
        canaryFailsOnTheEngineThenApplies("Broken pipe");
    }

    /** Docker's answer while dockerd shuts down (FleetHistoryIT, an engine restart under a canary's recreate). */
    @Test
    void aCanaryWhoseEngineAnsweredThatItShutsDownWaitsInItsWaveAndAppliesOnTheRetry() throws Exception {
        first.set(new com.github.dockerjava.api.exception.InternalServerErrorException(
                "Status 500: {\"message\":\"get " + module + "-data: database not open\"}"));
        canaryFailsOnTheEngineThenApplies("database not open");
    }

    /** {@code pull: never} and the image is not on the host: the revision cannot run here. */
    @Test
    void aCanaryWhoseImageIsNotOnTheHostFailsTheRollout() throws Exception {
        canaryFailsTheRollout("mesh-review-absent/none:1", "never", "is not on this host");
    }

    /** A registry that cannot be reached: Docker answers the pull with its error (dockerd itself is fine). */
    @Test
    void aCanaryWhoseImageDockerCannotPullFailsTheRollout() throws Exception {
        canaryFailsTheRollout("127.0.0.1:1/mesh-review/none:1", "missing", "could not be pulled");
    }

    private void canaryFailsTheRollout(String image, String pull, String error) throws Exception {
        first.set(null);
        // max-failed 1: the failure is within the budget, so the rollout has no note of it (the report said "(null)")
        canaryFails(spec(List.of(HOST, "re-b"), "    image: " + image + "\n    pull: " + pull + "\n", "  max-failed: 1\n"), error);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(hostNode().state())
                .as("the revision's failure, not the engine's").isEqualTo(RolloutHostState.FAILED));
        // The apply after it keeps the previous revision; its report still says why this host failed (its own node's
        // error), not the rollout's note, which is none under pause's first failure ("(null)" before).
        agent.daemon().requestApply(module);
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            ApplyReport a = Json.read(zk.client().getData().forPath(zk.paths().report(HOST, module)), ApplyReport.class);
            assertThat(a.rollout()).as("%s", a).contains("this host failed the rollout of", error).doesNotContain("(null)");
        });
    }

    private void canaryFailsOnTheEngineThenApplies(String error) throws Exception {
        canaryFails(spec(List.of(HOST, "re-b"), "    image: " + TestDocker.BUSYBOX + "\n", ""), error);
        CuratorFramework c = zk.client();
        String report = zk.paths().report(HOST, module);
        String mine = zk.paths().rolloutHost(module, HOST);
        RolloutHostRecord after = hostNode();
        assertThat(after.state()).as("the engine's failure is not the canary's: %s", after).isNotEqualTo(RolloutHostState.FAILED);

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            ApplyReport a = Json.read(c.getData().forPath(report), ApplyReport.class);
            assertThat(a.outcome()).as("the failed apply's retry, with no new push: %s", a).isEqualTo(ApplyOutcome.APPLIED);
            assertThat(Json.read(c.getData().forPath(mine), RolloutHostRecord.class).state()).isEqualTo(RolloutHostState.DONE);
        });
        assertThat(cut.get()).as("creates: the cut one and the retry's").isGreaterThanOrEqualTo(2);
        assertThat(TestDocker.engine().inspect(module + "-web").getState().getRunning()).as("from Docker").isTrue();
    }

    /** Pushes {@code spec} with its rollout (this host the canary) and waits for the canary's {@code failed} report naming {@code error}. */
    private void canaryFails(ModuleSpec spec, String error) throws Exception {
        List<String> hosts = List.of(HOST, "re-b");
        DesiredRecord d = new DesiredRecord(module, "r1", ZkPaths.pushName(1), spec);
        RolloutRecord r = RolloutRecord.start(d, hosts, Set.copyOf(hosts), null, "test", Instant.now());
        assertThat(r.canary()).containsExactly(HOST);
        zk.writeRolloutPush(d, r, h -> h);
        String report = zk.paths().report(HOST, module);
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            assertThat(zk.client().checkExists().forPath(report)).isNotNull();
            ApplyReport a = Json.read(zk.client().getData().forPath(report), ApplyReport.class);
            assertThat(a.outcome()).isEqualTo(ApplyOutcome.FAILED);
            assertThat(a.error()).contains(error);
        });
    }

    private RolloutHostRecord hostNode() throws Exception {
        return Json.read(zk.client().getData().forPath(zk.paths().rolloutHost(module, HOST)), RolloutHostRecord.class);
    }

    /** One container that exits on SIGTERM, on {@code hosts}, with one canary; {@code image} its image lines, {@code rollout} more rollout lines. */
    private ModuleSpec spec(List<String> hosts, String image, String rollout) throws Exception {
        return new ManifestParser().parse("module: " + module + "\nhosts: [" + String.join(", ", hosts) + "]\ncontainers:\n  web:\n"
                + image + "    network: none\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "rollout:\n  canary: 1\n" + rollout).get(0);
    }
}
