package io.mesh.e2e;

import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.TestDocker;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.Json;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A freeze ends by itself at its {@code until} (decision 14): with the agent's reconcile at 10 minutes and a frozen
 * report never retried on back-off, only the agent's timer at {@code until} can land the newest revision, and it does,
 * with no new push and no thaw.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("slow") // waits for a freeze to end by itself: the full run, not --fast
class FreezeExpiryTest {
    private static final String HOST = "host-frz-expiry";
    @RegisterExtension
    @Order(1)
    final CoordinatorFixture fx = new CoordinatorFixture();
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(fx.zk, HOST).reconcileEvery(Duration.ofMinutes(10));
    private final String module = TestDocker.uniqueModule("frzx");
    private final FreezeSteps steps = new FreezeSteps(fx.zk, fx.api, HOST);

    @AfterEach
    void tearDown() {
        agent.close();
        TestDocker.clean(module);
    }

    @Test
    void aFreezeForThreeSecondsEndsByItself() throws Exception {
        String id = steps.landed(module);
        try (DockerEvents events = DockerEvents.record(module)) {
            steps.freeze("{\"module\":\"" + module + "\",\"for\":\"3s\",\"reason\":\"short\"}");
            FreezeRecord f = Json.read(fx.zk.client().getData().forPath(fx.zk.paths().freeze(module)), FreezeRecord.class);
            Instant from = Instant.now();
            String p2 = steps.push(steps.manifest(module, "two"), "r2");
            await().atMost(Duration.ofSeconds(3)).until(() -> steps.state(p2, module).equals("deferred"));
            assertThat(steps.target(p2, module).path("freeze").path("reason").asText()).isEqualTo("short");
            assertThat(steps.docker().inspect(module + "-web").getId()).isEqualTo(id);

            await().atMost(FreezeSteps.LANDS).until(() -> steps.state(p2, module).equals("applied"));
            assertThat(steps.env(module)).contains("MODE=two");
            assertThat(steps.report(module).finishedAt()).as("not before the freeze ended").isAfterOrEqualTo(f.until());
            assertThat(steps.report(module).freeze()).isNull();
            events.settle();
            assertThat(events.since(from).stream().filter(e -> id.equals(e.getId())).map(TestDocker::action).toList())
                    .as("the old container went once the freeze ended").contains("destroy");
        }
    }
}
