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
                    // The layout lost: the node and its parent go at once (the agent would make the node again between two deletes)
                    coordinator.transaction().forOperations(coordinator.transactionOp().delete().forPath(paths.agent(HOST)),
                            coordinator.transactionOp().delete().forPath(paths.agents()));
                    long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                    while (System.nanoTime() < until) { // it tries every 2 s
                        assertThat(coordinator.checkExists().forPath(paths.agents())).as("no shared parent made by the host").isNull();
                        Thread.sleep(200);
                    }
                    MeshZk.secure(coordinator, paths, admin); // the admin makes the layout again
                    await().atMost(Duration.ofSeconds(10)).until(() -> coordinator.checkExists().forPath(paths.agent(HOST)) != null);
                    List<ACL> parent = coordinator.getACL().forPath(paths.agents());
                    assertThat(parent).as("the parent is the admin's").anyMatch(a -> "digest".equals(a.getId().getScheme())
                            && ZkAuth.userOf(a.getId()).equals("mesh") && a.getPerms() == org.apache.zookeeper.ZooDefs.Perms.ALL);
                } finally {
                    node.close();
                }
            }
        }
    }
}
