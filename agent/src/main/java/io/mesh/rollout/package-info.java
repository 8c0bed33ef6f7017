/**
 * Rollouts on the host (decision 13, docs/decisions/0013-rollouts.md): {@code RolloutGate} says whether this host may
 * apply now, and moves its own node ({@code /mesh/rollouts/<module>/<host>}); {@code turnDelayMs}: the hosts that fit
 * the free places try first. {@code RolloutWakes}: when to look again (a move, a freed slot, its turn). Asked by the
 * apply after {@code FreezeGate}, before the fence.
 */
package io.mesh.rollout;
