package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/** A violation {@code mesh audit} finds in a host's ledger (SPEC.md, "Audit", its table; the rules: {@link AuditChecker}). */
public enum AuditViolationKind implements WireName {
    /** A touch of a held container that its own window, or its operator hold's {@code --stop}, did not make. */
    TOUCHED_WHILE_HELD,
    /** A Docker event of a mesh container that no mesh call accounts for. */
    OUTSIDE_MESH,
    /** A window ended and its container was not running again within 60 s, with no operator hold on it. */
    LEFT_STOPPED,
    /** An apply's Docker call that changed a frozen module. */
    CHANGED_WHILE_FROZEN,
    /** A span the ledger does not cover. */
    GAP,
    /** Read only: a kind this version does not know. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
