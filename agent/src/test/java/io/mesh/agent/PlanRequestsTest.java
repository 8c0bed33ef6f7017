package io.mesh.agent;

import io.mesh.apply.DryRun;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.secrets.DigestKey;
import io.mesh.secrets.SecretsDir;
import io.mesh.testing.TestDocker;
import io.mesh.testing.TestPolicy;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.Json;
import io.mesh.wire.PlanAnswer;
import io.mesh.wire.PlanOutcome;
import io.mesh.wire.PlanRequest;
import io.mesh.wire.PlanState;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.zk.MeshStore;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link PlanRequests} on a real ZooKeeper and the real Docker engine: a plan written before the agent watched is
 * answered (the look at every plan once the watch is set), a node of another host is left alone, and an answered node
 * is never answered again.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("slow") // an agent answering plans on the real engine: the full run, not --fast
class PlanRequestsTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();

    final String module = TestDocker.uniqueModule("pl");
    PlanRequests requests;

    @AfterEach
    void close() {
        if (requests != null) requests.close();
        TestDocker.clean(module);
    }

    String write(String plan, String... hosts) throws Exception {
        ModuleSpec spec = new ManifestParser().parse("module: " + module + "\nhosts: [host-a]\ncontainers:\n  app:\n    image: "
                + TestDocker.BUSYBOX + "\n    network: host\n").get(0);
        zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(zk.paths().plan(plan),
                Json.bytes(new PlanRequest(plan, "r1", Times.now(), ProcessRef.current("test"), List.of(spec), List.of(hosts))));
        for (String h : hosts) {
            zk.client().create().forPath(zk.paths().plan(plan, h), Json.bytes(PlanAnswer.pending(plan, h, Times.now())));
        }
        return plan;
    }

    PlanAnswer read(String plan, String host) throws Exception {
        return Json.readOrNull(zk.client().getData().forPath(zk.paths().plan(plan, host)), PlanAnswer.class);
    }

    @TempDir
    Path state;

    void start() {
        requests = new PlanRequests(zk.client(), zk.paths(), "host-a", ProcessRef.current("mesh-agent run (test)"),
                new DryRun(new MeshStore(zk.client(), zk.paths()), TestDocker.engine(), "host-a", TestPolicy.HOST_NETWORK,
                        new SecretsDir(state.resolve("secrets"), new DigestKey(state))));
        requests.start();
    }

    @Test
    void aPlanWrittenBeforeTheAgentWatchedIsAnsweredAndOtherHostsAreLeftAlone() throws Exception {
        String before = write("plan-0000000001", "host-a", "host-b");
        start();
        await().atMost(Duration.ofSeconds(20)).until(() -> read(before, "host-a").state() == PlanState.ANSWERED);
        PlanAnswer a = read(before, "host-a");
        assertThat(a.modules()).singleElement().satisfies(m -> {
            assertThat(m.module()).isEqualTo(module);
            assertThat(m.outcome()).isEqualTo(PlanOutcome.WOULD_APPLY);
            assertThat(m.containers()).singleElement().satisfies(c -> assertThat(c.action().wire()).isEqualTo("created"));
        });
        assertThat(a.by().process()).isEqualTo("mesh-agent run (test)");
        assertThat(read(before, "host-b").state()).isEqualTo(PlanState.PENDING);

        // and one written while it watches
        String after = write("plan-0000000002", "host-a");
        await().atMost(Duration.ofSeconds(20)).until(() -> read(after, "host-a").state() == PlanState.ANSWERED);
    }

    @Test
    void anAnsweredNodeIsNeverAnsweredAgain() throws Exception {
        String plan = write("plan-0000000003", "host-a");
        start();
        await().atMost(Duration.ofSeconds(20)).until(() -> read(plan, "host-a").state() == PlanState.ANSWERED);
        Stat s = zk.client().checkExists().forPath(zk.paths().plan(plan, "host-a"));
        requests.answer(plan);
        assertThat(zk.client().checkExists().forPath(zk.paths().plan(plan, "host-a")).getVersion()).isEqualTo(s.getVersion());
    }
}
