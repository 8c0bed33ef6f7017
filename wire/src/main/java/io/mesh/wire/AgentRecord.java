package io.mesh.wire;

import java.time.Instant;

/**
 * Data of {@code /mesh/agents/<host>} (ephemeral): a running agent daemon.
 *
 * @param host      host id
 * @param version   mesh version
 * @param pid       process id
 * @param startedAt when the daemon started
 */
public record AgentRecord(String host, String version, long pid, Instant startedAt) {}
