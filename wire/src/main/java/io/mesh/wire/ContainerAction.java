package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;

/** What an apply did to one container: a report's container {@code action} (SPEC.md, "Apply"). */
public enum ContainerAction implements WireName {
    /** Present, spec unchanged, running: left alone. */
    UNCHANGED,
    /** Missing: created and started. */
    CREATED,
    /** Spec changed or not running: removed and created again. */
    RECREATED,
    /** No longer named by the spec: stopped and removed. */
    REMOVED,
    /** Held by a window or an operator: not touched. */
    HELD,
    /** Could not be done; the reasons say why. */
    FAILED,
    /** Read only: a name this version does not know (a newer agent wrote it). Never written by this version. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }

    /** @return the constant SPEC names {@code text} ({@link WireName#parse}) */
    public static ContainerAction of(String text) { return WireName.parse(ContainerAction.class, text, UNKNOWN); }
}
