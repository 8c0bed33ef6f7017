package io.mesh.zk;

import io.mesh.curator.MeshZk;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.Times;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** MeshStore against a real ZooKeeper: report writes from two processes, desired reads from the daemon's cache. */
class MeshStoreTest {
    private static final String HOST = "host-a", MODULE = "store";
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();

    private static ApplyReport report(String revision) {
        return ApplyReport.applied(HOST, MODULE, revision, "push-0000000001", Times.now(), null, List.of());
    }

    /**
     * A report write prepared for the apply's transaction with its lock's release: when that transaction fails, the
     * store tells whether it was applied all the same (its answer lost), so that the report is not written twice;
     * and when someone else wrote the node meanwhile, the next write reads and merges.
     */
    @Test
    void aPreparedWriteThatLandedIsKnownAndOneThatDidNotIsWrittenAgain() throws Exception {
        MeshStore agent = new MeshStore(zk.client(), zk.paths());
        String path = zk.paths().report(HOST, MODULE);
        assertThat(agent.prepareReport(report("r0"))).as("nothing written yet: no version to write at").isNull();
        agent.writeReport(report("r1"));

        MeshStore.ReportWrite landed = agent.prepareReport(report("r2"));
        zk.client().transaction().forOperations(landed.op()); // applied, as if its answer had been lost
        assertThat(agent.landed(landed)).isTrue();
        assertThat(agent.reportIsOurs(HOST, MODULE)).as("remembered at its new version").isTrue();
        assertThat(agent.report(HOST, MODULE).revision()).isEqualTo("r2");

        MeshStore.ReportWrite lost = agent.prepareReport(report("r3"));
        Instant t = Times.now();
        WindowResult w = new WindowResult("gc", "w-1", t, t, WindowOutcome.SUCCEEDED, 0, List.of(), List.of(), null);
        new MeshStore(zk.client(), zk.paths()).writeWindowResult(HOST, MODULE, w, report("r2")); // another process
        assertThatThrownBy(() -> zk.client().transaction().forOperations(lost.op()))
                .isInstanceOf(org.apache.zookeeper.KeeperException.BadVersionException.class);
        assertThat(agent.landed(lost)).isFalse();
        int version = zk.client().checkExists().forPath(path).getVersion();
        agent.writeReport(report("r3"));
        ApplyReport stored = agent.report(HOST, MODULE);
        assertThat(stored.revision()).isEqualTo("r3");
        assertThat(stored.lastWindow()).isEqualTo(w);
        assertThat(zk.client().checkExists().forPath(path).getVersion()).isEqualTo(version + 1);
    }

    /**
     * The agent writes its reports at the version it last wrote, without reading first; a window's result written by
     * another process meanwhile moves the version, so the agent's next write reads, and keeps that result.
     */
    @Test
    void aReportWrittenAfterAnotherProcessWroteKeepsWhatThatOneWrote() throws Exception {
        MeshStore agent = new MeshStore(zk.client(), zk.paths());
        MeshStore windowProcess = new MeshStore(zk.client(), zk.paths());
        agent.writeReport(report("r1"));
        agent.writeReport(report("r2")); // at the version it wrote
        Instant t = Times.now();
        WindowResult w = new WindowResult("gc", "w-1", t, t, WindowOutcome.SUCCEEDED, 0, List.of("store-registry"), List.of(), null);
        windowProcess.writeWindowResult(HOST, MODULE, w, report("r2"));

        agent.writeReport(report("r3")); // its remembered version is stale now: it must read, and merge
        ApplyReport stored = agent.report(HOST, MODULE);
        assertThat(stored.revision()).isEqualTo("r3");
        assertThat(stored.lastWindow()).isEqualTo(w);
        assertThat(stored.lastApplied().revision()).isEqualTo("r3");

        zk.client().delete().forPath(zk.paths().report(HOST, MODULE)); // deleted by hand: written again
        agent.writeReport(report("r4"));
        assertThat(agent.report(HOST, MODULE).revision()).isEqualTo("r4");
    }

