/**
 * Operator holds on the host (decisions 15, 25 and 33): {@code OperatorHolds} confirms a hold inside the module's
 * section (then it is in force), expires it, applies on release, and does {@code --stop}; {@code HoldConfirmation}:
 * the apply confirms the holds it read; {@code HoldStops} remembers a {@code --stop} under
 * {@code <state-dir>/hold-stops/}, so that the apply after the release starts the same container;
 * {@code HoldClosings}: each hold's interval closed once in the ledger (decision 28). A window skips, and a give-back or recovery keeps stopped, a container an operator holds.
 * The coordinator's side is {@code io.mesh.coordinator.HoldStore}.
 */
package io.mesh.hold;
