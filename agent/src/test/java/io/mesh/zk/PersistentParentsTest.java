package io.mesh.zk;

import io.mesh.bench.RecordingRuntime;
import io.mesh.curator.PersistentParents;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.section.ModuleLock;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.window.HostContext;
import io.mesh.window.WindowJournal;
import io.mesh.window.WindowRunner;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowResult;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link PersistentParents} against a real ZooKeeper server whose container manager looks every 100 ms (instead of
 * 60 s): the parents of lock children, held and window nodes outlive it, where Curator's own container parents are
 * deleted (each test first waits for that, to show the server deletes containers at all).
 */
class PersistentParentsTest {
    private static final String CHECK_INTERVAL = "znode.container.checkIntervalMs";
    /** Read once, when the server starts (Curator's TestingZooKeeperMain); other tests' servers keep 60 s. */
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension().withServerProperty(CHECK_INTERVAL, "100");
    private final ZkPaths paths = new ZkPaths(ZkPaths.DEFAULT_ROOT);
    private final ProcessRef me = ProcessRef.current("test");

    /** Curator's own lock (container parent) on {@code path}, taken and released; then waits for the server to delete its parent. */
    private void containerParentIsReaped(String path) throws Exception {
        InterProcessMutex m = new InterProcessMutex(zk.client(), path);
        m.acquire();
        assertThat(zk.client().checkExists().forPath(path)).isNotNull();
        m.release();
        await().atMost(10, TimeUnit.SECONDS).until(() -> zk.client().checkExists().forPath(path) == null);
    }

    private void assertPersistentJson(String path) throws Exception {
        Stat s = zk.client().checkExists().forPath(path);
        assertThat(s).as(path).isNotNull();
        assertThat(s.getEphemeralOwner()).as(path + " is not ephemeral").isZero();
        assertThat(new String(zk.client().getData().forPath(path), StandardCharsets.UTF_8)).isEqualTo("{}");
    }

    @Test
    void theModuleLockParentOutlivesTheContainerManager() throws Exception {
        ModuleLock lock = new ModuleLock(zk.client(), paths, "store", "host-a", me, LockHolder.APPLY);
        assertThat(lock.acquire(Duration.ofSeconds(5))).isTrue();
        lock.release();
        containerParentIsReaped("/control/locks/store/host-a");
        assertPersistentJson(paths.lock("store", "host-a"));
        assertPersistentJson(paths.locks() + "/store"); // the level above, made with it
        assertThat(zk.client().getChildren().forPath(paths.lock("store", "host-a"))).isEmpty();
        // and the next acquisition uses it as it is
        long cversion = zk.client().checkExists().forPath(paths.lock("store", "host-a")).getCversion();
        ModuleLock again = new ModuleLock(zk.client(), paths, "store", "host-a", me, LockHolder.APPLY);
        assertThat(again.acquire(Duration.ofSeconds(5))).isTrue();
        again.release();
        assertThat(zk.client().checkExists().forPath(paths.lock("store", "host-a")).getCversion()).isEqualTo(cversion + 2);
    }

    @Test
    void theHeldAndWindowParentsOfAHostOutliveTheContainerManager() throws Exception {
        String yaml = "module: store\nhosts: [host-a]\ncontainers:\n  registry:\n    image: mesh-demo/busybox:1\n"
                + "    command: [sleep, \"3600\"]\nschedules:\n  gc:\n    cron: \"0 0 1 1 *\"\n"
                + "    while-stopped: [registry]\n    step:\n      image: mesh-demo/busybox:1\n      command: [\"true\"]\n    timeout: 1m\n";
        ModuleSpec spec = new ManifestParser().parse(yaml).get(0);
        zk.client().create().creatingParentsIfNeeded().forPath(paths.desired("store"),
                Json.bytes(new DesiredRecord("store", "r1", ZkPaths.pushName(1), spec)));
        RecordingRuntime runtime = new RecordingRuntime(); // the window's ZooKeeper side is what this test is about
        runtime.create(spec.dockerName("registry"), spec.containers().get("registry"), Map.of("mesh.module", "store", "mesh.container", "registry"));
        WindowRunner runner = new WindowRunner(HostContext.of(new MeshStore(zk.client(), paths), runtime, "host-a", me,
                new WindowJournal(Files.createTempDirectory("mesh-state"))));
        WindowResult r = runner.run("store", "gc", Duration.ofSeconds(5));
        assertThat(r.succeeded()).as(Json.text(r)).isTrue();
        assertThat(r.held()).containsExactly("store-registry");

        containerParentIsReaped("/control/locks/store/host-a");
        assertPersistentJson(paths.held("host-a"));
        assertPersistentJson(paths.windows("host-a"));
        assertPersistentJson(paths.lock("store", "host-a"));
        assertThat(zk.client().getChildren().forPath(paths.held("host-a"))).isEmpty();
        assertThat(zk.client().getChildren().forPath(paths.windows("host-a"))).isEmpty();
    }

    @Test
    void aContainerParentIsUsedAsItIsThenMadePersistentOnceDeleted() throws Exception {
        String parent = "/mesh/held/host-b";
        zk.client().create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(parent + "/x");
        PersistentParents.ensure(zk.client(), parent);
        assertThat(zk.client().getData().forPath(parent)).as("left as the recipe made it").isEmpty();
        zk.client().delete().forPath(parent + "/x");
        await().atMost(10, TimeUnit.SECONDS).until(() -> zk.client().checkExists().forPath(parent) == null);
        PersistentParents.ensure(zk.client(), parent); // not remembered as persistent: looked at again
        assertPersistentJson(parent);
    }

    @Test
    void aParentDeletedByHandWhileRememberedIsMadeAgain() throws Exception {
        String parent = paths.held("host-d");
        PersistentParents.ensure(zk.client(), parent);
        assertPersistentJson(parent);
        zk.client().delete().forPath(parent);
        // the read that remembered it set a watch: its deletion is noticed, and the next ensure makes it again
        await().atMost(10, TimeUnit.SECONDS).untilAsserted(() -> {
            PersistentParents.ensure(zk.client(), parent);
            assertPersistentJson(parent);
        });
    }

    @Test
    void deleteIfEmptyLeavesAParentThatSomeoneWaitsOn() throws Exception {
        String parent = paths.lock("store", "host-c");
        PersistentParents.ensure(zk.client(), parent);
        InterProcessMutex m = new InterProcessMutex(zk.client(), parent);
        m.acquire();
        assertThat(PersistentParents.deleteIfEmpty(zk.client(), parent)).isFalse();
        assertPersistentJson(parent);
        m.release();
        assertThat(PersistentParents.deleteIfEmpty(zk.client(), parent)).isTrue();
        assertThat(zk.client().checkExists().forPath(parent)).isNull();
        assertThat(PersistentParents.deleteIfEmpty(zk.client(), parent)).isFalse();
        // forgotten: the next ensure makes it again
        PersistentParents.ensure(zk.client(), parent);
        assertPersistentJson(parent);
    }
}
