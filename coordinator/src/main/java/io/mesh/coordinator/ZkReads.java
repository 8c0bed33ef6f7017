package io.mesh.coordinator;

import io.mesh.curator.ZkNode;
import io.mesh.wire.Json;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.UncheckedIOException;
import java.util.List;

/**
 * Reads that tolerate nodes vanishing between a {@code getChildren} and a {@code getData} (ephemeral held, window
 * and agent nodes do), and nodes whose data is not the expected JSON (skipped with a warning).
 */
final class ZkReads {
    private static final Logger LOG = LoggerFactory.getLogger(ZkReads.class);

    private ZkReads() {}

    /** @return a {@link NodeSource} that reads ZooKeeper at every call, through {@code client} */
    static NodeSource direct(CuratorFramework client) {
        return new NodeSource() {
            @Override public List<String> children(String path) throws Exception { return ZkReads.children(client, path); }
            @Override public <T> T read(String path, Class<T> type) throws Exception { return ZkReads.read(client, path, type); }
        };
    }

    /**
     * @return the children's names, sorted; empty when the node does not exist
     * @throws Exception ZooKeeper errors other than a missing node
     */
    static List<String> children(CuratorFramework client, String path) throws Exception {
        try {
            return client.getChildren().forPath(path).stream().sorted().toList();
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    /**
     * @return the node's data as a record, or {@code null} when the node does not exist or is not that JSON
     * @throws Exception ZooKeeper errors other than a missing node
     */
    static <T> T read(CuratorFramework client, String path, Class<T> type) throws Exception {
        ZkNode node = ZkNode.read(client, path);
        return node == null ? null : parse(path, node.data(), type);
    }

    /** @return {@code data} as a record of {@code type}; {@code null} (with a warning) when it is empty or not that JSON */
    static <T> T parse(String path, byte[] data, Class<T> type) {
        if (data == null || data.length == 0) return null;
        try {
            return Json.read(data, type);
        } catch (UncheckedIOException e) {
            LOG.warn("skipping {}: {}", path, e.getMessage());
            return null;
        }
    }
}
