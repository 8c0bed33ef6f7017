package io.mesh.client;

import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.coordinator.Manifests;
import io.mesh.coordinator.StatusApiTest;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowRecord;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The kill -9 case: an agent goes mid-window, and its session takes its agent, window and held nodes with it, while its
 * containers may still be stopped. {@code mesh status}, {@code mesh held} and the page say "agent offline; last known:
 * window W holding C" (FleetStatus.LastKnownWindow), from the window node the coordinator saw go, or from the host's
 * last report. The agent's session is a real ZooKeeper session of its own, closed as a killed process's ends.
 */
class AgentGoneMidWindowTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    private ClientRun mesh(String... args) { return ClientRun.of(fx.api.uri().toString(), args); }

    @Test
    void anAgentGoneMidWindowIsShownWithItsLastKnownWindow() throws Exception {
        assertThat(fx.api.push(Manifests.store("[host-k, host-r]")).status()).isEqualTo(202);
        String push = "push-0000000000";
        for (String host : List.of("host-k", "host-r")) {
            ApplyOutcome outcome = host.equals("host-k") ? ApplyOutcome.APPLIED : ApplyOutcome.DEFERRED;
            fx.writeReport(StatusApiTest.report(host, "store", "r1", push, outcome, null));
        }

        // host-k's agent opens a window holding store-registry: its nodes are ephemeral, in its own session.
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().windows("host-k"), "{}".getBytes());
        fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().agents(), "{}".getBytes());
        CuratorFramework agent = fx.zk.plainClient(List.of());
        agent.create().withMode(CreateMode.EPHEMERAL).forPath(fx.zk.paths().agent("host-k"), Json.bytes(new AgentRecord("host-k", "0.1.0", 4242, Instant.now())));
        agent.create().withMode(CreateMode.EPHEMERAL).forPath(fx.zk.paths().window("host-k", "store"), Json.bytes(new WindowRecord("host-k", "store",
                "garbage-collect", "w-kill9", Instant.parse("2026-12-06T03:30:00Z"), List.of("store-registry"), new ProcessRef(4242, "mesh-agent run"))));
        fx.awaitServed(fx.zk.paths().agent("host-k"));
        String online = mesh("status").out().lines().filter(l -> l.startsWith("host-k")).findFirst().orElseThrow();
        assertThat(online).as("online: its open window is live, nothing is 'last known'").contains("online", "w-kill9").doesNotContain("last known");

        agent.close(); // kill -9: the session ends, and its nodes with it
        await().atMost(Duration.ofSeconds(10)).until(() -> fx.zk.client().checkExists().forPath(fx.zk.paths().agent("host-k")) == null);
        fx.awaitServed(fx.zk.paths().agent("host-k"));

        String lastKnownK = "agent offline; last known: window w-kill9 (garbage-collect) holding store-registry since 2026-12-06T03:30:00Z";
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(mesh("status").out()).contains(lastKnownK));
        ClientRun status = mesh("status");
        String rowK = status.out().lines().filter(l -> l.startsWith("host-k") && l.contains("OFFLINE")).findFirst().orElseThrow();
        assertThat(rowK).contains(lastKnownK, "its window node went with its session");
        // host-r never had a live node here: its last report was deferred by a window, which is what is known.
        String rowR = status.out().lines().filter(l -> l.startsWith("host-r") && l.contains("OFFLINE")).findFirst().orElseThrow();
        assertThat(rowR).contains("agent offline; last known: window w-20261130T033000Z-3f2a (garbage-collect) holding store-registry",
                "from its last report");

        ClientRun held = mesh("held");
        assertThat(held.code()).as(held.toString()).isZero();
        assertThat(held.out()).contains("host-k store: " + lastKnownK, "host-r store: agent offline; last known: window w-20261130T033000Z-3f2a");

        String page = fx.api.get("/").body();
        assertThat(page).contains("AGENT OFFLINE", "window w-kill9 (garbage-collect) holding store-registry");

        // The agent comes back: what is live is shown again, nothing "last known".
        fx.zk.client().create().withMode(CreateMode.EPHEMERAL).forPath(fx.zk.paths().agent("host-k"), Json.bytes(new AgentRecord("host-k", "0.1.0", 4243, Instant.now())));
        fx.awaitServed(fx.zk.paths().agent("host-k"));
        String back = mesh("status").out().lines().filter(l -> l.startsWith("host-k")).findFirst().orElseThrow();
        assertThat(back).contains("online").doesNotContain("last known");
        fx.zk.client().delete().forPath(fx.zk.paths().agent("host-k"));
    }
}
