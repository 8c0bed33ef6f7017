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

    /**
     * @return a number that moves whenever what this source serves may have changed, so that an answer derived from
     *         it may be kept while it stands still ({@link FleetCache#generation()}); negative when the source cannot
     *         say (it reads ZooKeeper at each call): then nothing may be kept
     */
    default long generation() { return -1; }
}
