package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/**
 * Where one host of a rollout is: {@code /mesh/rollouts/<module>/<host>}'s {@code state}
 * (docs/decisions/0013-rollouts.md); the parent's lists {@code waiting}, {@code applying}, {@code done},
 * {@code failed} (SPEC.md, "Rollouts") and {@code drained} are these, folded.
 */
public enum RolloutHostState implements WireName {
    /** Its wave has not come: it keeps the previous revision. */
    WAITING,
    /** It holds a slot and is applying the push (it keeps its place until it moves on, also without its lease). */
    APPLYING,
    /** It applied the push and is ready. */
    DONE,
    /** Its apply of the push failed: it keeps the previous revision until a new push. */
    FAILED,
    /**
     * Its host is drained (decision 37): the rollout passes over it and counts it settled; it keeps the previous
     * revision, and goes back to waiting once undrained (or applies the push, once the rollout is done).
     */
    DRAINED,
    /** Read only: a name this version does not know (counted as waiting). Never written. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
