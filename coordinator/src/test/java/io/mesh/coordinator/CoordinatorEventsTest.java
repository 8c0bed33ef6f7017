package io.mesh.coordinator;

import io.mesh.wire.AgentRecord;
import io.mesh.wire.EventType;
import io.mesh.wire.Json;
import io.mesh.wire.MeshEvent;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The coordinator's own events (decision 34): a hold placed and released, a freeze and its thaw, each written into
 * {@code /mesh/events/_coordinators} by the coordinator that took the request, in order, with who asked and why.
 */
class CoordinatorEventsTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    private List<MeshEvent> coordinatorEvents() throws Exception {
        String parent = fx.zk.paths().events(ZkPaths.COORDINATOR_EVENTS);
        List<MeshEvent> out = new ArrayList<>();
        for (String n : fx.zk.client().getChildren().forPath(parent).stream().sorted().toList()) {
            out.add(Json.read(fx.zk.client().getData().forPath(parent + "/" + n), MeshEvent.class).withId(ZkPaths.COORDINATOR_EVENTS + "/" + n));
        }
        return out;
    }

    /** {@code serve} hands its {@link Notifier}'s metrics to {@code GET /metrics}: pending events and who leads. */
    @Test
    void theNotifiersMetricsAreServedAtMetrics() throws Exception {
        try (Notifier n = new Notifier(fx.zk.client(), fx.zk.paths(), NotifyConfig.NONE)) {
            n.start();
            fx.api.api().moreMetrics(n::metrics);
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(15)).until(n::leading);
            String text = fx.api.get("/metrics").body();
            assertThat(text).contains("# TYPE mesh_notify_pending gauge\nmesh_notify_pending ", "mesh_notify_leader 1\n",
                    "# TYPE mesh_notify_dropped_total counter");
        } finally {
            fx.api.api().moreMetrics(() -> "");
        }
    }

    @Test
    void holdsAndFreezesWriteTheirEventsWithWhoAndWhy() throws Exception {
        assertThat(fx.api.push(Manifests.TWO).status()).isEqualTo(202);
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(fx.zk.paths().agent("host-a"), Json.bytes(new AgentRecord("host-a", "0.1.0", 4242, Times.now())));
        Map<String, String> alice = Map.of("Content-Type", "application/json", "X-Mesh-User", "alice");
        assertThat(fx.api.post("/v1/holds", "{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"disk swap\",\"for\":\"2h\"}"
                .getBytes(StandardCharsets.UTF_8), alice).status()).isEqualTo(201);
        assertThat(fx.api.method("DELETE", "/v1/holds/host-a/store-registry", new byte[0], Map.of("X-Mesh-User", "bob")).status()).isEqualTo(200);
        assertThat(fx.api.post("/v1/freezes", "{\"module\":\"store\",\"for\":\"1h\",\"reason\":\"release day\"}"
                .getBytes(StandardCharsets.UTF_8), alice).status()).isEqualTo(201);
        assertThat(fx.api.method("DELETE", "/v1/freezes/store").status()).isEqualTo(200);
        assertThat(fx.api.post("/v1/drains", "{\"host\":\"host-a\",\"reason\":\"kernel\",\"stop\":true}".getBytes(StandardCharsets.UTF_8), alice)
                .status()).isEqualTo(201);
        assertThat(fx.api.method("DELETE", "/v1/drains/host-a", new byte[0], Map.of("X-Mesh-User", "bob")).status()).isEqualTo(200);

        List<MeshEvent> e = coordinatorEvents();
        assertThat(e).extracting(MeshEvent::type).containsExactly(EventType.HOLD_PLACED, EventType.HOLD_ENDED,
                EventType.FREEZE_STARTED, EventType.FREEZE_ENDED, EventType.HOLD_PLACED, EventType.HOLD_ENDED);
        // a drain (decision 37): the host's hold, of every container
        assertThat(e.get(4).host()).isEqualTo("host-a");
        assertThat(e.get(4).container()).isNull();
        assertThat(e.get(4).reason()).isEqualTo("drain: kernel (--stop)");
        assertThat(e.get(5).reason()).isEqualTo("undrained (drained by alice from 127.0.0.1: kernel)");
        MeshEvent placed = e.get(0);
        assertThat(placed.host()).isEqualTo("host-a");
        assertThat(placed.module()).isEqualTo("store");
        assertThat(placed.container()).isEqualTo("store-registry");
        assertThat(placed.by()).isEqualTo("alice from 127.0.0.1");
        assertThat(placed.reason()).isEqualTo("disk swap");
        assertThat(placed.until()).isEqualTo(placed.time().plusSeconds(7200));
        assertThat(e.get(1).by()).isEqualTo("bob from 127.0.0.1");
        assertThat(e.get(1).reason()).isEqualTo("released (held by alice from 127.0.0.1: disk swap)");
        MeshEvent froze = e.get(2);
        assertThat(froze.module()).isEqualTo("store");
        assertThat(froze.host()).isNull();
        assertThat(froze.reason()).isEqualTo("release day");
        assertThat(froze.until()).isEqualTo(froze.time().plusSeconds(3600));
        assertThat(e.get(3).module()).isEqualTo("store");
        assertThat(new String(fx.zk.client().getData().forPath(fx.zk.paths().event(e.get(3).id())), StandardCharsets.UTF_8))
                .as("one line of JSON, without id or empty fields").doesNotContain("\n", "\"id\"", "null");
    }
}
