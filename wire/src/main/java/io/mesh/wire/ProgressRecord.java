package io.mesh.wire;

import java.time.Instant;

/**
 * Data of {@code /mesh/progress/<host>/<module>} (ephemeral): what an apply that is not done yet is doing on that host,
 * for {@code mesh status PUSH}, {@code mesh push --wait} and the coordinator's page while the host is {@code pending}
 * (docs/decisions/0032-apply-progress.md). Display only: nothing decides on it.
 *
 * @param host     host id
 * @param module   module name
 * @param push     the push the apply is applying (the desired node's), {@code null} when it has not read it yet
 * @param revision that push's revision, or {@code null}
 * @param detail   one line, such as {@code pulling IMAGE (3 of 7 layers)} or
 *                 {@code waiting for app-api: health starting, 2 failed checks}
 * @param since    when the apply began
 * @param at       when this detail was written (the agent's clock)
 */
public record ProgressRecord(String host, String module, String push, String revision, String detail, Instant since, Instant at) {}
