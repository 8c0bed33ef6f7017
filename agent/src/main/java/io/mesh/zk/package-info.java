/**
 * The agent's ZooKeeper: {@code MeshStore}, typed reads and writes of one process, every read an agent acts on
 * validated ({@code landed}: a report whose write failed but landed, decision 5); {@code SessionGuard}: SUSPENDED,
 * LOST and the lost count, read by the section's session rule (Curator TN10, TN14; docs/design.md, "Section").
 */
package io.mesh.zk;
