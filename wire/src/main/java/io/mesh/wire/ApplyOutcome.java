package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/** How an apply of a module on a host ended: a report's {@code outcome} (SPEC.md, "Apply"). */
public enum ApplyOutcome implements WireName {
    /** Every container is as the spec says, held ones aside. */
    APPLIED,
    /**
     * Not applied yet, and not failed: a window held the module lock (the report names it), or the module's rollout
     * has not admitted this host (the report's {@code rollout} says why; docs/decisions/0013-rollouts.md). The newest
     * revision is applied when the window releases the lock or the wave comes.
     */
    DEFERRED,
    /** Something could not be done; the report's {@code error} says what. What ran keeps running. */
    FAILED,
    /**
     * The module has containers on this host and no desired node at all (not a delete's tombstone): the ensemble lost
     * its tree, or someone deleted the node by hand. Nothing was stopped or removed; the agent waits for a desired node
     * (a restore, a push). No push, no revision (docs/decisions/0039-backups-and-an-empty-ensemble.md item 5).
     */
    NO_DESIRED_STATE,
    /** Read only: a name this version does not know (a newer agent wrote it). Never written by this version. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
