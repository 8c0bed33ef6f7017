package io.mesh.docker;

import java.util.List;

/**
 * How a command mesh ran in a container by {@code docker exec} ended ({@link ContainerRuntime#exec}).
 *
 * @param exitCode its exit code, or {@code null} when it had not ended at its timeout
 * @param timedOut true when it was abandoned at its timeout
 * @param killed   for one that timed out: true when its process was killed (by its host pid, with its descendants);
 *                 false when this process cannot see it (another PID namespace), so it may still run in the container
 * @param output   its last output lines, stdout and stderr interleaved, as the container printed them (the caller
 *                 takes secrets out)
 */
public record ExecResult(Integer exitCode, boolean timedOut, boolean killed, List<String> output) {
    public ExecResult {
        output = output == null ? List.of() : List.copyOf(output);
    }
}
