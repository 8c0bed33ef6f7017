package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** Where a window request is in its life: {@link WindowRequest}'s {@code state} (docs/design.md, "Window requests"). */
public enum WindowRequestState {
    /** Written by the requester; nobody runs it yet. */
    REQUESTED("requested"),
    /** Claimed by the agent; its window is running or waiting for the module lock. */
    RUNNING("running"),
    /** Finished: {@code result} or {@code error} says how. */
    DONE("done"),
    /** Read only: a name this version does not know; the agent leaves such a request alone. Never written. */
    UNKNOWN("unknown");

    private final String wire;

    WindowRequestState(String wire) { this.wire = wire; }

    /** @return the name JSON and logs carry */
    @JsonValue
    public String wire() { return wire; }

    @Override
    public String toString() { return wire; }

    /**
     * @param text the state's name
     * @return its state; {@link #UNKNOWN} for another name (a reader goes on), {@code null} for {@code null}
     */
    @JsonCreator
    public static WindowRequestState of(String text) {
        if (text == null) return null;
        for (WindowRequestState s : values()) if (s.wire.equals(text)) return s;
        return UNKNOWN;
    }
}
