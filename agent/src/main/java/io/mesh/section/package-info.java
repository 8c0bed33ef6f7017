/**
 * The critical section (decisions 1 and 8; docs/design.md, "Section"): {@code ModuleSection} takes the module lock,
 * then the host fence, then makes its Docker calls, each changing one written ahead to the ledger with its cause.
 * {@code ModuleLock}: Curator's {@code InterProcessMutex} at {@code /mesh/locks/<module>/<host>}, lock-node data
 * {@code LockHolder} (wire), waits observed for the metrics ({@code observeWaits}). {@code HostFence}: a kernel lock
 * on {@code <state-dir>/fences/<module>.lock} plus a semaphore for threads of one JVM.
 */
package io.mesh.section;
