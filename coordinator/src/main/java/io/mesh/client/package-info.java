/**
 * The {@code mesh} command (docs/reference/cli.md): {@code MeshCli} (the command list, the options and exit codes every
 * command shares; only the command a run names is built), the commands by concern ({@code PushCommands},
 * {@code StatusCommands}, {@code HoldCommands}, {@code WindowCommands}, {@code RolloutCommands}, {@code FreezeCommands},
 * {@code AuditCommands}) and the {@code Table} they print, {@code CoordinatorClient} (several coordinators, the next asked when one does not answer; a push
 * only when it could not be sent). Commands print through {@code PrintingCommand} (coordinator); {@code PlanOutput},
 * {@code AuditOutput} ({@code printWhy} too). {@code ImportCompose}: {@code mesh import-compose} (decision 21).
 * {@code Warmup}: the class-data archive's run (docs/benchmark-notes.md, B9).
 */
package io.mesh.client;
