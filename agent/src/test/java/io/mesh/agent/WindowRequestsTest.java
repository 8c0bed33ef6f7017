package io.mesh.agent;

import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.WindowRequest;
import io.mesh.wire.WindowRequestState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Window requests against a real ZooKeeper: what a dead runner left {@code running} is settled, not left for ever. */
class WindowRequestsTest {
    private static final String HOST = "host-a";
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();

    /**
     * A request another process claimed and left {@code running} (killed after it claimed it, while ZooKeeper had
     * lost its quorum, so that the next agent's start sweep found nothing to settle: FleetHistoryIT seed
     * -5845951470219882833) is settled by a later sweep of the running agent, naming the dead runner, not left
     * {@code running} for ever (the operator's {@code mesh window run} would wait out its timeout).
     */
    @Test
    void aRequestADeadRunnerLeftRunningIsSettledByALaterSweep() throws Exception {
        ProcessRef me = ProcessRef.current("mesh-agent run (test)");
        try (WindowRequests requests = new WindowRequests(zk.client(), zk.paths(), HOST, me,
                (module, schedule) -> CompletableFuture.failedFuture(new IllegalStateException("no window here")), Duration.ofSeconds(4))) {
            requests.start();
            // made after the start sweep, as if its runner had claimed it just before dying
            ProcessRef dead = new ProcessRef(me.pid() + 100_000, "mesh-agent run");
            WindowRequest running = WindowRequest.of("store", "gc", Times.now(), new ProcessRef(1, "mesh window run (test)"))
                    .running(dead, Times.now());
            String path = zk.paths().request(HOST, "window-0000000000");
            zk.client().create().creatingParentsIfNeeded().forPath(path, Json.bytes(running));
            await().atMost(Duration.ofSeconds(10)).until(() ->
                    Json.read(zk.client().getData().forPath(path), WindowRequest.class).state() == WindowRequestState.DONE);
            WindowRequest done = Json.read(zk.client().getData().forPath(path), WindowRequest.class);
            assertThat(done.error()).contains("pid " + dead.pid(), "stopped before the window ended");
        }
    }
}
