/**
 * Curator infrastructure both sides share: the client and the nodes mesh keeps in ZooKeeper, on top of the layout and
 * records of {@code io.mesh.wire}.
 *
 * <ul>
 *   <li><b>Clients and ACLs</b>: {@code MeshZk} makes every Curator client ({@code runSafeService}: no thread at rest,
 *       decision 23); with {@code --zk-auth-file}/{@code MESH_ZK_AUTH}, {@code ZkAuth} (digest auth) and
 *       {@code MeshAcls} (the ACL of each path). Host identities: {@code HostIdentities}, {@code HostIdentity},
 *       {@code LockNodes} (each host's lock node; {@code holders}: who holds and who waits; decision 19).</li>
 *   <li><b>Held registry</b>: {@code HeldRegistry}, {@code HeldNode}: a window's ephemeral held nodes, an operator's
 *       persistent hold (decisions 2, 15, 25).</li>
 *   <li><b>Nodes</b>: {@code PersistentParents} (decision 5), {@code ZkNode}, {@code MultiRead}, {@code RolloutNodes}
 *       (decision 13), {@code ZkClock} (ZooKeeper's time, decision 27).</li>
 *   <li><b>Events</b>: {@code EventOutbox}, the webhooks' outbox {@code /mesh/events/<writer>} (decision 34): a
 *       synchronous write, a posted one never waited for, or a create inside the caller's transaction.</li>
 * </ul>
 *
 * <p>Rules ({@code ArchitectureTest}): it may use the wire and the manifest; the wire and the manifest never use it.
 */
package io.mesh.curator;
