/**
 * Freezes on the host (decision 14, docs/decisions/0014-freezes.md): {@code FreezeGate} reads the module's freeze and
 * {@code _all} in one {@code multi} and says whether a change may land; {@code AgentDaemon} watches them and keeps the
 * timer for their end.
 */
package io.mesh.freeze;
