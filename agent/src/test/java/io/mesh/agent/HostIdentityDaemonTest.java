package io.mesh.agent;

import io.mesh.curator.HostIdentities;
import io.mesh.curator.LockNodes;
import io.mesh.curator.MeshZk;
import io.mesh.curator.ZkAuth;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowResult;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * A real agent daemon authenticated as its host (decision 19) on a real Docker engine and a real ZooKeeper: it claims
 * its agent node, applies a module and publishes its report, then runs a window that takes a fleet-wide slot
 * ({@code InterProcessSemaphoreV2} and its claim), the module lock ({@code InterProcessMutex}) and the held nodes
 * ({@code PersistentNode}), all under the per-host ACLs; another host's identity can delete none of them. What
 * happened is read from Docker's inspect and from ZooKeeper with a client that has no credentials.
 */
@Tag("slow")
class HostIdentityDaemonTest {
    private static final String HOST = "hi-host";
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    private final ZkPaths paths = new ZkPaths(ZkPaths.DEFAULT_ROOT);
    private final ZkAuth admin = ZkAuth.parse("mesh:admin-s3cret");
    private final ZkAuth own = ZkAuth.newHost(HOST, admin);
    private final ZkAuth other = ZkAuth.newHost("hi-other", admin);
    private final DockerEngine docker = TestDocker.engine();
    private final String module = TestDocker.uniqueModule("hi-");
    private final String app = module + "-app";
    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) closing.get(i).close(); // the daemon first: it makes nothing again
        TestDocker.clean(module);
    }

    private String manifest() {
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  app:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 2s\n"
                + "schedules:\n  sweep:\n    cron: \"30 3 * * *\"\n    timezone: UTC\n    max-concurrent: 1\n    while-stopped: [app]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [sh, -c, \"sleep 4; echo swept\"]\n      network: none\n    timeout: 1m\n";
    }

    private CuratorFramework raw(ZkAuth auth) throws Exception {
        return zk.plainClient(auth);
    }

    /** @return "scheme:user:perms" of each entry, as anyone reads it (hashes hidden) */
    private static List<String> acl(CuratorFramework c, String path) throws Exception {
        List<String> out = new ArrayList<>();
        for (ACL a : c.getACL().forPath(path)) out.add(a.getId().getScheme() + ":" + ZkAuth.userOf(a.getId()) + ":" + a.getPerms());
        return out;
    }

    private static final List<String> HOST_ONLY = List.of("digest:host-" + HOST + ":" + ZooDefs.Perms.ALL, "world:anyone:" + ZooDefs.Perms.READ);

    @Test
    void anAgentAuthenticatedAsItsHostAppliesPublishesAndRunsAWindowUnderPerHostAcls() throws Exception {
        CuratorFramework coordinator = MeshZk.connect(zk.connect(), Duration.ofSeconds(20), admin, paths);
        closing.add(coordinator);
        HostIdentities.register(coordinator, paths, admin, own, Instant.now());
        HostIdentities.register(coordinator, paths, admin, other, Instant.now());
        MeshZk.secure(coordinator, paths, admin);
        ModuleSpec spec = new ManifestParser().parse(manifest()).get(0);
        LockNodes.ensureForPush(coordinator, paths, Map.of(module, spec.hosts())); // as the push does, before its desired node
        coordinator.create().forPath(paths.desired(module), Json.bytes(new DesiredRecord(module, "r1", "push-0000000001", spec)));

        CuratorFramework agentClient = MeshZk.connect(zk.connect(), Duration.ofSeconds(20), own, paths);
        closing.add(agentClient);
        AgentConfig config = new AgentConfig(HOST, paths, Files.createTempDirectory("mesh-agent-hi"), Duration.ofMinutes(10),
                Duration.ofSeconds(2), Duration.ofMinutes(1));
        AgentDaemon daemon = new AgentDaemon(config, agentClient, docker, ProcessRef.current("mesh-agent run (test)"));
        closing.add(daemon);
        daemon.claimHost();
        daemon.start();

        CuratorFramework anyone = raw(null);
        CuratorFramework b = raw(other);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            byte[] d = anyone.checkExists().forPath(paths.report(HOST, module)) == null ? null : anyone.getData().forPath(paths.report(HOST, module));
            ApplyReport r = d == null ? null : Json.readOrNull(d, ApplyReport.class);
            return r != null && r.outcome() == ApplyOutcome.APPLIED && "r1".equals(r.revision());
        });
        var inspect = docker.inspect(app);
        assertThat(inspect.getState().getRunning()).isTrue();
        assertThat(inspect.getConfig().getLabels()).containsEntry(Labels.MODULE, module);
        String id = inspect.getId();
        assertThat(acl(anyone, paths.report(HOST, module))).as("the report is the host's").isEqualTo(HOST_ONLY);
        assertThat(acl(anyone, paths.agent(HOST))).as("the agent node is the host's").isEqualTo(HOST_ONLY);
        assertThat(acl(anyone, paths.lock(module, HOST))).as("the module lock's node: the coordinators made it, the host locks in it")
                .containsExactly("digest:mesh:" + ZooDefs.Perms.ALL,
                        "digest:host-" + HOST + ":" + (ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE | ZooDefs.Perms.READ | ZooDefs.Perms.WRITE),
                        "world:anyone:" + ZooDefs.Perms.READ);

        Future<WindowResult> window = daemon.runWindow(module, "sweep");
        String held = paths.held(HOST, app);
        String slot = paths.windowSlots(module, "sweep");
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                .until(() -> anyone.checkExists().forPath(held) != null);
        assertThat(acl(anyone, held)).as("the held node is the host's").isEqualTo(HOST_ONLY);
        List<String> lockChildren = anyone.getChildren().forPath(paths.lock(module, HOST));
        assertThat(lockChildren).hasSize(1);
        String lockChild = paths.lock(module, HOST) + "/" + lockChildren.get(0);
        assertThat(acl(anyone, lockChild)).isEqualTo(HOST_ONLY);
        List<String> claims = anyone.getChildren().forPath(ZkPaths.slotClaims(slot));
        assertThat(claims).as("the window's slot claim").singleElement().asString().startsWith(HOST + "--" + module);
        assertThat(acl(anyone, ZkPaths.slotClaims(slot) + "/" + claims.get(0))).isEqualTo(HOST_ONLY);
        assertThat(acl(anyone, ZkPaths.slotClaims(slot))).as("the slot's parents are the fleet's to create and delete in")
                .containsExactly("digest:" + ZkAuth.FLEET_USER + ":" + (ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE | ZooDefs.Perms.READ),
                        "world:anyone:" + ZooDefs.Perms.READ);
        // The held node exists before the container stops (SPEC "ZooKeeper layout"): wait for the stop.
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
                .until(() -> !Boolean.TRUE.equals(docker.inspect(app).getState().getRunning()));
        assertThat(anyone.checkExists().forPath(held)).as("still held while stopped").isNotNull();

        for (String p : List.of(held, paths.window(HOST, module), lockChild, paths.agent(HOST), paths.report(HOST, module))) {
            assertThat(catchThrowable(() -> b.delete().forPath(p))).as("another host deletes " + p)
                    .isInstanceOf(KeeperException.NoAuthException.class);
        }

        WindowResult r = window.get(60, TimeUnit.SECONDS);
        assertThat(r.succeeded()).as(r.toString()).isTrue();
        assertThat(anyone.checkExists().forPath(held)).isNull();
        assertThat(anyone.getChildren().forPath(ZkPaths.slotClaims(slot))).as("the slot given back").isEmpty();
        var after = docker.inspect(app);
        assertThat(after.getId()).as("the same container").isEqualTo(id);
        assertThat(after.getState().getRunning()).as("running again").isTrue();

        // Window requests (mesh window run), as mesh-agent run starts them: the host's node, made by its credentials, is
        // looked at, not created (ZooKeeper checks the right to create under /mesh/requests before the node's existence).
        WindowRequests requests = new WindowRequests(agentClient, paths, HOST, ProcessRef.current("mesh-agent run (test)"),
                daemon::runWindow, Duration.ofMinutes(10), daemon.timer());
        closing.add(requests);
        requests.start();
        assertThat(acl(anyone, paths.requests(HOST))).as("the coordinators made it").contains("world:anyone:" + ZooDefs.Perms.READ)
                .anyMatch(a -> a.startsWith("digest:mesh:"));
    }
}
