package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

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
    /**
     * Recreated, but the new container was not ready by its {@code ready.deadline} (or exited first): it was removed
     * and the previous one put back under its name (SPEC.md, "Health and readiness").
     */
    REVERTED,
    /** Read only: a name this version does not know (a newer agent wrote it). Never written by this version. */
    @JsonEnumDefaultValue
    UNKNOWN;

    /** @return true for {@link #FAILED} and {@link #REVERTED}: the push did not land on this container */
    public boolean failed() { return this == FAILED || this == REVERTED; }

    @Override
    public String toString() { return wire(); }
}
