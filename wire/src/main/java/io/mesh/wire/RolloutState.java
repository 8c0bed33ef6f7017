package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/** Where a module's rollout is: {@code /mesh/rollouts/<module>}'s {@code state} (SPEC.md, "Rollouts"). */
public enum RolloutState implements WireName {
    /** Hosts apply in waves: canaries first, then at most {@code max-parallel} at once. */
    ROLLING,
    /** A host failed ({@code on-failure: pause}): hosts that have not started keep the previous revision. */
    PAUSED,
    /** Every targeted host applied the push, or failed it under {@code on-failure: continue}, or before a resume. */
    DONE,
    /** A host failed ({@code on-failure: revert}): every host runs the previous revision again. */
    REVERTED,
    /** An operator aborted it: hosts that have not applied it keep the previous revision. */
    ABORTED,
    /** Read only: a name this version does not know. Never written. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }

    /** @return true when no host will apply the push any more (done, reverted or aborted) */
    public boolean ended() { return this == DONE || this == REVERTED || this == ABORTED; }

    /** @return true when the push will not land everywhere without an operator (paused, reverted, aborted) */
    public boolean stopped() { return this == PAUSED || this == REVERTED || this == ABORTED; }
}
