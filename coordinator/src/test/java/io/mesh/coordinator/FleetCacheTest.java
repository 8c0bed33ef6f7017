package io.mesh.coordinator;

import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The coordinator's {@link FleetCache}: what it serves follows ZooKeeper (creates, changes, deletes), and a status
 * request costs ZooKeeper as many requests at 100 hosts as at 10 (issue 16, B7), counted by the server itself.
 */
public class FleetCacheTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();
    @RegisterExtension
    final CoordinatorExtension api = new CoordinatorExtension(zk);

    @Test
    void servesCreatesChangesAndDeletesAndReadsZooKeeperOutsideItsSubtrees() throws Exception {
        try (FleetCache cache = new FleetCache(zk.client(), List.of(zk.paths().reports()))) {
            String path = zk.paths().report("host-a", "store");
            zk.client().create().creatingParentsIfNeeded().forPath(path, Json.bytes(report("host-a", "store", "r1")));
            // before it has loaded, reads go to ZooKeeper
            assertThat(cache.state()).isEqualTo(FleetCache.State.LATENT);
            assertThat(cache.read(path, ApplyReport.class).revision()).isEqualTo("r1");

            cache.start();
            assertThat(cache.awaitLoaded(Duration.ofSeconds(10))).isTrue();
            assertThat(cache.children(zk.paths().reports())).containsExactly("host-a");
            assertThat(cache.read(path, ApplyReport.class).revision()).isEqualTo("r1");

            zk.client().setData().forPath(path, Json.bytes(report("host-a", "store", "r2")));
            await().atMost(Duration.ofSeconds(10)).until(() -> "r2".equals(cache.read(path, ApplyReport.class).revision()));

            String other = zk.paths().report("host-b", "web");
            zk.client().create().creatingParentsIfNeeded().forPath(other, Json.bytes(report("host-b", "web", "r1")));
            await().atMost(Duration.ofSeconds(10)).until(() -> cache.children(zk.paths().reports()).equals(List.of("host-a", "host-b")));
            assertThat(cache.children(zk.paths().reports("host-b"))).containsExactly("web");

            zk.client().delete().forPath(other);
            await().atMost(Duration.ofSeconds(10)).until(() -> cache.read(other, ApplyReport.class) == null);
            assertThat(cache.children(zk.paths().reports("host-b"))).isEmpty();
            assertThat(cache.serves(other, null)).isTrue();

            // a path outside the cached subtrees is read from ZooKeeper at once
            zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().agent("host-a"),
                    Json.bytes(new AgentRecord("host-a", "test", 1, Instant.now())));
            assertThat(cache.read(zk.paths().agent("host-a"), AgentRecord.class).host()).isEqualTo("host-a");
            assertThat(cache.children(zk.paths().agents())).containsExactly("host-a");
        }
    }

    @Test
    void aStatusRequestCostsZooKeeperTheSameAtTenAndAtAHundredHosts() throws Exception {
        String push = api.push(Manifests.TWO).json().get("push").asText();
        fleetOf(10, push);
        long at10 = requestsPerStatus(push);
        fleetOf(100, push);
        long at100 = requestsPerStatus(push);
        // Read from ZooKeeper, 90 more hosts would cost at least 90 x 3 more requests per status call (the agent
        // node, the reports' parent, two reports). Client pings land in both counts alike.
        assertThat(at100).as("ZooKeeper requests of 3 status calls at 10 hosts: %d, at 100: %d", at10, at100)
                .isLessThan(at10 + 30);
    }

    /** Writes agent nodes and both modules' reports of hosts h000..h(n-1), and waits until the coordinator serves them. */
    private static void fleetOf(int n, String push) throws Exception {
        String last = null;
        for (int i = 0; i < n; i++) {
            String host = String.format("h%03d", i);
            if (zk.client().checkExists().forPath(zk.paths().agent(host)) != null) continue;
            zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().agent(host), Json.bytes(new AgentRecord(host, "test", 1, Instant.now())));
            for (String module : List.of("store", "web")) {
                last = zk.paths().report(host, module);
                zk.client().create().creatingParentsIfNeeded().forPath(last,
                        Json.bytes(StatusApiTest.report(host, module, "r1", push, ApplyOutcome.APPLIED, null)));
            }
        }
        if (last != null) CoordinatorExtension.awaitServed(zk, last);
    }

    /** @return ZooKeeper requests the server received during three {@code /v1/fleet} and three push-status calls */
    private long requestsPerStatus(String push) throws Exception {
        api.get("/v1/fleet"); // warm
        long before = packets();
        for (int i = 0; i < 3; i++) {
            assertThat(api.get("/v1/fleet").status()).isEqualTo(200);
            assertThat(api.get("/v1/pushes/" + push).status()).isEqualTo(200);
        }
        return packets() - before;
    }

    /** @return the packets the server has received (its JMX bean; the server runs in this JVM) */
    private static long packets() throws Exception {
        MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        Set<ObjectName> names = jmx.queryNames(new ObjectName("org.apache.ZooKeeperService:name0=StandaloneServer_port" + zk.server().getPort()), null);
        assertThat(names).as("the ZooKeeper server's JMX bean").hasSize(1);
        return (Long) jmx.getAttribute(names.iterator().next(), "PacketsReceived");
    }

    private static ApplyReport report(String host, String module, String revision) {
        return StatusApiTest.report(host, module, revision, "push-0000000000", ApplyOutcome.APPLIED, null);
    }
}
