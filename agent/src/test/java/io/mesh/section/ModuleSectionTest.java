package io.mesh.section;

import io.mesh.curator.MeshZk;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ProcessRef;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The session rule of {@link ModuleSection} against a real ZooKeeper server: a lock is intact only when it was taken
 * on the session that is still connected.
 */
class ModuleSectionTest {
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();

    /**
     * FleetHistoryIT seed 8: an apply waited for the lock behind a window; the agent was paused past its session;
     * Curator made a new session, the window's node was deleted, and the apply's waiter node, made by the lost session
     * and not yet expired by the server, came first: the apply "held" a lock whose node was about to vanish, read the
     * held nodes on the new session and recreated a container a held node still named. A lock taken across a session
     * change is not intact, so the apply starts again on the new session.
     */
    @Test
    void aLockTakenAcrossASessionChangeIsNotIntact(@TempDir Path stateDir) throws Exception {
        try (CuratorFramework agent = MeshZk.connect(zk.connect(), Duration.ofSeconds(10))) {
            MeshStore store = new MeshStore(agent, zk.paths());
            store.session(); // the guard listens from here on
            String lockPath = zk.paths().lock("m", "h");
            InterProcessMutex window = new InterProcessMutex(zk.client(), lockPath);
            window.acquire();

            ModuleSection apply = new ModuleSection(store, new HostFence(stateDir), "m", "h", ProcessRef.current("test"), "apply");
            CompletableFuture<Boolean> locked = CompletableFuture.supplyAsync(() -> {
                try {
                    return apply.lock(Duration.ofSeconds(30));
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> zk.client().getChildren().forPath(lockPath).size() == 2);
            long session = agent.getZookeeperClient().getZooKeeper().getSessionId();
            // What Curator does when a session times out while SUSPENDED: a new handle, a new session; the old
            // session's nodes stay on the server until it expires them.
            agent.getZookeeperClient().getZooKeeper().getTestable().injectSessionExpiration();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                long now = agent.getZookeeperClient().getZooKeeper().getSessionId();
                return now != 0 && now != session && store.session().connected();
            });
            window.release();

            assertThat(locked.get(20, TimeUnit.SECONDS)).as("the waiter got the lock").isTrue();
            assertThat(apply.lockIntact()).as("a lock whose node was made by a lost session").isFalse();
            apply.close();
        }
    }

    @Test
    void aLockTakenOnTheConnectedSessionIsIntact(@TempDir Path stateDir) throws Exception {
        try (CuratorFramework agent = MeshZk.connect(zk.connect(), Duration.ofSeconds(10))) {
            MeshStore store = new MeshStore(agent, zk.paths());
            ModuleSection apply = new ModuleSection(store, new HostFence(stateDir), "m", "h", ProcessRef.current("test"), "apply");
            assertThat(apply.lock(Duration.ofSeconds(10))).isTrue();
            assertThat(apply.lockIntact()).isTrue();
            assertThat(apply.fence(Duration.ofSeconds(1))).isTrue();
            apply.close();
            assertThat(apply.state()).isEqualTo(ModuleSection.State.RELEASED);
        }
    }
}
