/**
 * The wire: what the agent and the coordinator share, and no Docker client, Jetty or agent class (decision 9,
 * docs/decisions/0009-the-wire-module.md; {@code ArchitectureTest.theWireHasNoDockerAndNoAgent}). The coordinator
 * depends on the agent only in its tests. Every other layer may use it (docs/architecture.md).
 *
 * <ul>
 *   <li><b>ZooKeeper layout</b>: {@code ZkPaths} names every path (SPEC.md, "ZooKeeper layout";
 *       docs/reference/zookeeper.md); the records beside it are each node's JSON: {@code DesiredRecord},
 *       {@code PushRecord}, {@code HistoryRecord}, {@code LockHolder} ({@code LockHolder.read}: who holds and who
 *       waits, for the agent and {@code /v1/locks}), {@code WindowRecord}, {@code HeldRecord}, {@code ApplyReport},
 *       {@code WindowResult}, {@code AgentRecord}, {@code ProgressRecord}, {@code PushCancel}.</li>
 *   <li><b>The manifest</b>: {@code ManifestParser} (YAML to {@code ModuleSpec}; every error names document, field
 *       and fix; two documents giving one Docker name are refused), {@code ContainerFields} (the compose-grade
 *       container fields checked, compose's other forms rewritten to one: decision 17), {@code ByteSize};
 *       {@code ContainerSpec.builder(image)} builds a spec by name. Module networks: {@code NetworkSpec},
 *       {@code NetworkFields}, and {@code ModuleSpec.containersAsRun} (networks by Docker name, the container's name
 *       as alias; decision 31). {@code SecretRef}: a container's reference to a secret file (decision 18).
 *       {@code PullPolicy}: a container's {@code pull} (decision 20).</li>
 *   <li><b>ZooKeeper clients and ACLs</b>: {@code MeshZk} makes every Curator client ({@code runSafeService}: no
 *       thread at rest, decision 23); with {@code --zk-auth-file}/{@code MESH_ZK_AUTH}, {@code ZkAuth} (digest auth:
 *       the admin identity, or a host's and the fleet's) and {@code MeshAcls} (the ACL of each path). At start the
 *       admin makes the layout and brings nodes to their rule; a host checks its nodes. Host identities:
 *       {@code HostIdentities}, {@code HostIdentity}, {@code /mesh/identities/<host>} (admin-only), the host's
 *       parents and their ACLs (decision 19).</li>
 *   <li><b>Held registry</b>: {@code HeldRegistry}, {@code HeldNode}: {@code /mesh/held/<host>/<container>}, a
 *       window's ephemeral {@code HeldNode}s ({@code publish}; made again after a session change, never taking over
 *       or deleting a node they did not make; decision 2), or an operator's persistent hold (hold, confirm, release;
 *       decisions 15, 25); read by the apply ({@code inForce}: an expired hold is absent) and the coordinator; a node
 *       that does not parse still means held (failure model row 22).</li>
 *   <li><b>Persistent parents</b>: {@code PersistentParents}, the parents of lock children, held and window nodes
 *       (decision 5; docs/design.md, "Reports and parents"); {@code LockNodes} makes the lock nodes with host
 *       identities.</li>
 *   <li><b>ZooKeeper's clock</b>: {@code ZkClock}, every process's estimate of ZooKeeper's time from the
 *       {@code ctime} of nodes it creates: holds', freezes' and slot claims' ends are written and judged by it, never
 *       by one host's clock (decision 27).</li>
 *   <li><b>What a request or an answer travels as</b>: window slots {@code SlotRecord}, {@code SlotState}
 *       (decision 16); plans {@code PlanRequest}, {@code PlanAnswer} (decision 12); audits {@code AuditRequest},
 *       {@code AuditAnswer}, {@code AuditPage}; {@code WhyReason} ({@code mesh why}); rollouts
 *       {@code RolloutRecord} ({@code view}: the rule deriving where a rollout is from its hosts' nodes),
 *       {@code RolloutHostRecord}, {@code RolloutNodes} (decision 13); freezes {@code FreezeRecord} (decision 14).</li>
 *   <li><b>The one checker</b>: {@code LedgerEntry} (a line of a host's ledger), {@code AuditChecker} and
 *       {@code AuditReport}: it judges a ledger for {@code mesh audit}, in the coordinator, and for
 *       {@code mesh_audit_violations_total}, in the agent (decision 28).</li>
 *   <li><b>Process plumbing</b>: {@code QueuedOnce} (a plan's answer, a rollout's fold: queued once per key;
 *       decision 23), {@code PrintingCommand} and {@code ProcessOptions} (what every command line shares),
 *       {@code PromText} (Prometheus text), {@code LogFormat} ({@code --log-format text|json},
 *       {@code MESH_LOG_FORMAT}; each jar's {@code logback.xml}).</li>
 * </ul>
 */
package io.mesh.wire;
