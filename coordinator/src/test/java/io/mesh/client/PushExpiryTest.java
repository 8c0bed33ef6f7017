package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.coordinator.Manifests;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A push still pending on a host without an agent reads {@code expired} there once the coordinator's
 * {@code --no-agent-expiry} has passed (here 2 s; 24 h by default), and {@code mesh push --wait} of it ends, non-zero,
 * naming the host (docs/decisions/0030-cancel-and-expire-pushes.md).
 */
class PushExpiryTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture().withNoAgentExpiry(Duration.ofSeconds(2));
    @TempDir
    Path dir;

    @Test
    void aPendingTargetWithoutAnAgentExpiresAndWaitEndsNamingIt() throws Exception {
        Path m = Files.writeString(dir.resolve("m.yaml"), Manifests.store("[hots-b]"));
        long t0 = System.nanoTime();
        ClientRun r = ClientRun.of(fx.api.uri().toString(), "push", m.toString(), "--revision", "r1", "--wait", "--timeout", "1m", "--interval", "200ms");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.FAILED);
        assertThat(r.out()).contains("hots-b  store  expired (no agent)", "push-0000000000 not applied on hots-b: expired, no agent runs there");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("before the 10 s grace for hosts without an agent").isLessThan(Duration.ofSeconds(9));

        JsonNode v = fx.api.get("/v1/pushes/push-0000000000").json();
        assertThat(v.path("state").asText()).isEqualTo("expired");
        assertThat(v.path("done").asBoolean()).isTrue();
        assertThat(v.path("counts").path("expired").asInt()).isEqualTo(1);
        assertThat(fx.api.get("/v1/fleet").json().path("pendingPushes")).as("not pending any more").isEmpty();

        // An agent of that host starts: it will apply the module's newest desired state, so the target waits on it again.
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(fx.zk.paths().agent("hots-b"), "{\"host\":\"hots-b\",\"pid\":1}".getBytes(StandardCharsets.UTF_8));
        try {
            fx.awaitServed(fx.zk.paths().agent("hots-b"));
            await().atMost(10, TimeUnit.SECONDS).untilAsserted(() ->
                    assertThat(fx.api.get("/v1/pushes/push-0000000000").json().path("state").asText()).isEqualTo("pending"));
        } finally {
            fx.zk.client().delete().forPath(fx.zk.paths().agent("hots-b"));
        }
    }
}
