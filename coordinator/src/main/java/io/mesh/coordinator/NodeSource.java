package io.mesh.coordinator;

import java.util.List;

/**
 * Where the coordinator's read-only views ({@link FleetView}, {@link FleetStatus}, {@link PushStatus}) read nodes
 * from: ZooKeeper itself ({@link ZkReads#direct}) or the coordinator's {@link FleetCache}. Writers never read
 * through it: what they check before a write is read from ZooKeeper.
 */
interface NodeSource {
    /**
     * @param path a node's path
     * @return its children's names, sorted; empty when the node does not exist
     * @throws Exception ZooKeeper errors other than a missing node
     */
    List<String> children(String path) throws Exception;

    /**
     * @param path a node's path
     * @param type the record its data holds
     * @return the data as that record; {@code null} when the node does not exist or its data is not that JSON
     * @throws Exception ZooKeeper errors other than a missing node
     */
    <T> T read(String path, Class<T> type) throws Exception;
}
