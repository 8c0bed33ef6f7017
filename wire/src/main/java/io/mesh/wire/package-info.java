/**
 * The wire: the ZooKeeper layout and the JSON of each node, what the agent and the coordinator share (decision 9,
 * docs/decisions/0009-the-wire-module.md). The Maven module {@code wire} also holds the manifest
 * ({@code io.mesh.manifest}), the Curator infrastructure ({@code io.mesh.curator}) and the command-line helpers
 * ({@code io.mesh.cli}); docs/architecture.md draws them.
 *
 * <ul>
 *   <li><b>ZooKeeper layout</b>: {@code ZkPaths} names every path (SPEC.md, "ZooKeeper layout";
 *       docs/reference/zookeeper.md); the records beside it are each node's JSON: {@code DesiredRecord},
 *       {@code PushRecord}, {@code HistoryRecord}, {@code LockHolder}, {@code WindowRecord}, {@code HeldRecord},
 *       {@code ApplyReport}, {@code WindowResult}, {@code AgentRecord}, {@code ProgressRecord}, {@code PushCancel}.</li>
 *   <li><b>What a request or an answer travels as</b>: window slots {@code SlotRecord}, {@code SlotState}
 *       (decision 16); plans {@code PlanRequest}, {@code PlanAnswer} (decision 12); audits {@code AuditRequest},
 *       {@code AuditAnswer}, {@code AuditPage}; rollouts
 *       {@code RolloutRecord} ({@code view}: the rule deriving where a rollout is from its hosts' nodes),
 *       {@code RolloutHostRecord} (decision 13); freezes {@code FreezeRecord} (decision 14).</li>
 *   <li><b>The one checker</b>: {@code LedgerEntry} (a line of a host's ledger), {@code AuditChecker} and
 *       {@code AuditReport}: it judges a ledger for {@code mesh audit}, in the coordinator, and for
 *       {@code mesh_audit_violations_total}, in the agent (decision 28).</li>
 *   <li><b>Basics</b>: {@code Json}, {@code Times} (with the ZooKeeper session timeout every process uses),
 *       {@code ProcessRef}, {@code QueuedOnce} (a plan's answer, a rollout's fold: queued once per key; decision 23),
 *       {@code PromText} (Prometheus text).</li>
 * </ul>
 *
 * <p>Rules ({@code ArchitectureTest}): no Docker client, Jetty or agent class; no Curator client and no
 * {@code io.mesh.curator} or {@code io.mesh.cli} class ({@code ZkPaths} joins and checks path strings with Curator's
 * {@code ZKPaths} and ZooKeeper's {@code PathUtils}, string helpers); it may use the manifest. Every other layer may
 * use it.
 */
package io.mesh.wire;
