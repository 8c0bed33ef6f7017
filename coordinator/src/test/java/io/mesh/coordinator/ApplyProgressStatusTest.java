package io.mesh.coordinator;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import io.mesh.apply.Applier;
import io.mesh.curator.ZkNode;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProgressRecord;
import io.mesh.wire.PushRecord;
import io.mesh.wire.PushState;
import io.mesh.wire.Times;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A pending host says what its apply waits for (docs/decisions/0032-apply-progress.md), against the real engine and a
 * real ZooKeeper: while a new container's healthcheck has not passed yet (it passes once the test makes a file in it),
 * the host's progress node and the push's status, read directly and through the coordinator's cache, say
 * {@code waiting for <container>: health starting}, then with Docker's failing streak; once the apply is done, the node
 * is gone and the status says {@code applied}, without detail.
 */
@Tag("slow") // over 10 s of engine or ZooKeeper waits: the full run, not --fast (which must stay under 2 min)
class ApplyProgressStatusTest {
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "pg");

    @Test
    void aPendingHostSaysItWaitsForAContainersHealthUntilItsApplyIsDone() throws Exception {
        String module = here.module();
        String web = module + "-web";
        // Healthy once the test says so (a file it makes in the container): its check fails until then, retries to spare.
        DesiredRecord d = zk.setDesired("module: " + module + "\nhosts: [host-a]\ncontainers:\n  web:\n    image: " + BUSYBOX + "\n"
                + "    network: none\n    stop-timeout: 1s\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    healthcheck: {test: [CMD-SHELL, \"test -e /tmp/ok\"], interval: 1s, timeout: 1s, retries: 60}\n"
                + "    ready: {min-healthy: 0s, deadline: 60s}\n", "r1");
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().push(d.push()),
                Json.bytes(new PushRecord(d.push(), "r1", List.of(module), Times.now())));
        PushStatus status = new PushStatus(zk.client(), zk.paths(), ZkReads.direct(zk.client()));
        // And as the coordinator serves it, from its cache (decision 22), which keeps /mesh/progress too.
        FleetCache cache = new FleetCache(zk.client(), List.of(zk.paths().reports(), zk.paths().agents(), zk.paths().rollouts(),
                zk.paths().pushes(), zk.paths().progress()));
        cache.start();
        assertThat(cache.awaitLoaded(Duration.ofSeconds(10))).isTrue();
        PushStatus served = new PushStatus(zk.client(), zk.paths(), cache);
        try {
            String path = zk.paths().progress(ApplierExtension.HOST, module);

            Applier applier = here.applier();
            CompletableFuture<ApplyReport> apply = CompletableFuture.supplyAsync(() -> {
                try {
                    return applier.apply(module, () -> false);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            AtomicReference<ProgressRecord> seen = new AtomicReference<>();
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                ZkNode n = ZkNode.read(zk.client(), path);
                ProgressRecord p = n == null ? null : Json.read(n.data(), ProgressRecord.class);
                seen.set(p);
                assertThat(p).as("the progress node " + path).isNotNull();
                assertThat(p.detail()).startsWith("waiting for " + web + ": health starting");
            });
            assertThat(seen.get().push()).isEqualTo(d.push());
            assertThat(seen.get().host()).isEqualTo(ApplierExtension.HOST);
            PushStatus.Target pending = status.of(d.push()).orElseThrow().targets().get(0);
            assertThat(pending.state()).isEqualTo(PushState.PENDING);
            assertThat(pending.detail()).as("the status while it waits").startsWith("waiting for " + web + ": health starting");
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(served.of(d.push()).orElseThrow().targets().get(0).detail())
                    .as("the coordinator's status while it waits").startsWith("waiting for " + web + ": health starting"));
            // Docker's failing streak, from the inspect, as its checks fail
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> assertThat(
                    Json.read(ZkNode.read(zk.client(), path).data(), ProgressRecord.class).detail())
                    .matches("waiting for " + web + ": health starting, \\d+ failed checks?"));
            assertThat(apply).as("still waiting for the container's health").isNotDone();

            var docker = TestDocker.engine().client();
            String exec = docker.execCreateCmd(web).withCmd("touch", "/tmp/ok").exec().getId();
            docker.execStartCmd(exec).exec(new ResultCallback.Adapter<Frame>()).awaitCompletion(30, TimeUnit.SECONDS);

            ApplyReport r = apply.get(60, TimeUnit.SECONDS);
            assertThat(r.outcome()).as("report %s", r).isEqualTo(ApplyOutcome.APPLIED);
            await().atMost(Duration.ofSeconds(5)).until(() -> zk.client().checkExists().forPath(path) == null);
            PushStatus.Target done = status.of(d.push()).orElseThrow().targets().get(0);
            assertThat(done.state()).isEqualTo(PushState.APPLIED);
            assertThat(done.detail()).isNull();
            assertThat(Json.text(done)).doesNotContain("\"detail\"");
            await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertThat(served.of(d.push()).orElseThrow().targets().get(0))
                    .extracting(PushStatus.Target::state, PushStatus.Target::detail).containsExactly(PushState.APPLIED, null));
        } finally {
            cache.close();
        }
    }
    /** A delete that waits for a container to exit says so: {@code stopping C (it has up to Ns to exit)}. */
    @Test
    void aDeleteSaysWhichContainerItWaitsForToExit() throws Exception {
        String module = here.module();
        String web = module + "-web";
        // PID 1 of a container ignores SIGTERM without a handler: the stop waits out its stop-timeout, then kills.
        zk.setDesired("module: " + module + "\nhosts: [host-a]\ncontainers:\n  web:\n    image: " + BUSYBOX + "\n"
                + "    network: none\n    stop-timeout: 6s\n    command: [sh, -c, \"while true; do sleep 1; done\"]\n", "r1");
        Applier applier = here.applier();
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        zk.client().setData().forPath(zk.paths().desired(module), Json.bytes(DesiredRecord.tombstoneOf(module, "deleted",
                "push-0000000009", new DesiredRecord.Deleted(List.of(ApplierExtension.HOST), java.time.Instant.now(), "test"))));
        String path = zk.paths().progress(ApplierExtension.HOST, module);
        CompletableFuture<ApplyReport> delete = CompletableFuture.supplyAsync(() -> {
            try {
                return applier.apply(module, () -> false);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        await().atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
            ZkNode n = ZkNode.read(zk.client(), path);
            assertThat(n).as("the progress node " + path).isNotNull();
            assertThat(Json.read(n.data(), ProgressRecord.class).detail()).isEqualTo("stopping " + web + " (it has up to 6s to exit)");
        });
        ApplyReport r = delete.get(30, TimeUnit.SECONDS);
        assertThat(r.containers()).singleElement().extracting(ApplyReport.ContainerResult::action).isEqualTo(io.mesh.wire.ContainerAction.REMOVED);
        await().atMost(Duration.ofSeconds(5)).until(() -> zk.client().checkExists().forPath(path) == null);
    }
}
