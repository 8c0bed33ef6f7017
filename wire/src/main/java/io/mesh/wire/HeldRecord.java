package io.mesh.wire;

import java.time.Instant;

/**
 * Data of {@code /mesh/held/<host>/<container>} (ephemeral): a container stopped on purpose by a window.
 *
 * @param host        host id
 * @param module      module name
 * @param container   Docker name, {@code <module>-<name>}
 * @param containerId Docker container id
 * @param schedule    schedule name
 * @param window      window id
 * @param since       when the window opened
 * @param by          the process running the window
 */
public record HeldRecord(String host, String module, String container, String containerId, String schedule,
                         String window, Instant since, ProcessRef by) {
    /** Marks the window of a held node whose data could not be read. */
    public static final String UNREADABLE = "unreadable";

    /** @return why the container is held, for a report's reasons */
    public String reason() {
        return UNREADABLE.equals(window) ? "held (its held node's data cannot be read: treated as held)"
                : "held by window " + schedule + " since " + since;
    }

    /**
     * A held node whose data does not parse: it still means held (a reader that cannot tell why a container is held
     * must not take it for broken). Only the host and the container's name are known.
     *
     * @param host      host id
     * @param container Docker name (the node's name)
     * @return a record with {@link #UNREADABLE} as its window and nothing else known
     */
    public static HeldRecord unreadable(String host, String container) {
        return new HeldRecord(host, null, container, null, null, UNREADABLE, null, null);
    }
}
