package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;

/** How an apply of a module on a host ended: a report's {@code outcome} (SPEC.md, "Apply"). */
public enum ApplyOutcome {
    /** Every container is as the spec says, held ones aside. */
    APPLIED("applied"),
    /** A window held the module lock; the newest revision is applied when it releases it. */
    DEFERRED("deferred"),
    /** Something could not be done; the report's {@code error} says what. What ran keeps running. */
    FAILED("failed"),
    /** Read only: a name this version does not know (a newer agent wrote it). Never written by this version. */
    UNKNOWN("unknown");

    private final String wire;

    ApplyOutcome(String wire) { this.wire = wire; }

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
    public static ApplyOutcome of(String text) {
        if (text == null) return null;
        for (ApplyOutcome o : values()) if (o.wire.equals(text)) return o;
        return UNKNOWN;
    }
}