    /** Once the daemon's cache has loaded, desired nodes come from it: the same validated record, and its deletes. */
    @Test
    void desiredNodesAreReadFromTheCacheOnceItHasLoaded() throws Exception {
        String yaml = "module: " + MODULE + "\nhosts: [" + HOST + "]\ncontainers:\n  registry:\n    image: mesh-demo/registry:2.8.2\n";
        zk.setDesired(yaml, "r1");
        MeshStore store = new MeshStore(zk.client(), zk.paths());
        DesiredRecord fromZk = store.desired(MODULE);
        CountDownLatch loaded = new CountDownLatch(1);
        try (CuratorCache cache = CuratorCache.build(zk.client(), zk.paths().desired())) {
            cache.listenable().addListener(CuratorCacheListener.builder().forInitialized(() -> {
                store.readDesiredFrom(cache);
                loaded.countDown();
            }).build());
            cache.start();
            assertThat(loaded.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(store.desired(MODULE)).isEqualTo(fromZk);

            zk.setDesired(yaml.replace("2.8.2", "2.8.3"), "r2");
            await().atMost(Duration.ofSeconds(10)).until(() -> "r2".equals(store.desired(MODULE).revision()));
            assertThat(store.desired(MODULE).spec().containers().get("registry").image()).isEqualTo("mesh-demo/registry:2.8.3");

            zk.client().delete().forPath(zk.paths().desired(MODULE));
            await().atMost(Duration.ofSeconds(10)).until(() -> store.desired(MODULE) == null);
        }
    }
    /**
     * The no-op reconcile's two facts (decision 0004) are read once with a watch and then answered from memory: until
     * another session changes the report or the host's held nodes.
     */
    @Test
    void reportAndHeldFactsFollowChangesMadeByAnotherSession() throws Exception {
        MeshStore agent = new MeshStore(zk.client(), zk.paths());
        assertThat(agent.reportIsOurs(HOST, MODULE)).as("nothing written yet").isFalse();
        agent.writeReport(report("r1"));
        assertThat(agent.reportIsOurs(HOST, MODULE)).isTrue();
        assertThat(agent.reportIsOurs(HOST, MODULE)).isTrue();
        assertThat(agent.heldNames(HOST)).isEmpty();
        try (org.apache.curator.framework.CuratorFramework other = MeshZk.connect(zk.connect(), Duration.ofSeconds(30))) {
            other.setData().forPath(zk.paths().report(HOST, MODULE), Json.bytes(report("by-hand")));
            await().atMost(Duration.ofSeconds(10)).until(() -> !agent.reportIsOurs(HOST, MODULE));
            agent.writeReport(report("r2"));
            assertThat(agent.reportIsOurs(HOST, MODULE)).isTrue();

            other.create().creatingParentsIfNeeded().forPath(zk.paths().held(HOST, "store-registry"), new byte[0]);
            await().atMost(Duration.ofSeconds(10)).until(() -> agent.heldNames(HOST).contains("store-registry"));
            other.delete().forPath(zk.paths().held(HOST, "store-registry"));
            await().atMost(Duration.ofSeconds(10)).until(() -> agent.heldNames(HOST).isEmpty());

            other.delete().forPath(zk.paths().report(HOST, MODULE));
            await().atMost(Duration.ofSeconds(10)).until(() -> !agent.reportIsOurs(HOST, MODULE));
        }
    }

    /**
     * A deleted module's tombstone (decision 11) reads as a spec that runs on no host and has no container, so the
     * apply removes the module's containers wherever they are; which hosts must report it comes with it.
     */
    @Test
    void aTombstoneReadsAsASpecThatRunsNowhere() throws Exception {
        Instant at = Instant.parse("2026-12-01T10:00:00Z");
        byte[] data = Json.bytes(DesiredRecord.tombstoneOf(MODULE, "deleted", "push-0000000007",
                new DesiredRecord.Deleted(List.of(HOST, "host-b"), at, "token")));
        assertThat(new String(data, java.nio.charset.StandardCharsets.UTF_8)).doesNotContain("\"spec\"");
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().desired(MODULE), data);

        DesiredRecord d = new MeshStore(zk.client(), zk.paths()).desired(MODULE);
        assertThat(d.tombstone()).isTrue();
        assertThat(d.push()).isEqualTo("push-0000000007");
        assertThat(d.revision()).isEqualTo("deleted");
        assertThat(d.spec().runsOn(HOST)).isFalse();
        assertThat(d.spec().containers()).isEmpty();
        assertThat(d.spec().schedules()).isEmpty();
        assertThat(d.deleted().named(HOST)).isTrue();
        assertThat(d.deleted().named("host-c")).isFalse();
        assertThat(d.deleted().at()).isEqualTo(at);

        zk.client().setData().forPath(zk.paths().desired(MODULE), "{\"module\":\"store\",\"push\":\"push-0000000008\",\"deleted\":{\"hosts\":3}}".getBytes());
        assertThatThrownBy(() -> new MeshStore(zk.client(), zk.paths()).desired(MODULE))
                .isInstanceOf(MeshStore.InvalidNodeException.class).hasMessageContaining("deleted object");
    }
}
