package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;

/** How an apply of a module on a host ended: a report's {@code outcome} (SPEC.md, "Apply"). */
public enum ApplyOutcome implements WireName {
    /** Every container is as the spec says, held ones aside. */
    APPLIED,
    /** A window held the module lock; the newest revision is applied when it releases it. */
    DEFERRED,
    /**
     * The module's rollout has not admitted this host yet (its wave has not come, or the rollout is paused): the
     * previous revision runs, kept as it was (docs/decisions/0013-rollouts.md).
     */
    WAITING,
    /** Something could not be done; the report's {@code error} says what. What ran keeps running. */
    FAILED,
    /** Read only: a name this version does not know (a newer agent wrote it). Never written by this version. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
