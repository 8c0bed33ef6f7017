package io.mesh.curator;

import io.mesh.wire.Json;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * A node's data and stat as one read saw them: what a write at the version read ({@code withVersion(version())})
 * starts from.
 *
 * @param data the node's bytes
 * @param stat the node's stat at that read
 */
public record ZkNode(byte[] data, Stat stat) {
    /**
     * @param client a started Curator client
     * @param path   the node's path
     * @return the node as read now; {@code null} when there is no such node
     * @throws Exception from ZooKeeper, other than the node's absence
     */
    public static ZkNode read(CuratorFramework client, String path) throws Exception {
        Stat stat = new Stat();
        try {
            return new ZkNode(client.getData().storingStatIn(stat).forPath(path), stat);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    /** @return the node's data version at the read */
    public int version() { return stat.getVersion(); }

    /**
     * @param type the record type
     * @return the data read as one JSON record of {@code type}; {@code null} when it is not one ({@link Json#readOrNull})
     */
    public <T> T as(Class<T> type) { return Json.readOrNull(data, type); }
}
