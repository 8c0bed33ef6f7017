package io.mesh.apply;

import io.mesh.curator.MeshZk;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.window.HostContext;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The apply's ZooKeeper side, against a real Docker engine and a real ZooKeeper: when it takes the module lock and
 * writes its report, and what it reports for modules that are not this host's (its containers' changes are
 * {@link ApplierTest}'s, split from it so that two test JVMs share the two halves).
 */
class ApplierLockAndReportTest {
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "ap");
    private DockerEngine docker;
    private Applier applier;
    private String module;

    @BeforeEach
    void setUp() {
        docker = here.docker();
        module = here.module();
        applier = here.applier();
    }

    private String yaml(String webImage, String webEnv, boolean withWorker) {
        return WebAndWorker.yaml(module, webImage, webEnv, withWorker);
    }

    private static Map<String, ContainerResult> byName(ApplyReport r) { return WebAndWorker.byName(r); }

    /**
     * A module of another host with nothing of it here gets no report from this host, also while ZooKeeper is down:
     * the daemon's desired cache says whose it is (the fleet review saw agents report "failed: ZooKeeper is not
     * connected" for other hosts' modules after a quorum loss, reports that never cleared).
     */
    @Test
    void aModuleOfAnotherHostGetsNoReportFromThisOneWhileZooKeeperIsDown() throws Exception {
        zk.setDesired(yaml(BUSYBOX, "one", false).replace("hosts: [host-a]", "hosts: [host-b]"), "r1");
        try (CuratorFramework agent = MeshZk.connect(zk.connect(), Duration.ofSeconds(10));
             CuratorCache cache = CuratorCache.build(agent, zk.paths().desired())) {
            MeshStore store = new MeshStore(agent, zk.paths());
            cache.start();
            store.readDesiredFrom(cache);
            await().atMost(Duration.ofSeconds(10)).until(() -> store.desired(module) != null);
            Applier elsewhere = here.applier(HostContext.of(store, docker, ApplierExtension.HOST, ProcessRef.current("test"), here.journal()));
            zk.server().stop();
            AtomicBoolean stopping = new AtomicBoolean();
            try {
                await().atMost(Duration.ofSeconds(20)).until(() -> !store.session().connected());
                CompletableFuture<ApplyReport> applied = CompletableFuture.supplyAsync(() -> {
                    try {
                        return elsewhere.apply(module, stopping::get);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                // at once: not waited out as a blip (20 s), nor kept for a failed report until ZooKeeper answers
                assertThat(applied.get(5, TimeUnit.SECONDS)).as("no report").isNull();
            } finally {
                stopping.set(true);
                zk.server().restart();
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> store.session().connected());
            assertThat(zk.client().checkExists().forPath(zk.paths().report("host-a", module))).isNull();
        }
    }

    /** Decision 0004: a reconcile that finds the module as its last report says takes no lock and writes nothing. */
    @Test
    void aNoOpReconcileTakesNoLockAndWritesNothingButDriftAndPushesDo() throws Exception {
        zk.setDesired(yaml(BUSYBOX, "one", true), "r1");
        ApplyReport created = applier.apply(module, () -> false);
        assertThat(byName(created).values()).extracting(ContainerResult::action).containsOnly(ContainerAction.CREATED);
        String reportPath = zk.paths().report("host-a", module), lockPath = zk.paths().lock(module, "host-a");
        org.apache.zookeeper.data.Stat report = zk.client().checkExists().forPath(reportPath);
        int lockChildrenMade = zk.client().checkExists().forPath(lockPath).getCversion();

        // The report keeps saying what the push did: the containers are as it left them, with the ids it names.
        for (int i = 0; i < 3; i++) assertThat(applier.apply(module, () -> false)).isEqualTo(created);
        assertThat(zk.client().checkExists().forPath(reportPath).getMzxid()).as("report not written").isEqualTo(report.getMzxid());
        assertThat(zk.client().checkExists().forPath(lockPath).getCversion()).as("no lock node made").isEqualTo(lockChildrenMade);

        // drift: a container removed by hand is seen and created again, under the lock
        docker.remove(docker.idByName(module + "-worker"));
        ApplyReport drift = applier.apply(module, () -> false);
        assertThat(byName(drift).get("worker").action()).isEqualTo(ContainerAction.CREATED);
        assertThat(byName(drift).get("web").action()).isEqualTo(ContainerAction.UNCHANGED);
        assertThat(zk.client().checkExists().forPath(lockPath).getCversion()).isGreaterThan(lockChildrenMade);
        assertThat(Json.read(zk.client().getData().forPath(reportPath), ApplyReport.class).containers()).isEqualTo(drift.containers());

        // a container stopped by hand is recreated: reported again
        applier.apply(module, () -> false);
        String oldWeb = docker.idByName(module + "-web");
        ApplyReport before = applier.apply(module, () -> false);
        docker.client().stopContainerCmd(oldWeb).withTimeout(0).exec();
        ApplyReport restarted = applier.apply(module, () -> false);
        assertThat(byName(restarted).get("web").action()).isEqualTo(ContainerAction.RECREATED);
        assertThat(restarted).isNotEqualTo(before);

        // the report node deleted by hand, or lost with ZooKeeper's data: the next reconcile writes it again
        applier.apply(module, () -> false);
        zk.client().delete().forPath(reportPath);
        ApplyReport rewritten = applier.apply(module, () -> false);
        assertThat(Json.read(zk.client().getData().forPath(reportPath), ApplyReport.class).containers()).isEqualTo(rewritten.containers());

        // a held node on a running container (a stale one left by hand, or one that outlived its window's lock):
        // reported held, never "unchanged", and the module deferred to it (the push has not landed on that
        // container: `mesh push --wait` must not say applied), naming the window the node names; once the node
        // goes, the next apply applies
        String webId = docker.idByName(module + "-web");
        zk.client().create().creatingParentsIfNeeded().forPath(zk.paths().held("host-a", module + "-web"), Json.bytes(
                new HeldRecord("host-a", module, module + "-web", webId, "gc", "w-test", Times.now(), ProcessRef.current("test"))));
        ApplyReport held = applier.apply(module, () -> false);
        assertThat(byName(held).get("web").action()).isEqualTo(ContainerAction.HELD);
        assertThat(held.outcome()).isEqualTo(ApplyOutcome.DEFERRED);
        assertThat(held.window().window()).isEqualTo("w-test");
        assertThat(held.window().held()).containsExactly(module + "-web");
        zk.client().delete().forPath(zk.paths().held("host-a", module + "-web"));
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);

        // a push with the very same spec gets its own report
        zk.setDesired(yaml(BUSYBOX, "one", true), "r2");
        ApplyReport pushed = applier.apply(module, () -> false);
        assertThat(pushed.revision()).isEqualTo("r2");
        assertThat(byName(pushed).values()).extracting(ContainerResult::action).containsOnly(ContainerAction.UNCHANGED);
        assertThat(Json.read(zk.client().getData().forPath(reportPath), ApplyReport.class).revision()).isEqualTo("r2");
    }

    /**
     * A lock child made by this process's own session but owned by no acquisition (what a protected create whose
     * answer was lost leaves when Curator's background clean-up gives up) does not block the module for as long as the
     * session lives; a lock child of another session is left alone: whoever holds it, holds the lock.
     */
    @Test
    void aLockNodeOfThisSessionThatNobodyOwnsIsRemovedOneOfAnotherSessionIsNot() throws Exception {
        zk.setDesired(yaml(BUSYBOX, "one", false), "r1");
        String lockPath = zk.paths().lock(module, "host-a");
        byte[] holder = "{\"host\":\"host-a\",\"purpose\":\"apply\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        try (org.apache.curator.framework.CuratorFramework other = MeshZk.connect(zk.connect(), Duration.ofSeconds(30))) {
            String theirs = other.create().creatingParentContainersIfNeeded().withProtection()
                    .withMode(org.apache.zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL).forPath(lockPath + "/lock-", holder);
            long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            assertThat(applier.apply(module, () -> System.nanoTime() > until)).as("waits while another session holds the lock").isNull();
            assertThat(zk.client().checkExists().forPath(theirs)).as("another session's lock node").isNotNull();
        }

        String orphan = zk.client().create().creatingParentContainersIfNeeded().withProtection()
                .withMode(org.apache.zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL).forPath(lockPath + "/lock-", holder);
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        ApplyReport r = applier.apply(module, () -> System.nanoTime() > deadline);
        assertThat(r).as("applied within 30 s, the orphan out of the way").isNotNull();
        assertThat(r.outcome()).as("report %s", r).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(zk.client().checkExists().forPath(orphan)).as("the orphan").isNull();
        assertThat(zk.client().getChildren().forPath(lockPath)).isEmpty();
    }

    /** A report that another process rewrote meanwhile is read and merged, then written, then the lock released. */
    @Test
    void aReportRewrittenByAnotherProcessIsMergedAndTheLockStillReleased() throws Exception {
        zk.setDesired(yaml(BUSYBOX, "one", false), "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        String report = zk.paths().report("host-a", module);
        // another process (a window run by `mesh-agent window`) records its result in the report
        ApplyReport theirs = Json.read(zk.client().getData().forPath(report), ApplyReport.class)
                .withLastWindow(new WindowResult("gc", "w-1", java.time.Instant.parse("2026-11-30T03:30:00Z"),
                        java.time.Instant.parse("2026-11-30T03:30:05Z"), WindowOutcome.SUCCEEDED, 0, List.of(), List.of(), null));
        zk.client().setData().forPath(report, Json.bytes(theirs));
        zk.setDesired(yaml(BUSYBOX, "two", false), "r2");
        ApplyReport r = applier.apply(module, () -> false);
        assertThat(r.outcome()).isEqualTo(ApplyOutcome.APPLIED);
        ApplyReport stored = Json.read(zk.client().getData().forPath(report), ApplyReport.class);
        assertThat(stored.revision()).isEqualTo("r2");
        assertThat(stored.lastWindow()).as("their window result kept").isNotNull();
        assertThat(stored.lastWindow().window()).isEqualTo("w-1");
        assertThat(zk.client().getChildren().forPath(zk.paths().lock(module, "host-a"))).as("lock released").isEmpty();
    }

    @Test
    void aModuleOfAnotherHostIsNotReportedHere() throws Exception {
        zk.setDesired(yaml(BUSYBOX, "one", false).replace("hosts: [host-a]", "hosts: [host-b]"), "r1");
        assertThat(applier.apply(module, () -> false)).isNull();
        assertThat(zk.client().checkExists().forPath(zk.paths().report("host-a", module))).isNull();
        assertThat(docker.moduleContainers(module)).isEmpty();
    }

    @Test
    void anInvalidDesiredNodeIsReportedFailedAndNothingIsTouched() throws Exception {
        zk.setDesired(yaml(BUSYBOX, "one", false), "r1");
        applier.apply(module, () -> false);
        String before = docker.inspect(module + "-web").getId();
        // A process bypassing the coordinator writes a spec with an unknown field.
        String bad = "{\"module\":\"" + module + "\",\"revision\":\"rX\",\"push\":\"push-0000000099\",\"spec\":{\"module\":\""
                + module + "\",\"hosts\":[\"host-a\"],\"containers\":{\"web\":{\"image\":\"" + BUSYBOX + "\",\"mem_limit\":\"1g\"}}}}";
        zk.client().setData().forPath(zk.paths().desired(module), bad.getBytes());
        ApplyReport r = applier.apply(module, () -> false);
        assertThat(r.outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(r.error()).contains("containers.web.mem_limit");
        assertThat(docker.inspect(module + "-web").getId()).isEqualTo(before);
        assertThat(docker.inspect(module + "-web").getState().getRunning()).isTrue();
    }
}
