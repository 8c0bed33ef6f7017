package io.mesh.zk;

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
                         String window, Instant since, ProcessRef by) {}
