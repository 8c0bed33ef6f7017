package io.mesh.coordinator;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/** One link of {@code mesh why HOST CONTAINER}'s chain (SPEC.md, "Audit"): what keeps a container as it is now. */
public enum WhyReason implements WireName {
    /** A window holds it ({@code /mesh/held/<host>/<container>} with {@code schedule} and {@code window}). */
    HELD_BY_WINDOW,
    /** An operator's hold holds it ({@code /mesh/held/<host>/<container>} with {@code hold}). */
    HELD_BY_OPERATOR,
    /** The module's last apply on the host was deferred: a push waits behind a window, a freeze or a rollout. */
    DEFERRED,
    /** The module's rollout keeps the previous revision on this host (its wave has not come, it failed, it is paused). */
    ROLLOUT,
    /** A freeze of the module, or of every module, keeps changes off it. */
    FREEZE,
    /** A window of the module on this host waits for (or runs in) a fleet-wide slot. */
    SLOT,
    /** What the gate of the module's last window on this host answered (docs/decisions/0035-window-gates.md). */
    GATE,
    /** What the module's last apply on this host did to the container, and why. */
    LAST_APPLY,
    /** A violation of mesh's promise on the container since 00:00 UTC, from the host's ledger. */
    AUDIT_VIOLATION,
    /** What the host's ledger says when it shows no violation, or why it was not asked or did not answer. */
    AUDIT,
    /** Read only: a name this version does not know. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
