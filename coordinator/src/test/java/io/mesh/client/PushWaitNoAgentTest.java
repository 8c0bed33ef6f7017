package io.mesh.client;

import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.coordinator.Manifests;
import io.mesh.coordinator.StatusApiTest;
import io.mesh.wire.ApplyOutcome;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code mesh push --wait} when a named host has no agent, as {@link MeshCliTest} runs the client. Its own class: it
 * waits out the client's 10 s grace, which a test JVM can do beside {@link MeshCliTest}'s others.
 */
@Tag("slow") // over 10 s of engine or ZooKeeper waits: the full run, not --fast (which must stay under 2 min)
class PushWaitNoAgentTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();
    @TempDir
    Path dir;

    private CompletableFuture<ClientRun> meshAsync(String... args) {
        return CompletableFuture.supplyAsync(() -> ClientRun.of(fx.api.uri().toString(), args));
    }

    private Path manifest(String yaml) throws Exception {
        return Files.writeString(dir.resolve("m.yaml"), yaml);
    }

    private static void awaitPush(String push) {
        await().atMost(10, TimeUnit.SECONDS).until(() -> fx.zk.client().checkExists().forPath(fx.zk.paths().push(push)) != null);
    }

    private static void report(String host, String module, String revision, String push, ApplyOutcome outcome, String error) throws Exception {
        fx.writeReport(StatusApiTest.report(host, module, revision, push, outcome, error));
    }

    /**
     * A push naming a host that has no agent says so at once, and {@code --wait} stops, naming it, once only such hosts
     * are left (after {@link PushCommands.Push#NO_AGENT_GRACE}), instead of waiting out its timeout (a typo in
     * {@code hosts} looked like a push that never finished).
     */
    @Test
    void aPushToAHostWithoutAnAgentWarnsAndWaitStopsNamingIt() throws Exception {
        fx.zk.client().create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                .forPath(fx.zk.paths().agent("host-a"), "{\"host\":\"host-a\",\"pid\":1}".getBytes(StandardCharsets.UTF_8));
        fx.awaitServed(fx.zk.paths().agent("host-a"));
        try {
            CompletableFuture<ClientRun> run = meshAsync("push", manifest(Manifests.store("[host-a, hots-b]")).toString(), "--revision", "r1",
                    "--wait", "--timeout", "5m", "--interval", "200ms");
            String push = "push-0000000000";
            awaitPush(push);
            report("host-a", "store", "r1", push, ApplyOutcome.APPLIED, null);
            ClientRun r = run.get(60, TimeUnit.SECONDS);
            assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.FAILED);
            assertThat(r.err()).contains("host hots-b has no agent").doesNotContain("host host-a has no agent");
            assertThat(r.out()).contains("host-a  store  applied r1", push + " not applied on hots-b: no agent runs there");
        } finally {
            fx.zk.client().delete().forPath(fx.zk.paths().agent("host-a"));
        }
    }
}
