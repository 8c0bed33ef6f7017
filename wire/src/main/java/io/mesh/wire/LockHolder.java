package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonIgnore;

import java.time.Instant;

/**
 * Data of each child of a module lock ({@code /mesh/locks/<module>/<host>/_c_...-lock-...}), so that {@code zkCli}
 * shows who holds the lock (the lowest sequence) and who waits ({@code LockNodes.holders} reads them).
 *
 * @param host    host id
 * @param pid     process id of the holder or waiter
 * @param process short description of that process
 * @param purpose {@code apply} or {@code window:<schedule>}
 * @param since   when it asked for the lock
 */
public record LockHolder(String host, long pid, String process, String purpose, Instant since) {
    /** Purpose of an apply. */
    public static final String APPLY = "apply";

    /** @return the purpose of a window of that schedule, {@code window:<schedule>} */
    public static String windowPurpose(String schedule) { return "window:" + schedule; }

    /** @return true when the purpose is a window's (not part of the node's JSON) */
    @JsonIgnore
    public boolean isWindow() { return purpose != null && purpose.startsWith("window:"); }
}
