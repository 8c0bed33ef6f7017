/**
 * The {@code mesh} command (docs/reference/cli.md): {@code MeshCli} (the command list; only the command a run names is
 * built), the commands by concern ({@code PushCommands}, {@code StatusCommands}, {@code HoldCommands},
 * {@code WindowCommands}, {@code RolloutCommands}, {@code FreezeCommands}, {@code AuditCommands}), what they share
 * ({@code CoordinatorCommand}: the options and the base of a command that asks the coordinator; {@code ExitCodes};
 * {@code ClientText}: the coordinator's JSON as text) and the {@code Table} they print; the arrows go from
 * {@code MeshCli} to the commands to what they share, never back; {@code CoordinatorClient} (several coordinators, the next asked when one does not answer; a push
 * only when it could not be sent). Commands print through {@code PrintingCommand} (coordinator); {@code PlanOutput},
 * {@code AuditOutput} ({@code printWhy} too). {@code ImportCompose}: {@code mesh import-compose} (decision 21).
 * {@code Warmup}: the class-data archive's run (docs/benchmark-notes.md, B9).
 */
package io.mesh.client;
