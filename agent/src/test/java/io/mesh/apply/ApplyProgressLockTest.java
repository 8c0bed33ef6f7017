package io.mesh.apply;

import io.mesh.curator.ZkNode;
import io.mesh.section.ModuleLock;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.ProgressRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An apply waiting for the module lock that no window holds says who holds it, in its progress node (decision 32),
 * with real ZooKeeper and the real engine; once it has the lock and is done, the node is gone.
 */
class ApplyProgressLockTest {
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "pl");

    /** @return the module's apply, on another thread */
    private CompletableFuture<ApplyReport> applyAsync(String module) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return here.applier().apply(module, () -> false);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void anApplyWaitingForTheLockSaysWhoHoldsItUntilItHasIt() throws Exception {
        String module = here.module();
        DesiredRecord d = zk.setDesired("module: " + module + "\nhosts: [host-a]\ncontainers:\n  web:\n    image: " + BUSYBOX + "\n"
                + "    network: none\n    stop-timeout: 1s\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n    ready: {min-healthy: 0s}\n", "r1");
        ModuleLock other = new ModuleLock(zk.client(), zk.paths(), module, ApplierExtension.HOST, new ProcessRef(4242, "mesh-tool"),
                LockHolder.APPLY);
        assertThat(other.acquire(Duration.ofSeconds(5))).isTrue();
        String path = zk.paths().progress(ApplierExtension.HOST, module);
        CompletableFuture<ApplyReport> apply = applyAsync(module);
        try {
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                ZkNode n = ZkNode.read(zk.client(), path);
                assertThat(n).as(path).isNotNull();
                ProgressRecord p = Json.read(n.data(), ProgressRecord.class);
                assertThat(p.detail()).isEqualTo("waiting for the module lock (held by apply of mesh-tool (pid 4242))");
                assertThat(p.push()).isEqualTo(d.push());
            });
            assertThat(apply).isNotDone();
        } finally {
            other.release();
        }
        assertThat(apply.get(30, TimeUnit.SECONDS).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        await().atMost(Duration.ofSeconds(5)).until(() -> zk.client().checkExists().forPath(path) == null);
    }
    /**
     * An apply that has the lock and waits for the host fence, held by another process of the host (a window's, a
     * hold's), says who holds it; once the fence is free it applies and the node goes.
     */
    @Test
    void anApplyWaitingForTheFenceSaysWhoHoldsItUntilItHasIt() throws Exception {
        String module = here.module();
        zk.setDesired("module: " + module + "\nhosts: [host-a]\ncontainers:\n  web:\n    image: " + BUSYBOX + "\n"
                + "    network: none\n    stop-timeout: 1s\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n    ready: {min-healthy: 0s}\n", "r1");
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("mesh-fence-holder");
        java.nio.file.Path release = dir.resolve("release");
        try (io.mesh.testing.ChildJvm holder = io.mesh.testing.ChildJvm.start("fence-holder", dir, "64m",
                io.mesh.section.FenceHolder.class.getName(), java.util.List.of(here.stateDir().toString(), module, "hold", release.toString()))) {
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> holder.output().contains("HELD") || !holder.isAlive());
            assertThat(holder.output()).contains("HELD");
            String path = zk.paths().progress(ApplierExtension.HOST, module);
            CompletableFuture<ApplyReport> apply = applyAsync(module);
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                ZkNode n = ZkNode.read(zk.client(), path);
                assertThat(n).as(path).isNotNull();
                assertThat(Json.read(n.data(), ProgressRecord.class).detail()).isEqualTo("waiting for the fence (held by fence-holder pid " + holder.pid() + ")");
            });
            assertThat(apply).isNotDone();
            java.nio.file.Files.createFile(release);
            assertThat(apply.get(30, TimeUnit.SECONDS).outcome()).isEqualTo(ApplyOutcome.APPLIED);
            await().atMost(Duration.ofSeconds(5)).until(() -> zk.client().checkExists().forPath(path) == null);
        }
    }
}
