package io.mesh.coordinator;

import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The coordinator's {@link FleetCache}: what it serves follows ZooKeeper (creates, changes, deletes), and a status
 * request costs ZooKeeper as many requests at 100 hosts as at 10 (docs/benchmark-notes.md, B7), counted by the server itself.
 */
public class FleetCacheTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    @Test
    void servesCreatesChangesAndDeletesAndReadsZooKeeperOutsideItsSubtrees() throws Exception {
        try (FleetCache cache = new FleetCache(fx.zk.client(), List.of(fx.zk.paths().reports()))) {
            String path = fx.zk.paths().report("host-a", "store");
            fx.zk.client().create().creatingParentsIfNeeded().forPath(path, Json.bytes(report("host-a", "store", "r1")));
            // before it has loaded, reads go to ZooKeeper
            assertThat(cache.state()).isEqualTo(FleetCache.State.LATENT);
            assertThat(cache.read(path, ApplyReport.class).revision()).isEqualTo("r1");

            cache.start();
            assertThat(cache.awaitLoaded(Duration.ofSeconds(10))).isTrue();
            assertThat(cache.children(fx.zk.paths().reports())).containsExactly("host-a");
            assertThat(cache.read(path, ApplyReport.class).revision()).isEqualTo("r1");

            fx.zk.client().setData().forPath(path, Json.bytes(report("host-a", "store", "r2")));
            await().atMost(Duration.ofSeconds(10)).until(() -> "r2".equals(cache.read(path, ApplyReport.class).revision()));

            String other = fx.zk.paths().report("host-b", "web");
            fx.zk.client().create().creatingParentsIfNeeded().forPath(other, Json.bytes(report("host-b", "web", "r1")));
            await().atMost(Duration.ofSeconds(10)).until(() -> cache.children(fx.zk.paths().reports()).equals(List.of("host-a", "host-b")));
            assertThat(cache.children(fx.zk.paths().reports("host-b"))).containsExactly("web");

            fx.zk.client().delete().forPath(other);
            await().atMost(Duration.ofSeconds(10)).until(() -> cache.read(other, ApplyReport.class) == null);
            assertThat(cache.children(fx.zk.paths().reports("host-b"))).isEmpty();
            assertThat(cache.serves(other, null)).isTrue();

            // a path outside the cached subtrees is read from ZooKeeper at once
            fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().agent("host-a"),
                    Json.bytes(new AgentRecord("host-a", "test", 1, Instant.now())));
            assertThat(cache.read(fx.zk.paths().agent("host-a"), AgentRecord.class).host()).isEqualTo("host-a");
            assertThat(cache.children(fx.zk.paths().agents())).containsExactly("host-a");
        }
    }

    @Test
    void aStatusRequestCostsZooKeeperTheSameAtTenAndAtAHundredHosts() throws Exception {
        String push = fx.api.push(Manifests.TWO).json().get("push").asText();
        fleetOf(10, push);
        long at10 = requestsPerStatus(push);
        fleetOf(100, push);
        long at100 = requestsPerStatus(push);
        // Read from ZooKeeper, 90 more hosts would cost at least 90 x 3 more requests per status call (the agent
        // node, the reports' parent, two reports). Client pings land in both counts alike.
        assertThat(at100).as("ZooKeeper requests of 3 status calls at 10 hosts: %d, at 100: %d", at10, at100)
                .isLessThan(at10 + 30);
    }

    @Test
    void aStatusRequestCostsZooKeeperTheSameWithTwoModulesAndWithTwelveAndAPushStatusNothing() throws Exception {
        String push = fx.api.push(Manifests.TWO).json().get("push").asText();
        fleetOf(3, push);
        long two = requestsPerStatus(push);
        StringBuilder ten = new StringBuilder(Manifests.TWO);
        for (int m = 0; m < 10; m++) {
            ten.append("---\nmodule: extra").append(m).append("\nhosts: [h000]\ncontainers:\n  c:\n    image: mesh-demo/busybox:1\n");
        }
        String push12 = fx.api.push(ten.toString()).json().get("push").asText();
        for (int m = 0; m < 10; m++) fx.awaitServed(fx.zk.paths().desired("extra" + m));
        long twelve = requestsPerStatus(push12);
        // Read from ZooKeeper, 10 more desired nodes would cost at least 3 x 10 more requests (a getData each, each call).
        assertThat(twelve).as("ZooKeeper requests of 3 status calls with 2 modules: %d, with 12: %d", two, twelve).isLessThan(two + 10);

        fx.api.get("/v1/pushes/" + push12); // warm
        long before = packets();
        for (int i = 0; i < 10; i++) assertThat(fx.api.get("/v1/pushes/" + push12).status()).isEqualTo(200);
        // the coordinator's session pings at most once in these calls' time
        assertThat(packets() - before).as("ZooKeeper requests of 10 push-status calls").isLessThanOrEqualTo(1);
    }

    @Test
    void aFleetAtRestIsDerivedOnceAndEveryChangeIsSeenAtTheNextCall() throws Exception {
        String push = fx.api.push(Manifests.TWO).json().get("push").asText();
        fleetOf(3, push);
        try (FleetCache cache = new FleetCache(fx.zk.client(), List.of(fx.zk.paths().reports(), fx.zk.paths().agents()))) {
            cache.start();
            assertThat(cache.awaitLoaded(Duration.ofSeconds(10))).isTrue();
            FleetStatus status = new FleetStatus(fx.zk.client(), fx.zk.paths(), Clock.systemUTC(), cache);

            FleetStatus.Fleet first = status.fleet();
            FleetStatus.Fleet again = status.fleet();
            assertThat(again.hosts()).as("nothing moved: the same derivation serves").isSameAs(first.hosts());
            // the bytes served are those of the record, with the time of the call
            JsonNode json = Json.MAPPER.readTree(status.fleetJson());
            JsonNode expected = Json.MAPPER.readTree(Json.MAPPER.writeValueAsBytes(status.fleet()));
            assertThat(Instant.parse(json.path("at").asText())).isAfterOrEqualTo(again.at());
            ((ObjectNode) json).remove("at");
            ((ObjectNode) expected).remove("at");
            assertThat(json).isEqualTo(expected);
            assertThat(json.path("hosts").size()).as("h000-h002, and host-a and host-b the manifest names").isEqualTo(5);

            // a report the cache holds: seen once the cache has it
            String path = fx.zk.paths().report("h000", "store");
            fx.zk.client().setData().forPath(path, Json.bytes(StatusApiTest.report("h000", "store", "r9", push, ApplyOutcome.FAILED, "boom")));
            await().atMost(Duration.ofSeconds(10)).until(() -> cell(status.fleet(), "h000", "store").revision().equals("r9"));
            assertThat(Json.MAPPER.readTree(status.fleetJson()).toString()).contains("\"r9\"", "boom");

            // what is read from ZooKeeper at each call (a push's desired node): seen at the very next call
            FleetStatus.Fleet before = status.fleet();
            assertThat(fx.api.post("/v1/pushes", Manifests.store("[h000]").getBytes(StandardCharsets.UTF_8), Map.of("X-Mesh-Revision", "r5"))
                    .status()).isEqualTo(202);
            FleetStatus.Fleet after = status.fleet();
            assertThat(after.hosts()).isNotSameAs(before.hosts());
            assertThat(cell(after, "h000", "store").desiredRevision()).isEqualTo("r5");
        }
    }

    private static FleetStatus.Cell cell(FleetStatus.Fleet f, String host, String module) {
        return f.hosts().stream().filter(h -> h.host().equals(host)).flatMap(h -> h.modules().stream())
                .filter(c -> c.module().equals(module)).findFirst().orElseThrow();
    }

    /** Writes agent nodes and both modules' reports of hosts h000..h(n-1), and waits until the coordinator serves them. */
    private static void fleetOf(int n, String push) throws Exception {
        String last = null;
        for (int i = 0; i < n; i++) {
            String host = String.format("h%03d", i);
            if (fx.zk.client().checkExists().forPath(fx.zk.paths().agent(host)) != null) continue;
            fx.zk.client().create().creatingParentsIfNeeded().forPath(fx.zk.paths().agent(host), Json.bytes(new AgentRecord(host, "test", 1, Instant.now())));
            for (String module : List.of("store", "web")) {
                last = fx.zk.paths().report(host, module);
                fx.zk.client().create().creatingParentsIfNeeded().forPath(last,
                        Json.bytes(StatusApiTest.report(host, module, "r1", push, ApplyOutcome.APPLIED, null)));
            }
        }
        if (last != null) fx.awaitServed(last);
    }

    /** @return ZooKeeper requests the server received during three {@code /v1/fleet} and three push-status calls */
    private long requestsPerStatus(String push) throws Exception {
        fx.api.get("/v1/fleet"); // warm
        long before = packets();
        for (int i = 0; i < 3; i++) {
            assertThat(fx.api.get("/v1/fleet").status()).isEqualTo(200);
            assertThat(fx.api.get("/v1/pushes/" + push).status()).isEqualTo(200);
        }
        return packets() - before;
    }

    /** @return the packets the server has received (its JMX bean; the server runs in this JVM) */
    private static long packets() throws Exception {
        MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        Set<ObjectName> names = jmx.queryNames(new ObjectName("org.apache.ZooKeeperService:name0=StandaloneServer_port" + fx.zk.server().getPort()), null);
        assertThat(names).as("the ZooKeeper server's JMX bean").hasSize(1);
        return (Long) jmx.getAttribute(names.iterator().next(), "PacketsReceived");
    }

    private static ApplyReport report(String host, String module, String revision) {
        return StatusApiTest.report(host, module, revision, "push-0000000000", ApplyOutcome.APPLIED, null);
    }
}
