package io.mesh.zk;

import io.mesh.agent.AgentNode;
import io.mesh.curator.HeldRegistry;
import io.mesh.curator.HostIdentities;
import io.mesh.curator.LockNodes;
import io.mesh.curator.MeshZk;
import io.mesh.curator.RolloutNodes;
import io.mesh.curator.ZkAuth;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.RolloutSpec;
import io.mesh.rollout.RolloutGate;
import io.mesh.section.ModuleLock;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutHostState;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * One ZooKeeper identity per host (SPEC.md "Identities", docs/decisions/0019-host-identities.md) against a real
 * server: hosts {@code hi-a} and {@code hi-b} are registered as {@code mesh-coordinator credentials} does
 * ({@link HostIdentities#register}); A's nodes are made by mesh's own code paths (report, window and held nodes,
 * agent node, module lock, a slot lease) with A's client, and B's identity, from a raw Curator client that sets its
 * own ACLs, is refused every write, delete and take of them ({@code NoAuth}) while A may do its own; a rollout's node is
 * the coordinators', and each host writes only its own node under it.
 */
class HostIdentityAclTest {
    private static final byte[] X = "{}".getBytes(StandardCharsets.UTF_8);
    private static final String A = "hi-a";
    private static final String B = "hi-b";
    private static final String MODULE = "hi-store";
    private final ZkPaths paths = new ZkPaths(ZkPaths.DEFAULT_ROOT);
    private final ZkAuth admin = ZkAuth.parse("mesh:admin-s3cret");
    private final ZkAuth hostA = ZkAuth.newHost(A, admin);
    private final ZkAuth hostB = ZkAuth.newHost(B, admin);
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private CuratorFramework coordinator;

    @BeforeEach
    void register() throws Exception {
        coordinator = mesh(admin);
        HostIdentities.register(coordinator, paths, admin, hostA, Instant.now());
        HostIdentities.register(coordinator, paths, admin, hostB, Instant.now());
        MeshZk.secure(coordinator, paths, admin);
    }

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) closing.get(i).close();
    }

    /** A client as a mesh process makes it: its identity, {@code MeshAcls}, the start checks. */
    private CuratorFramework mesh(ZkAuth auth) throws Exception {
        CuratorFramework c = MeshZk.connect(zk.connect(), Duration.ofSeconds(20), auth, paths);
        closing.add(c);
        return c;
    }

    /** A raw Curator client authenticated as {@code auth} (both its lines), with Curator's default, open, ACLs. */
    private CuratorFramework raw(ZkAuth auth) throws Exception {
        return zk.plainClient(auth);
    }

    private static void refused(String what, Executable write) {
        Throwable t = catchThrowable(write::execute);
        assertThat(t).as(what).isInstanceOf(KeeperException.NoAuthException.class);
    }

    /** Host A's nodes, each made by the mesh code that makes it in an agent, with A's client. */
    private record Nodes(String report, String window, String held, String agent, String lockChild, String lease) {}

    private Nodes populateAsA(CuratorFramework a) throws Exception {
        // The push of MODULE to both hosts: the coordinator makes their lock nodes (LockNodes), as PushWriter does.
        LockNodes.ensureForPush(coordinator, paths, Map.of(MODULE, List.of(A, B)));
        new MeshStore(a, paths).writeReport(ApplyReport.applied(A, MODULE, "r1", "push-0000000000", Instant.now(), null, List.of()));
        HeldRegistry held = HeldRegistry.publish(a, paths, A, MODULE, "gc", "w-1", Instant.now(),
                List.<String[]>of(new String[]{MODULE + "-registry", "0123abcd"}), ProcessRef.current("test"), Duration.ofSeconds(10));
        closing.add(held);
        AgentNode agent = new AgentNode(a, paths.agent(A), new AgentRecord(A, "test", ProcessHandle.current().pid(), Instant.now()), () -> {});
        agent.claim();
        closing.add(agent);
        ModuleLock lock = new ModuleLock(a, paths, MODULE, A, ProcessRef.current("test"), LockHolder.APPLY);
        assertThat(lock.acquire(Duration.ofSeconds(5))).isTrue();
        closing.add(lock::release);
        String lockChild = paths.lock(MODULE, A) + "/" + a.getChildren().forPath(paths.lock(MODULE, A)).get(0);
        InterProcessSemaphoreV2 slot = new InterProcessSemaphoreV2(a, paths.windowSlots(MODULE, "gc"), 2);
        Lease lease = slot.acquire(5, TimeUnit.SECONDS);
        assertThat(lease).isNotNull();
        closing.add(lease);
        return new Nodes(paths.report(A, MODULE), paths.window(A, MODULE), paths.held(A, MODULE + "-registry"), paths.agent(A), lockChild,
                ZkPaths.slotLeases(paths.windowSlots(MODULE, "gc")) + "/" + lease.getNodeName());
    }

    /**
     * The webhooks' outbox (decision 34): each host writes its own events, and neither forges another's nor deletes
     * them; the coordinators write theirs and delete anyone's once sent.
     */
    @Test
    void eachHostWritesOnlyItsOwnEventsAndOnlyCoordinatorsDeleteThem() throws Exception {
        CuratorFramework a = mesh(hostA);
        io.mesh.wire.MeshEvent e = io.mesh.wire.MeshEvent.of(io.mesh.wire.EventType.WINDOW_STARTED, Times.now(), A, MODULE);
        String id;
        try (io.mesh.curator.EventOutbox own = new io.mesh.curator.EventOutbox(a, paths, A)) {
            id = own.write(e);
        }
        assertThat(id).startsWith(A + "/e-");
        assertThat(Json.read(a.getData().forPath(paths.event(id)), io.mesh.wire.MeshEvent.class).type())
                .isEqualTo(io.mesh.wire.EventType.WINDOW_STARTED);
        try (io.mesh.curator.EventOutbox forged = new io.mesh.curator.EventOutbox(a, paths, B)) {
            assertThatThrownBy(() -> forged.write(e)).hasMessageContaining("may not write " + paths.events(B))
                    .hasMessageContaining("mesh-coordinator credentials " + B);
        }
        CuratorFramework b = raw(hostB);
        refused("create under A's outbox", () -> b.create().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath(paths.eventPrefix(A), X));
        refused("setData of A's event", () -> b.setData().forPath(paths.event(id), X));
        refused("delete of A's event", () -> b.delete().forPath(paths.event(id)));
        refused("an event as the coordinators", () -> b.create().creatingParentsIfNeeded()
                .withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath(paths.eventPrefix(ZkPaths.COORDINATOR_EVENTS), X));
        try (io.mesh.curator.EventOutbox coordinators = new io.mesh.curator.EventOutbox(coordinator, paths, ZkPaths.COORDINATOR_EVENTS)) {
            assertThat(coordinators.write(e)).startsWith(ZkPaths.COORDINATOR_EVENTS + "/e-");
        }
        coordinator.delete().forPath(paths.event(id)); // sent: the leader deletes it
    }

    @Test
    void hostBCannotWriteDeleteOrTakeHostAsNodesAndAMayDoItsOwn() throws Exception {
        Nodes n = populateAsA(mesh(hostA));
        CuratorFramework b = raw(hostB);

        for (String p : List.of(n.report(), n.window(), n.held(), n.agent(), n.lockChild(), n.lease())) {
            refused("setData " + p, () -> b.setData().forPath(p, X));
            // (a slot lease is under a shared parent: deleting it is the documented limit, the next test)
            if (!p.equals(n.lease())) refused("delete " + p, () -> b.delete().forPath(p));
            refused("setAcl " + p, () -> b.setACL().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(p));
        }
        // Take: a node in A's name, under A's parents.
        refused("create a held node of A", () -> b.create().withMode(CreateMode.EPHEMERAL).forPath(paths.held(A, MODULE + "-web"), X));
        refused("create a window node of A", () -> b.create().withMode(CreateMode.EPHEMERAL).forPath(paths.window(A, "hi-other"), X));
        refused("create a report of A", () -> b.create().forPath(paths.report(A, "hi-other"), X));
        refused("create a window request of A", () -> b.create().forPath(paths.request(A, "window-0000000001"), X));
        refused("create a lock child of A", () -> b.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .forPath(paths.lock(MODULE, A) + "/_c_00000000-0000-0000-0000-000000000000-lock-", X));
        refused("delete A's lock node", () -> b.delete().forPath(paths.lock(MODULE, A)));
        refused("delete A's held parent", () -> b.delete().forPath(paths.held(A)));
        refused("create another host's parent", () -> b.create().forPath(paths.held("hi-c"), X));
        assertThat(catchThrowable(() -> b.create().withMode(CreateMode.EPHEMERAL).forPath(n.agent(), X)))
                .as("A's agent node cannot be taken while A has it").isInstanceOf(KeeperException.NodeExistsException.class);
        ModuleLock bTakesAsLock = new ModuleLock(b, paths, MODULE, A, ProcessRef.current("host b"), LockHolder.APPLY);
        assertThat(catchThrowable(() -> bTakesAsLock.acquire(Duration.ofMillis(500)))).as("B taking A's module lock")
                .isInstanceOf(KeeperException.NoAuthException.class);

        // B's own nodes, through the same code, beside A's: its report, held nodes and the same module's lock on B.
        CuratorFramework bMesh = mesh(hostB);
        new MeshStore(bMesh, paths).writeReport(ApplyReport.applied(B, MODULE, "r1", "push-0000000000", Instant.now(), null, List.of()));
        ModuleLock bLock = new ModuleLock(bMesh, paths, MODULE, B, ProcessRef.current("host b"), LockHolder.APPLY);
        assertThat(bLock.acquire(Duration.ofSeconds(5))).isTrue();
        bLock.release();

        // What ZooKeeper holds is A's, unchanged, and readable by anyone.
        CuratorFramework anyone = raw(null);
        assertThat(Json.read(anyone.getData().forPath(n.report()), ApplyReport.class).host()).isEqualTo(A);
        assertThat(anyone.getChildren().forPath(paths.held(A))).containsExactly(MODULE + "-registry");
        assertThat(anyone.getChildren().forPath(paths.lock(MODULE, A))).hasSize(1);
        assertThat(anyone.getACL().forPath(n.held())).as("A's held node: A may do everything, anyone may read")
                .extracting(acl -> acl.getId().getScheme() + ":" + ZkAuth.userOf(acl.getId()) + ":" + acl.getPerms())
                .containsExactly("digest:host-hi-a:" + ZooDefs.Perms.ALL, "world:anyone:" + ZooDefs.Perms.READ);

        // A may change and delete its own.
        CuratorFramework a = raw(hostA);
        a.setData().forPath(n.report(), Json.bytes(ApplyReport.applied(A, MODULE, "r2", "push-0000000001", Instant.now(), null, List.of())));
        a.delete().forPath(n.report());
        assertThat(anyone.checkExists().forPath(n.report())).isNull();
    }

    /** Limits of ZooKeeper's parent-level create/delete rights on shared parents, pinned so that a change is seen. */
    @Test
    void onSharedParentsEveryHostMayCreateAndDeleteButNotChangeAnothersNode() throws Exception {
        Nodes n = populateAsA(mesh(hostA));
        CuratorFramework b = raw(hostB);
        // A slot: B takes a lease beside A's through the same recipe; it cannot change A's lease's data...
        Lease bLease = new InterProcessSemaphoreV2(mesh(hostB), paths.windowSlots(MODULE, "gc"), 2).acquire(5, TimeUnit.SECONDS);
        assertThat(bLease).isNotNull();
        closing.add(bLease);
        refused("setData A's lease", () -> b.setData().forPath(n.lease(), X));
        // ...but delete is a right on the parent, which every host has: the documented limit (decision 19).
        b.delete().forPath(n.lease());
        assertThat(b.checkExists().forPath(n.lease())).isNull();
        // /mesh/agents: every host may create (its own node), none may delete another's.
        refused("delete A's agent node", () -> b.delete().forPath(n.agent()));
        // A module's lock node: the coordinators made it; B may not delete it.
        refused("delete A's lock node", () -> b.delete().forPath(paths.lock(MODULE, A)));
    }

    /**
     * An apply's progress node (decision 32): the host's agent makes its own parent under the shared /mesh/progress and
     * its ephemeral node there; another host can neither change nor delete it, nor make one under A's parent.
     */
    @Test
    void aHostWritesItsOwnProgressNodeAndAnotherCannotChangeIt() throws Exception {
        String path = paths.progress(A, MODULE);
        mesh(hostA).create().orSetData().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(path, X);
        mesh(hostA).setData().forPath(path, X);
        CuratorFramework b = raw(hostB);
        refused("setData A's progress node", () -> b.setData().forPath(path, X));
        refused("delete A's progress node", () -> b.delete().forPath(path));
        refused("a progress node under A's parent", () -> b.create().withMode(CreateMode.EPHEMERAL).forPath(paths.progress(A, "hi-other"), X));
        assertThat(b.checkExists().forPath(path)).isNotNull();
        // a window's gate wait (decision 35): the same rule under /mesh/waits
        String wait = paths.gateWait(A, MODULE, "gc");
        mesh(hostA).create().orSetData().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(wait, X);
        refused("setData A's gate wait", () -> b.setData().forPath(wait, X));
        refused("delete A's gate wait", () -> b.delete().forPath(wait));
        refused("a gate wait under A's parent", () -> b.create().withMode(CreateMode.EPHEMERAL).forPath(paths.gateWait(A, MODULE, "other"), X));
    }

    /**
     * ZooKeeper's create right is on the parent: a parent that gives every host create lets one host make another's
     * node. With A's credentials (a raw client, which sets what ACL it likes) nothing can be made under B's lock node,
     * held or window parents, nor a lock node for B of a module the coordinators made none for (B not named by its
     * push), nor a module lock parent at all: the coordinators make each registered host's lock node (LockNodes), and A's
     * own still works. What ACLs cannot stop is pinned: A may create B's agent node while B has none, and a slot lease
     * or claim whose data names B (shared parents of Curator's recipes; docs/security.md, residual risks).
     */
    @Test
    void aHostCannotMakeNodesInAnotherHostsNameWhereAclsCanSayWhose() throws Exception {
        String onlyA = "hi-only-a";
        LockNodes.ensureForPush(coordinator, paths, Map.of(MODULE, List.of(A, B), onlyA, List.of(A)));
        CuratorFramework a = raw(hostA);
        String lockChild = "/_c_00000000-0000-0000-0000-000000000000-lock-";

        refused("a child of B's lock node", () -> a.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(paths.lock(MODULE, B) + lockChild, X));
        refused("B's lock node of a module pushed to A only", () -> a.create().forPath(paths.lock(onlyA, B), X));
        refused("a module lock parent", () -> a.create().forPath(paths.locks() + "/hi-unpushed", X));
        refused("B's lock node of a module never pushed", () -> a.create().creatingParentsIfNeeded().forPath(paths.lock("hi-unpushed", B), X));
        refused("a held node of B", () -> a.create().withMode(CreateMode.EPHEMERAL).forPath(paths.held(B, MODULE + "-web"), X));
        refused("a window node of B", () -> a.create().withMode(CreateMode.EPHEMERAL).forPath(paths.window(B, MODULE), X));
        refused("the held parent of an unregistered host", () -> a.create().forPath(paths.held("hi-c"), X));
        refused("the window parent of an unregistered host", () -> a.create().forPath(paths.windows("hi-c"), X));
        assertThat(raw(null).getACL().forPath(paths.lock(MODULE, B))).as("B's lock node: the admin's, B's to lock in, anyone's to read")
                .extracting(acl -> ZkAuth.userOf(acl.getId()) + ":" + acl.getPerms())
                .containsExactly("mesh:" + ZooDefs.Perms.ALL,
                        "host-" + B + ":" + (ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE | ZooDefs.Perms.READ | ZooDefs.Perms.WRITE),
                        "anyone:" + ZooDefs.Perms.READ);

        // A's own, through mesh's code: its locks of both modules, a window's held and window nodes, its agent node.
        CuratorFramework aMesh = mesh(hostA);
        for (String m : List.of(MODULE, onlyA)) {
            ModuleLock lock = new ModuleLock(aMesh, paths, m, A, ProcessRef.current("test"), LockHolder.APPLY);
            assertThat(lock.acquire(Duration.ofSeconds(5))).as("A locks " + m).isTrue();
            lock.release();
        }
        HeldRegistry held = HeldRegistry.publish(aMesh, paths, A, MODULE, "gc", "w-1", Instant.now(),
                List.<String[]>of(new String[]{MODULE + "-registry", "0123abcd"}), ProcessRef.current("test"), Duration.ofSeconds(10));
        closing.add(held);
        assertThat(raw(null).checkExists().forPath(paths.held(A, MODULE + "-registry"))).isNotNull();
        AgentNode agent = new AgentNode(aMesh, paths.agent(A), new AgentRecord(A, "test", ProcessHandle.current().pid(), Instant.now()), () -> {});
        agent.claim();
        closing.add(agent);

        // A module lock of B's that the coordinators did not make (B not named when it was pushed): B cannot make it, and
        // its agent says what makes it instead of failing with a bare NoAuth.
        ModuleLock bOnA = new ModuleLock(mesh(hostB), paths, onlyA, B, ProcessRef.current("host b"), LockHolder.APPLY);
        assertThat(catchThrowable(() -> bOnA.acquire(Duration.ofMillis(500)))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(paths.lock(onlyA, B)).hasMessageContaining("mesh-coordinator credentials " + B);

        // The limits, pinned: a shared parent's create right is every host's, whatever the child's name or data.
        a.create().withMode(CreateMode.EPHEMERAL).forPath(paths.agent(B), X);
        assertThat(raw(null).checkExists().forPath(paths.agent(B))).as("B's agent node made by A: not closable by ACLs").isNotNull();
        // (ephemeral: it goes with A's session; a persistent one only an admin deletes: decision 19, consequences)
        String slot = paths.windowSlots(MODULE, "gc");
        Lease lease = new InterProcessSemaphoreV2(aMesh, slot, 2).acquire(5, TimeUnit.SECONDS);
        assertThat(lease).isNotNull();
        closing.add(lease);
        String leasePath = ZkPaths.slotLeases(slot) + "/" + lease.getNodeName();
        a.setData().forPath(leasePath, ("{\"host\":\"" + B + "\",\"module\":\"" + MODULE + "\",\"window\":\"w-forged\"}")
                .getBytes(StandardCharsets.UTF_8));
        assertThat(new String(raw(null).getData().forPath(leasePath), StandardCharsets.UTF_8)).as("A's lease, claiming to be B's")
                .contains("\"host\":\"" + B + "\"");
        String forged = ZkPaths.slotClaims(slot) + "/" + B + "--" + MODULE + "--w-forged";
        a.create().creatingParentsIfNeeded().forPath(forged, ("{\"host\":\"" + B + "\",\"module\":\"" + MODULE
                + "\",\"window\":\"w-forged\",\"state\":\"held\"}").getBytes(StandardCharsets.UTF_8));
        assertThat(raw(null).checkExists().forPath(forged)).as("a claim in B's name made by A: not closable by ACLs").isNotNull();
    }

    @Test
    void onlyTheCoordinatorWritesDesiredPushesHistoryPlansAndFreezes() throws Exception {
        coordinator.create().forPath(paths.desired(MODULE), X);
        coordinator.create().forPath(paths.push("push-0000000000"), X);
        coordinator.create().creatingParentsIfNeeded().forPath(paths.freeze(MODULE), X);
        coordinator.create().creatingParentsIfNeeded().forPath(paths.history(MODULE, "rev-0000000000"), X);
        coordinator.create().creatingParentsIfNeeded().forPath(paths.plan("plan-0000000001", A), X);
        coordinator.create().forPath(paths.request(A, "window-0000000001"), X);
        coordinator.setData().forPath(paths.desired(MODULE), "{\"module\":\"x\"}".getBytes(StandardCharsets.UTF_8));

        for (ZkAuth host : List.of(hostA, hostB)) {
            CuratorFramework h = raw(host);
            refused(host.user() + " creates desired", () -> h.create().forPath(paths.desired("hi-web"), X));
            refused(host.user() + " sets desired", () -> h.setData().forPath(paths.desired(MODULE), X));
            refused(host.user() + " deletes desired", () -> h.delete().forPath(paths.desired(MODULE)));
            refused(host.user() + " creates a push", () -> h.create().forPath(paths.push("push-0000000009"), X));
            refused(host.user() + " sets the push counter", () -> h.setData().forPath(paths.pushes(), X));
            refused(host.user() + " writes history", () -> h.setData().forPath(paths.history(MODULE, "rev-0000000000"), X));
            refused(host.user() + " freezes", () -> h.create().forPath(paths.freezeAll(), X));
            refused(host.user() + " thaws", () -> h.delete().forPath(paths.freeze(MODULE)));
            refused(host.user() + " plans", () -> h.create().forPath(paths.plan("plan-0000000002"), X));
            refused(host.user() + " reads identities", () -> h.getData().forPath(paths.identity(A)));
        }
        // A plan's or window request's node for A: A answers it, B may not.
        CuratorFramework a = raw(hostA), b = raw(hostB);
        a.setData().forPath(paths.plan("plan-0000000001", A), "{\"answer\":1}".getBytes(StandardCharsets.UTF_8));
        refused("B answers A's plan", () -> b.setData().forPath(paths.plan("plan-0000000001", A), X));
        refused("B writes A's request", () -> b.setData().forPath(paths.request(A, "window-0000000001"), X));
        a.setData().forPath(paths.request(A, "window-0000000001"), X);
        a.delete().forPath(paths.request(A, "window-0000000001"));

        // An operator hold of A's container: A's agent records the stop, B cannot.
        Instant now = Times.now();
        HeldRecord hold = HeldRecord.operator(A, MODULE, MODULE + "-registry", null, ProcessRef.current("mesh-coordinator (test)"),
                new HeldRecord.OperatorHold("alice", "disk swap", now, null, Boolean.TRUE, null));
        HeldRegistry.hold(coordinator, paths, hold);
        refused("B marks A's hold", () -> b.setData().forPath(paths.held(A, MODULE + "-registry"), X));
        assertThat(HeldRegistry.markStopped(mesh(hostA), paths, hold, now)).isTrue();
    }

    /**
     * SPEC "Identities": coordinators alone write a rollout's state. The push's transaction (as {@code PushWriter} writes
     * it) makes the rollout node, the coordinators' alone, and one node per host, which that host's agent moves through
     * {@link RolloutGate} (a multi that also checks the other hosts' nodes) and no other host may touch.
     */
    @Test
    void onlyCoordinatorsWriteARolloutAndEachHostOnlyItsOwnNodeInIt() throws Exception {
        ContainerSpec app = ContainerSpec.builder("img:2").build();
        DesiredRecord desired = new DesiredRecord(MODULE, "r2", "push-0000000002",
                new ModuleSpec(MODULE, List.of("*"), Map.of("app", app), Map.of(), new RolloutSpec("1", 1, null)));
        RolloutRecord rollout = RolloutRecord.start(desired, List.of(A, B), Set.of(A, B), null, "test", Instant.now());
        assertThat(rollout.canary()).containsExactly(A);
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(coordinator.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths.rollout(MODULE), Json.bytes(rollout)));
        for (RolloutHostRecord h : rollout.startChildren()) {
            ops.add(coordinator.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths.rolloutHost(MODULE, h.host()), Json.bytes(h)));
        }
        coordinator.create().creatingParentsIfNeeded().forPath(paths.rollouts(), X);
        coordinator.transaction().forOperations(ops);

        CuratorFramework a = raw(hostA), b = raw(hostB);
        for (CuratorFramework h : List.of(a, b)) {
            refused("a host marks the rollout done", () -> h.setData().forPath(paths.rollout(MODULE), X));
            refused("a host adds a host to the rollout", () -> h.create().forPath(paths.rolloutHost(MODULE, "hi-c"), X));
        }
        refused("B moves A's node", () -> b.setData().forPath(paths.rolloutHost(MODULE, A), X));
        refused("B removes A from the rollout", () -> b.delete().forPath(paths.rolloutHost(MODULE, A)));
        refused("B sets A's node's ACL", () -> b.setACL().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(paths.rolloutHost(MODULE, A)));
        assertThat(raw(null).getACL().forPath(paths.rolloutHost(MODULE, A))).as("A's node: the admin's, A may read and write it")
                .extracting(acl -> acl.getId().getScheme() + ":" + ZkAuth.userOf(acl.getId()) + ":" + acl.getPerms())
                .containsExactly("digest:mesh:" + ZooDefs.Perms.ALL, "digest:host-hi-a:" + (ZooDefs.Perms.READ | ZooDefs.Perms.WRITE),
                        "world:anyone:" + ZooDefs.Perms.READ);

        // A, the canary, moves its own node through the agent's code: applying in a slot, then done.
        RolloutGate gate = new RolloutGate(new MeshStore(mesh(hostA), paths), A, ProcessRef.current("test"));
        try (RolloutGate.Admission admitted = gate.admit(desired)) {
            assertThat(admitted.keepsPrevious()).isFalse();
            assertThat(admitted.holdsSlot()).isTrue();
            assertThat(RolloutNodes.readView(coordinator, paths, MODULE).applying()).containsExactly(A);
            admitted.finished(ApplyOutcome.APPLIED, null);
        }
        RolloutRecord view = RolloutNodes.readView(coordinator, paths, MODULE);
        assertThat(view.done()).containsExactly(A);
        assertThat(view.waiting()).containsExactly(B);
        assertThat(Json.read(coordinator.getData().forPath(paths.rolloutHost(MODULE, A)), RolloutHostRecord.class).state())
                .isEqualTo(RolloutHostState.DONE);
        assertThat(Json.read(coordinator.getData().forPath(paths.rollout(MODULE)), RolloutRecord.class)).as("the rollout node: as pushed")
                .isEqualTo(rollout);
        // B writes its own node.
        b.setData().forPath(paths.rolloutHost(MODULE, B), Json.bytes(RolloutHostRecord.waiting(B, desired.push(), Instant.now())));
    }

    @Test
    void aHostProcessRefusesToStartWithoutItsNodesOrWithCredentialsIssuedBefore() throws Exception {
        ZkAuth unregistered = ZkAuth.newHost("hi-c", admin);
        assertThatThrownBy(() -> MeshZk.connect(zk.connect(), Duration.ofSeconds(20), unregistered, paths))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(paths.reports("hi-c")).hasMessageContaining("mesh-coordinator credentials hi-c");

        ZkAuth again = ZkAuth.newHost(A, admin);
        HostIdentities.register(coordinator, paths, admin, again, Instant.now());
        assertThatThrownBy(() -> MeshZk.connect(zk.connect(), Duration.ofSeconds(20), hostA, paths))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("not the credentials last issued for host " + A);
        mesh(again);

        ZkAuth noFleet = ZkAuth.parse("host-" + B + ":" + "whatever");
        assertThatThrownBy(() -> MeshZk.connect(zk.connect(), Duration.ofSeconds(20), noFleet, paths))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(ZkAuth.FLEET_USER);
    }

    /** Nodes made when every process shared the admin identity become the host's to write once it is registered. */
    @Test
    void nodesOfTheSharedIdentityEraBecomeWritableByTheirHostOnceRegistered() throws Exception {
        String host = "hi-legacy";
        // The agent of hi-legacy shared the admin identity: its report and lock node are the admin's.
        new MeshStore(coordinator, paths).writeReport(ApplyReport.applied(host, MODULE, "r1", "push-0000000000", Instant.now(), null, List.of()));
        ModuleLock old = new ModuleLock(coordinator, paths, MODULE, host, ProcessRef.current("shared"), LockHolder.APPLY);
        assertThat(old.acquire(Duration.ofSeconds(5))).isTrue();
        old.release();
        ZkAuth own = ZkAuth.newHost(host, admin);
        refused("before registration", () -> raw(own).setData().forPath(paths.report(host, MODULE), X));

        HostIdentities.register(coordinator, paths, admin, own, Instant.now());
        MeshZk.secure(coordinator, paths, admin);

        CuratorFramework h = mesh(own);
        new MeshStore(h, paths).writeReport(ApplyReport.applied(host, MODULE, "r2", "push-0000000001", Instant.now(), null, List.of()));
        ModuleLock now = new ModuleLock(h, paths, MODULE, host, ProcessRef.current("own"), LockHolder.APPLY);
        assertThat(now.acquire(Duration.ofSeconds(5))).isTrue();
        now.release();
        refused("another host on the migrated report", () -> raw(hostB).setData().forPath(paths.report(host, MODULE), X));
        Stat st = new Stat();
        assertThat(Json.read(raw(null).getData().storingStatIn(st).forPath(paths.report(host, MODULE)), ApplyReport.class).revision()).isEqualTo("r2");
        List<ACL> acl = coordinator.getACL().forPath(paths.report(host, MODULE));
        assertThat(acl).extracting(x -> ZkAuth.userOf(x.getId())).contains("mesh", "host-" + host, "anyone");
    }
}
