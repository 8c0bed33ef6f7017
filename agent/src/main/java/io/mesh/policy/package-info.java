/**
 * The agent's policy: {@code Policy} refuses host paths, {@code privileged}, {@code pid: host}, {@code network: host}
 * (a container's default too, and a step's), {@code cap-add}, {@code devices}, {@code sysctls} and
 * {@code security-opt} unless the agent's {@code --allow-*} options allow them (docs/security.md). Called by
 * {@code ApplyExecution} before a create or recreate and by {@code WindowRunner} before a step. Beside it,
 * {@code io.mesh.apply.MissingHostPaths}: a missing host-path volume source fails its container unless
 * {@code create-host-path: true} (decision 17, docs/decisions/0017-compose-grade-containers.md).
 */
package io.mesh.policy;
