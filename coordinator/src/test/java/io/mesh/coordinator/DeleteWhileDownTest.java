package io.mesh.coordinator;

import com.github.dockerjava.api.model.Container;
import io.mesh.coordinator.CoordinatorExtension.Answer;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.zk.MeshStore;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A delete reaches an agent that was down when it was pushed (decision 11: the desired node stays, as a tombstone):
 * when it starts again it removes the module's containers (checked with Docker's own API) and reports them
 * {@code removed}, so the delete's push is done; once reported, a restarted agent takes no lock and writes nothing for
 * it again. Real ZooKeeper, real Docker engine, an in-process agent daemon.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("slow") // an agent daemon and windows on the real engine: the full run, not --fast
class DeleteWhileDownTest {
    private static final String HOST = "host-d";
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();
    private final String module = TestDocker.uniqueModule("del");
    private AgentDaemonExtension agent;

    @AfterEach
    void clean() {
        if (agent != null) agent.close();
        TestDocker.clean(module);
    }

    private void startAgent() throws Exception {
        agent = new AgentDaemonExtension(fx.zk, HOST).withOwnSession();
        agent.start();
    }

    private List<Container> containers() {
        return TestDocker.engine().client().listContainersCmd().withShowAll(true)
                .withLabelFilter(Map.of("mesh.module", module)).exec();
    }

    private ApplyReport report() throws Exception { return new MeshStore(fx.zk.client(), fx.zk.paths()).report(HOST, module); }

    @Test
    void anAgentDownDuringTheDeleteRemovesTheContainersWhenItStartsAndReportsThemRemoved() throws Exception {
        startAgent();
        String manifest = "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n  app:\n    image: " + TestDocker.BUSYBOX
                + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n    network: none\n    stop-timeout: 2s\n";
        Answer pushed = fx.api.post("/v1/pushes", manifest.getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "r1"));
        assertThat(pushed.status()).isEqualTo(202);
        await().atMost(Duration.ofSeconds(60)).until(() -> report() != null && report().outcome() == ApplyOutcome.APPLIED);
        assertThat(containers()).hasSize(1);

        agent.close(); // the host is down
        await().atMost(Duration.ofSeconds(30)).until(() -> fx.zk.client().checkExists().forPath(fx.zk.paths().agent(HOST)) == null);
        Answer deleted = fx.api.method("DELETE", "/v1/modules/" + module);
        assertThat(deleted.status()).as(deleted.body()).isEqualTo(202);
        String push = deleted.json().path("push").asText();
        Thread.sleep(1000); // nobody removes anything while the agent is down
        assertThat(containers()).hasSize(1);
        assertThat(fx.api.get("/v1/pushes/" + push).json().path("state").asText()).isEqualTo("pending");

        startAgent(); // back: it reads the tombstone like any desired node
        await().atMost(Duration.ofSeconds(60)).until(() -> report() != null && push.equals(report().push()));
        ApplyReport r = report();
        assertThat(r.outcome()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(r.containers()).extracting(ApplyReport.ContainerResult::action).containsExactly(ContainerAction.REMOVED);
        assertThat(containers()).isEmpty();
        assertThat(fx.api.get("/v1/pushes/" + push).json().path("state").asText()).isEqualTo("applied");

        // Reported once: a restarted agent neither locks nor writes for the tombstone again.
        Stat before = fx.zk.client().checkExists().forPath(fx.zk.paths().report(HOST, module));
        agent.close();
        startAgent();
        agent.daemon().requestApply(module);
        Thread.sleep(2000); // let a wrong apply have its chance
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().report(HOST, module)).getMzxid()).isEqualTo(before.getMzxid());
        assertThat(fx.zk.client().checkExists().forPath(fx.zk.paths().lock(module, HOST))).isNull();
    }

    @Test
    void aHostTheDeleteNamesReportsItAlsoWithNothingOfTheModuleThere() throws Exception {
        // The module names this host, but it was pushed and deleted before the host's agent ever ran: nothing of it
        // is on the host.
        String manifest = "module: " + module + "\nhosts: [" + HOST + ", host-elsewhere]\ncontainers:\n  app:\n    image: " + TestDocker.BUSYBOX
                + "\n    command: [sleep, \"1000\"]\n    network: none\n";
        assertThat(fx.api.post("/v1/pushes", manifest.getBytes(StandardCharsets.UTF_8), Map.of()).status()).isEqualTo(202);
        Answer deleted = fx.api.method("DELETE", "/v1/modules/" + module);
        assertThat(deleted.status()).isEqualTo(202);
        String push = deleted.json().path("push").asText();

        startAgent();
        await().atMost(Duration.ofSeconds(60)).until(() -> report() != null && push.equals(report().push()));
        assertThat(report().outcome()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(report().containers()).isEmpty();
        assertThat(containers()).isEmpty();
        // The other named host has no agent: its part of the delete is pending.
        assertThat(fx.api.get("/v1/pushes/" + push).json().path("targets")).extracting(t -> t.path("host").asText() + "/" + t.path("state").asText())
                .containsExactly(HOST + "/applied", "host-elsewhere/pending");
    }
}
