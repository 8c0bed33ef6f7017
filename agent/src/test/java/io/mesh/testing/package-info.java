/**
 * Test fixtures, as JUnit 5 extensions ({@code @RegisterExtension}; static: per class, instance: per test):
 * {@code ZooKeeperExtension} (a ZooKeeper server, and plain clients of other identities), {@code EnsembleExtension}
 * (the shared 3-server ensemble, {@code ZkEnsemble}), {@code AgentDaemonExtension} (an in-process daemon),
 * {@code ApplierExtension} (an apply's and a window's module, state dir and {@code HostContext}). Evidence mesh does not
 * write: {@code DockerEvents} (the engine's events, recorded live), {@code ZkTxnLog} (ZooKeeper's transaction log);
 * {@code Orphanless} removes what a test started, also when its JVM dies. Elsewhere: the coordinator's
 * {@code CoordinatorFixture} (a ZooKeeper and, for every test, a coordinator on it), {@code CoordinatorExtension} and
 * {@code OpsFixture} (a coordinator with an agent), the fault tests'
 * {@code io.mesh.faults.FaultFixture} ({@code @DaemonWithR1}), the fleet's {@code io.mesh.fleet.Fleet}
 * (docs/fleet.md).
 */
package io.mesh.testing;
