package io.mesh.faults;

import io.mesh.curator.MeshZk;
import io.mesh.section.ModuleLock;
import io.mesh.testing.ChildJvm;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ProcessRef;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.mesh.faults.FaultFixture.sleep;
import static io.mesh.faults.FaultFixture.sleepStep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Fault 5 (docs/failure-model.md): a module lock's {@code release()} fails because the connection is lost (the
 * CURATOR-678 / CURATOR-307 class: a lock node left behind by a live session wedges every later acquirer).
 *
 * <ol>
 *   <li>Deterministically: a client connected to one server holds the lock; that server is killed; the release
 *       fails on connection loss. Another process's acquire waits (the session lives) and gets the lock once the
 *       server is back (Curator's guaranteed delete removes the node on reconnection); the first client, on the same
 *       thread, gets it again afterwards; no child is left.</li>
 *   <li>The agent: a daemon connected to one server only, reconciling every second while that server is killed and
 *       started again three times, with pushes in between. The daemon neither crashes nor wedges: the last push is
 *       applied, and the lock is free afterwards.</li>
 * </ol>
 */
@Tag("slow")
class LockReleaseFailureTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    @Test
    void aReleaseThatFailsOnConnectionLossDoesNotWedgeTheLock() throws Exception {
        int server = fx.zk.follower();
        assertThat(server).isPositive();
        ExecutorService holderThread = Executors.newSingleThreadExecutor();
        // production session timeout; a short retry so that the release fails within seconds rather than after backoff
        CuratorFramework single = CuratorFrameworkFactory.builder().connectString(fx.zk.connect(server))
                .sessionTimeoutMs((int) MeshZk.SESSION_TIMEOUT.toMillis()).connectionTimeoutMs(2000)
                .retryPolicy(new RetryOneTime(200)).build();
        try {
            single.start();
            assertThat(single.blockUntilConnected(20, TimeUnit.SECONDS)).isTrue();
            ProcessRef me = ProcessRef.current("release-failure test");
            ModuleLock first = new ModuleLock(single, fx.paths, fx.module, fx.host, me, LockHolder.APPLY);
            assertThat(holderThread.submit(() -> first.acquire(Duration.ofSeconds(10))).get(20, TimeUnit.SECONDS)).isTrue();
            assertThat(fx.lockChildren()).hasSize(1);

            fx.zk.kill(server);
            Future<?> release = holderThread.submit(() -> {
                first.release();
                return null;
            });
            assertThatThrownBy(() -> release.get(30, TimeUnit.SECONDS)).as("release on a lost connection").hasRootCauseInstanceOf(
                    org.apache.zookeeper.KeeperException.ConnectionLossException.class);
            assertThat(first.isHeld()).isFalse();

            // Another process waits: the node stays while the session lives ...
            ModuleLock other = new ModuleLock(fx.client, fx.paths, fx.module, fx.host, new ProcessRef(1, "other"), LockHolder.APPLY);
            ExecutorService otherThread = Executors.newSingleThreadExecutor();
            try {
                Future<Boolean> got = otherThread.submit(() -> other.acquire(Duration.ofSeconds(30)));
                sleep(Duration.ofSeconds(1)); // deliberate: a quiet period in which it must not get the lock
                assertThat(got.isDone()).isFalse();
                // ... and gets the lock once the server is back and the guaranteed delete has run.
                fx.zk.start(server);
                assertThat(got.get(40, TimeUnit.SECONDS)).isTrue();
                otherThread.submit(() -> {
                    other.release();
                    return null;
                }).get(20, TimeUnit.SECONDS);
            } finally {
                otherThread.shutdownNow();
            }
            // The first client's next acquire, on the same thread, works too.
            ModuleLock again = new ModuleLock(single, fx.paths, fx.module, fx.host, me, LockHolder.APPLY);
            assertThat(holderThread.submit(() -> again.acquire(Duration.ofSeconds(20))).get(30, TimeUnit.SECONDS)).isTrue();
            holderThread.submit(() -> {
                again.release();
                return null;
            }).get(20, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> fx.lockChildren().isEmpty());
        } finally {
            holderThread.shutdownNow();
            single.close();
        }
    }

    @Test
    void theDaemonNeitherCrashesNorWedgesWhenItsServerDiesUnderIt() throws Exception {
        int server = fx.zk.follower();
        assertThat(server).isPositive();
        fx.setDesired(fx.yaml("one", "unless-stopped", sleepStep(1), "1m"), "r1");
        ChildJvm daemon = fx.daemon("daemon", "1s", fx.zk.connect(server));
        fx.awaitApplied("r1", Duration.ofSeconds(60));

        for (int round = 2; round <= 4; round++) {
            fx.setDesired(fx.yaml("m" + round, "unless-stopped", sleepStep(1), "1m"), "r" + round);
            sleep(Duration.ofMillis(100L * round)); // deliberate: the fault 100, 200, 300 ms after the push
            fx.zk.kill(server);
            sleep(Duration.ofSeconds(2)); // deliberate: the outage's length
            fx.zk.start(server);
            fx.zk.awaitQuorum(Duration.ofSeconds(60));
        }
        fx.setDesired(fx.yaml("last", "unless-stopped", sleepStep(1), "1m"), "r5");
        fx.awaitApplied("r5", Duration.ofSeconds(60));
        fx.awaitConverged("last", Duration.ofSeconds(30));
        assertThat(daemon.isAlive()).as("daemon log:\n%s", daemon.output()).isTrue();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).ignoreExceptions()
                .until(() -> fx.lockChildren().isEmpty());
        // another process gets the lock at once
        ModuleLock other = new ModuleLock(fx.client, fx.paths, fx.module, fx.host, new ProcessRef(1, "other"), LockHolder.APPLY);
        try {
            assertThat(other.acquire(Duration.ofSeconds(10))).isTrue();
        } finally {
            other.release();
        }
        ApplyReport last = fx.report();
        assertThat(last.outcome()).isEqualTo(ApplyOutcome.APPLIED);
    }
}
