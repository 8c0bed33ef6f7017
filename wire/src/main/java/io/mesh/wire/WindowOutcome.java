package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** How a window ended: a window result's {@code outcome} (SPEC.md, "Window"). */
public enum WindowOutcome {
    /** The step exited 0. */
    SUCCEEDED("succeeded"),
    /** The step exited non-zero. */
    STEP_FAILED("step-failed"),
    /** The step was killed at its timeout. */
    TIMED_OUT("timed-out"),
    /** The window could not run its step, or could not give its containers back cleanly; {@code error} says why. */
    FAILED("failed"),
    /** Its process died or left it; another mesh process finished it from the journal. */
    RECOVERED("recovered"),
    /** Read only: a name this version does not know (a newer agent wrote it). Never written by this version. */
    UNKNOWN("unknown");

    private final String wire;

    WindowOutcome(String wire) { this.wire = wire; }

    /** @return SPEC's name, as JSON, logs and metrics labels carry it */
    @JsonValue
    public String wire() { return wire; }

    @Override
    public String toString() { return wire; }

    /**
     * @param text SPEC's name
     * @return its outcome; {@link #UNKNOWN} for another name (a reader goes on), {@code null} for {@code null}
     */
    @JsonCreator
    public static WindowOutcome of(String text) {
        if (text == null) return null;
        for (WindowOutcome o : values()) if (o.wire.equals(text)) return o;
        return UNKNOWN;
    }
}
