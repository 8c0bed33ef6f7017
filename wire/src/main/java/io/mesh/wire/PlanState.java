package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/** Where one host of a plan is: {@link PlanAnswer}'s {@code state} (docs/decisions/0012-plans.md). */
public enum PlanState implements WireName {
    /** Written by the coordinator; the host's agent has not answered yet. */
    PENDING,
    /** The agent answered: {@code modules} says what an apply would do. */
    ANSWERED,
    /** The agent could not plan (Docker or ZooKeeper did not answer, an invalid request): {@code error} says why. */
    FAILED,
    /** Never stored: what the coordinator shows for a pending host without an agent node. */
    NO_AGENT,
    /** Read only: a name this version does not know. Never written. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
