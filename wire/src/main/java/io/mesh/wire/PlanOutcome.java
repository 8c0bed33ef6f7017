package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/** What an apply of one module on one host would end as: a plan's module {@code outcome}. */
public enum PlanOutcome implements WireName {
    /** The apply would do what the containers say and report {@code applied}. */
    WOULD_APPLY,
    /** A window of the module is open on the host (or containers are held): the apply would be {@code deferred}. */
    WOULD_DEFER,
    /** A container would fail: refused by the agent's policy, its image missing, crash-looping. */
    WOULD_FAIL,
    /** Read only: a name this version does not know. Never written. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
