/**
 * Freezes on the host (decision 14, docs/decisions/0014-freezes.md): {@code FreezeGate} reads the module's freeze and
 * {@code _all} in one {@code multi} and says whether a change may land; {@code FreezeWakes} watches them, asks the
 * applies again when one changes or ends (a timer at its {@code until}) and writes the ledger's freeze lines.
 */
package io.mesh.freeze;
