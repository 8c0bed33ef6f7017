package io.mesh.agent;

import io.mesh.curator.HostIdentities;
import io.mesh.curator.MeshZk;
import io.mesh.curator.ZkAuth;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.MeshVersion;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An agent authenticated as its host meets a tree that lost its layout (an ensemble that lost its data; decision 39
 * item 6), against a real ZooKeeper server: its agent node cannot be made again, and it makes no shared parent (which
 * would carry the host's ACL and shut the admin out); once the admin makes the layout again, its node comes back.
 */
class AgentNodeEmptyTreeTest {
    private static final String HOST = "et-host";
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();

    /** Adds {@code path} and every node below it to {@code out}, parents first. */
    private static void collect(CuratorFramework c, String path, List<String> out) throws Exception {
        out.add(path);
        for (String child : c.getChildren().forPath(path)) collect(c, path + "/" + child, out);
    }

    @Test
    void aHostsIdentityMakesNoSharedParentAndItsNodeComesBackWithTheLayout() throws Exception {
        ZkPaths paths = new ZkPaths(ZkPaths.DEFAULT_ROOT);
        ZkAuth admin = ZkAuth.parse("mesh:admin-s3cret");
        ZkAuth own = ZkAuth.newHost(HOST, admin);
        try (CuratorFramework coordinator = MeshZk.connect(zk.connect(), Duration.ofSeconds(20), admin, paths)) {
            HostIdentities.register(coordinator, paths, admin, own, Instant.now());
            MeshZk.secure(coordinator, paths, admin);
            try (CuratorFramework agentClient = MeshZk.connect(zk.connect(), Duration.ofSeconds(20), own, paths)) {
                AgentNode node = new AgentNode(agentClient, paths.agent(HOST),
                        new AgentRecord(HOST, MeshVersion.CURRENT, ProcessHandle.current().pid(), Instant.now()), () -> { });
                try {
                    node.claim();
                    // The tree lost, as an ensemble that lost its data: every node under the root goes at once, deepest
                    // first (the agent would make its node again between two deletes)
                    List<String> all = new java.util.ArrayList<>();
                    collect(coordinator, paths.root(), all);
                    java.util.Collections.reverse(all);
                    coordinator.transaction().forOperations(all.stream().map(p -> {
                        try {
                            return coordinator.transactionOp().delete().forPath(p);
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    }).toList());
                    long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                    while (System.nanoTime() < until) { // it tries every 2 s
                        assertThat(coordinator.checkExists().forPath(paths.root())).as("no shared parent made by the host").isNull();
                        Thread.sleep(200);
                    }
                    // the admin makes the layout and the host's identity again (mesh-coordinator credentials)
                    HostIdentities.register(coordinator, paths, admin, own, Instant.now());
                    MeshZk.secure(coordinator, paths, admin);
                    await().atMost(Duration.ofSeconds(10)).until(() -> coordinator.checkExists().forPath(paths.agent(HOST)) != null);
                    List<ACL> parent = coordinator.getACL().forPath(paths.agents());
                    assertThat(coordinator.getACL().forPath(paths.root())).as("the root is the admin's")
                            .anyMatch(a -> "digest".equals(a.getId().getScheme()) && ZkAuth.userOf(a.getId()).equals("mesh"));
                    assertThat(parent).as("the parent is the admin's").anyMatch(a -> "digest".equals(a.getId().getScheme())
                            && ZkAuth.userOf(a.getId()).equals("mesh") && a.getPerms() == org.apache.zookeeper.ZooDefs.Perms.ALL);
                } finally {
                    node.close();
                }
            }
        }
    }
}
