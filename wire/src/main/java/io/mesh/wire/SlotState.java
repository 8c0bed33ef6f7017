package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/** Where a window stands with its fleet-wide slot: a {@link SlotRecord}'s {@code state} (docs/decisions/0016-window-slots.md). */
public enum SlotState implements WireName {
    /** Queued for a slot (a node under the slot's {@code queue}). */
    WAITING,
    /** Holds a lease: its containers may be stopped until it gives the slot back, once they are ready again. */
    RUNNING,
    /** Read only: a name this version does not know. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
