package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonEnumDefaultValue;
import io.mesh.manifest.WireName;

/**
 * How a ledger's call ended (decision 28), on its end line. Absent on a beginning, and on the end lines of ledgers
 * written before it was recorded: those read as {@link #MADE} or {@link #FAILED} by their {@code reason}.
 */
public enum CallOutcome implements WireName {
    /** Docker was asked and answered. */
    MADE,
    /** Docker was asked and the call failed ({@code reason}: Docker's words or the client's). */
    FAILED,
    /**
     * Docker was never asked: the module section's rule refused the call after its line was written ahead (a lapsed
     * lock, a fence not held; decision 8). It accounts for no event and changes nothing.
     */
    REFUSED,
    /** Read only: an outcome this version does not know (a newer agent wrote it). */
    @JsonEnumDefaultValue
    UNKNOWN;

    @Override
    public String toString() { return wire(); }
}
