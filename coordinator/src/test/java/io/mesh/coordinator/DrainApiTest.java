package io.mesh.coordinator;

import io.mesh.coordinator.CoordinatorExtension.Answer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The coordinator's side of drains against a real ZooKeeper (decision 37): two drains of one host at once are one drain
 * and one refusal, never the last one silently winning (an attacker saw both answered 201, the second without its
 * {@code --stop}); a host a manifest names, whose agent has not started, can be drained; the reason's one-line rule.
 */
@Tag("slow") // rounds of racing requests: the full run, not --fast (which must stay under 2 min)
class DrainApiTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();

    private Answer drain(String body) throws Exception {
        return fx.api.post("/v1/drains", body.getBytes(StandardCharsets.UTF_8), Map.of());
    }

    @Test
    void twoDrainsOfOneHostAtOnceAreOneDrainAndOneRefusal() throws Exception {
        fx.zk.client().create().orSetData().creatingParentsIfNeeded().forPath(fx.zk.paths().reports("host-a"));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 5; round++) {
                List<Future<Answer>> both = new ArrayList<>();
                both.add(pool.submit(() -> drain("{\"host\":\"host-a\",\"reason\":\"rack move\",\"stop\":true}")));
                both.add(pool.submit(() -> drain("{\"host\":\"host-a\",\"reason\":\"kernel\"}")));
                List<Integer> statuses = new ArrayList<>();
                for (Future<Answer> f : both) statuses.add(f.get().status());
                assertThat(statuses).as("round %d", round).containsExactlyInAnyOrder(201, 409);
                Answer u = fx.api.method("DELETE", "/v1/drains/host-a");
                assertThat(u.status()).as(u.body()).isEqualTo(200);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aHostAManifestNamesCanBeDrainedBeforeItsAgentStartsAndAReasonMustBeOneVisibleLine() throws Exception {
        fx.api.push("module: web\nhosts: [host-new]\ncontainers:\n  app:\n    image: mesh-demo/busybox:1\n    command: [sleep, \"60\"]\n"
                + "    network: none\n");
        Answer a = drain("{\"host\":\"host-new\",\"reason\":\"rack move\"}");
        assertThat(a.status()).as(a.body()).isEqualTo(201);
        Answer nobody = drain("{\"host\":\"host-nobody\",\"reason\":\"rack move\"}");
        assertThat(nobody.status()).isEqualTo(404);
        assertThat(nobody.body()).contains("no manifest names it");
        for (String hidden : List.of("\\u202Eevom kcar", "rack\\u2028move", "rack\\nmove")) {
            Answer bad = drain("{\"host\":\"host-new\",\"reason\":\"" + hidden + "\"}");
            assertThat(bad.status()).as(hidden).isEqualTo(400);
            assertThat(bad.body()).as(hidden).contains("reason");
        }
    }
}
