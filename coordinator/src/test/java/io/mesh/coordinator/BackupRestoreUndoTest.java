package io.mesh.coordinator;

import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A restore that ZooKeeper fails mid-way puts back what it wrote (decision 39; failure model row 127): a hold, freeze
 * or drain left behind without the desired state it restrains would hold agents back. ZooKeeper itself refuses the
 * last part here: the target's desired parent takes no creates (its ACL is read-only), so the holds, freezes and
 * drains are written, then the desired node's create fails. What the tree holds after is read from ZooKeeper.
 */
class BackupRestoreUndoTest {
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();

    private static byte[] bytes(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    @Test
    void aRestoreZooKeeperRefusesMidWayPutsBackWhatItWrote() throws Exception {
        CuratorFramework c = zk.client();
        // the backup: a freeze, a drain and a desired node of another root
        c.create().creatingParentsIfNeeded().forPath("/undo-src/freezes/m", bytes("{\"reason\":\"backup's\"}"));
        c.create().creatingParentsIfNeeded().forPath("/undo-src/drains/host-a", bytes("{\"reason\":\"backup's drain\"}"));
        c.create().creatingParentsIfNeeded().forPath("/undo-src/desired/m", bytes("{\"module\":\"m\"}"));
        BackupDocument doc = new BackupStore(c, new ZkPaths("/undo-src")).take();
        assertThat(doc.nodes()).extracting(BackupDocument.Node::path).contains("/freezes/m", "/drains/host-a", "/desired/m");

        // the tree restored into: a freeze of its own, and a desired parent ZooKeeper takes no create under
        c.create().creatingParentsIfNeeded().forPath("/undo-dst/freezes/m", bytes("before"));
        c.create().withACL(ZooDefs.Ids.READ_ACL_UNSAFE).forPath("/undo-dst/desired", new byte[0]); // as the backup holds it

        assertThatThrownBy(() -> new BackupStore(c, new ZkPaths("/undo-dst")).restore(doc, true))
                .hasMessageContaining("the restore failed").hasMessageContaining("put back as they were")
                .hasMessageMatching("(?s).*after writing [2-9]\\d* node\\(s\\).*"); // the freeze and the drain went in first
        assertThat(new String(c.getData().forPath("/undo-dst/freezes/m"), StandardCharsets.UTF_8))
                .as("the freeze the restore set, put back").isEqualTo("before");
        assertThat(c.checkExists().forPath("/undo-dst/drains/host-a")).as("the drain the restore created, deleted again").isNull();
        assertThat(c.checkExists().forPath("/undo-dst/desired/m")).isNull();
    }
}
