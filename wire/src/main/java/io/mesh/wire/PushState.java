package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/**
 * The state of a push on one host and module, and of the whole push, as the coordinator derives it from the agents'
 * reports ({@code GET /v1/pushes/{push}}, {@code GET /v1/fleet}: SPEC.md, "Coordinator HTTP API"). Here, not in the
 * coordinator, because the operator's client reads it too.
 */
public enum PushState {
    /** No report yet, or only one of an older push. */
    PENDING("pending"),
    /** Applied: this push, or a newer one. */
    APPLIED("applied"),
    /** Waiting on an open window. */
    DEFERRED("deferred"),
    /** The apply failed; its report's error says why. */
    FAILED("failed"),
    /** The report's outcome is a name this version does not know ({@link ApplyOutcome#UNKNOWN}). */
    UNKNOWN("unknown");

    private final String wire;

    PushState(String wire) { this.wire = wire; }

    /** @return SPEC's name, as JSON, the page and metrics labels carry it */
    @JsonValue
    public String wire() { return wire; }

    @Override
    public String toString() { return wire; }

    /**
     * @param outcome a current report's outcome
     * @return the state it gives; {@link #PENDING} for {@code null}
     */
    public static PushState from(ApplyOutcome outcome) {
        if (outcome == null) return PENDING;
        return switch (outcome) {
            case APPLIED -> APPLIED;
            case DEFERRED -> DEFERRED;
            case FAILED -> FAILED;
            case UNKNOWN -> UNKNOWN;
        };
    }

    /**
     * @param text SPEC's name
     * @return its state; {@link #UNKNOWN} for another name, {@code null} for {@code null}
     */
    @JsonCreator
    public static PushState of(String text) {
        if (text == null) return null;
        for (PushState s : values()) if (s.wire.equals(text)) return s;
        return UNKNOWN;
    }
}
