package io.mesh.wire;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** Times as mesh records them: UTC instants to the millisecond, written as ISO-8601 ({@code 2026-11-30T03:30:00.123Z}). */
public final class Times {
    private Times() {}

    /** @return now, truncated to milliseconds */
    public static Instant now() {
        return Instant.now().truncatedTo(ChronoUnit.MILLIS);
    }
}
