package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/** How a window ended: a window result's {@code outcome} (SPEC.md, "Window"). */
public enum WindowOutcome implements WireName {
    /** The step exited 0. */
    SUCCEEDED,
    /** The step exited non-zero. */
    STEP_FAILED,
    /** The step was killed at its timeout. */
    TIMED_OUT,
    /** The window could not run its step, or could not give its containers back cleanly; {@code error} says why. */
    FAILED,
    /** Its process died or left it; another mesh process finished it from the journal. */
    RECOVERED,
    /**
     * The window did not open and stopped nothing; {@code error} says why (SPEC.md, "Fleet-wide windows"):
     * {@code start-by passed} (it had not begun by its schedule's {@code start-by}, waiting for a fleet-wide slot or the
     * lock), or {@code held by operator} (one of its {@code while-stopped} containers is held by {@code mesh hold}).
     */
    SKIPPED,
    /** Read only: a name this version does not know (a newer agent wrote it). Never written by this version. */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
