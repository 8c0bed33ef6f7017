package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/**
 * What a push did to its modules: a push record's and a history record's {@code action} (SPEC.md, "History and
 * rollback"; docs/decisions/0011-history-rollback-delete.md).
 */
public enum PushAction implements WireName {
    /** A manifest pushed ({@code POST /v1/pushes}). */
    PUSH,
    /** A spec from the module's history pushed again ({@code mesh rollback}); the record names it in {@code rollbackOf}. */
    ROLLBACK,
    /** The module removed from every host ({@code mesh delete}); its desired node is a tombstone. */
    DELETE,
    /** Read only: a name this version does not know (a newer coordinator wrote it). Never written by this version. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
