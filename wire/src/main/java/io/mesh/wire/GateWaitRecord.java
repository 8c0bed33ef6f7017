package io.mesh.wire;

import java.time.Instant;

/**
 * Data of {@code /mesh/waits/<host>/<module>--<schedule>} (ephemeral, the window's process): a window whose schedule's
 * gate is blocked waits for it under {@code on-blocked: wait} (docs/decisions/0035-window-gates.md), before it takes
 * a slot or stops anything; {@code mesh windows} lists it. Display only: nothing decides on it. Gone when the window
 * goes on, is skipped at its start-by, or its process goes.
 *
 * @param host     host id
 * @param module   module name
 * @param schedule schedule name
 * @param window   the window's id
 * @param since    when it began to wait
 * @param startBy  when it is skipped if the gate is still blocked
 * @param said     what the gate answered last, such as {@code blocked: 1 series ...}
 * @param at       when it was asked last (the window's host's clock)
 */
public record GateWaitRecord(String host, String module, String schedule, String window, Instant since, Instant startBy, String said,
                             Instant at) {}
