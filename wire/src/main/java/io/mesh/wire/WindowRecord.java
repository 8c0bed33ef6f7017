package io.mesh.wire;

import java.time.Instant;
import java.util.List;

/**
 * Data of {@code /mesh/windows/<host>/<module>} (ephemeral): an open window.
 *
 * @param host     host id
 * @param module   module name
 * @param schedule schedule name, such as {@code garbage-collect}
 * @param window   window id, such as {@code w-20261130T033000Z-3f2a}
 * @param since    when the window opened (before the first stop)
 * @param held     Docker names of the containers it holds
 * @param by       the process running the window
 */
public record WindowRecord(String host, String module, String schedule, String window, Instant since,
                           List<String> held, ProcessRef by) {}
