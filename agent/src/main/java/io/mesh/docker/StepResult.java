package io.mesh.docker;

import java.util.List;

/**
 * How a one-shot step container ended.
 *
 * @param exitCode its exit code ({@code 137} after a kill)
 * @param timedOut true when it was killed at the timeout
 * @param logTail  its last log lines, stdout and stderr interleaved
 */
public record StepResult(int exitCode, boolean timedOut, List<String> logTail) {}
