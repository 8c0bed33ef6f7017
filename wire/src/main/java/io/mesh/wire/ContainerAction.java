package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** What an apply did to one container: a report's container {@code action} (SPEC.md, "Apply"). */
public enum ContainerAction {
    /** Present, spec unchanged, running: left alone. */
    UNCHANGED("unchanged"),
    /** Missing: created and started. */
    CREATED("created"),
    /** Spec changed or not running: removed and created again. */
    RECREATED("recreated"),
    /** No longer named by the spec: stopped and removed. */
    REMOVED("removed"),
    /** Held by a window or an operator: not touched. */
    HELD("held"),
    /** Could not be done; the reasons say why. */
    FAILED("failed"),
    /** Read only: a name this version does not know (a newer agent wrote it). Never written by this version. */
    UNKNOWN("unknown");

    private final String wire;

    ContainerAction(String wire) { this.wire = wire; }

    /** @return SPEC's name, as JSON and logs carry it */
    @JsonValue
    public String wire() { return wire; }

    @Override
    public String toString() { return wire; }

    /**
     * @param text SPEC's name
     * @return its action; {@link #UNKNOWN} for another name (a reader goes on), {@code null} for {@code null}
     */
    @JsonCreator
    public static ContainerAction of(String text) {
        if (text == null) return null;
        for (ContainerAction a : values()) if (a.wire.equals(text)) return a;
        return UNKNOWN;
    }
}
