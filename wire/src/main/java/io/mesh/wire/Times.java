package io.mesh.wire;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** Times as mesh records them: UTC instants to the millisecond, written as ISO-8601 ({@code 2026-11-30T03:30:00.123Z}). */
public final class Times {
    /**
     * ZooKeeper session timeout of every mesh process: a dead process's held and window nodes vanish this long after it
     * dies, and the audit counts a handover from it ({@code AuditChecker}). {@code MeshZk} sets it on every client.
     */
    public static final Duration SESSION_TIMEOUT = Duration.ofSeconds(15);

    private Times() {}

    /** @return now, truncated to milliseconds */
    public static Instant now() {
        return Instant.now().truncatedTo(ChronoUnit.MILLIS);
    }
}
