/**
 * The agent process. {@code AgentMain}: the command line ({@code run}, {@code window}). {@code AgentDaemon}: a
 * {@code CuratorCache} on {@code /mesh/desired}, one worker per module ({@code ModuleWorker}, a thread only while it
 * works: decision 23), the reconcile, the look at the journal for dead windows, {@code /mesh/agents/<host>}
 * ({@code AgentNode}; one agent per host, failure model row 14), window threads ({@code runWindow}), freeze watches,
 * the stop (decision 26). {@code WindowRequests} ({@code mesh window run}), {@code PlanRequests} (decision 12),
 * {@code AuditRequests} (a host's ledger slice from a {@code LedgerSource}, decision 28): requests the coordinator
 * leaves in ZooKeeper, answered here. {@code AgentMetrics}, {@code Histogram}: {@code /metrics}
 * (docs/reference/metrics.md); applies and windows are counted from the host's reports (a {@code CuratorCache} on
 * {@code /mesh/reports/<host>}), so windows of {@code mesh-agent window} count too; lock waits come from
 * {@code ModuleLock.observeWaits}.
 */
package io.mesh.agent;
