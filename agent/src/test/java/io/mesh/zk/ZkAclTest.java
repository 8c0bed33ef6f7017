package io.mesh.zk;

import io.mesh.curator.MeshZk;
import io.mesh.curator.ZkAuth;
import io.mesh.section.ModuleLock;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.AuthInfo;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * ZooKeeper access control against a real server, with every process sharing the admin identity (as before host
 * identities; those are {@link HostIdentityAclTest}): every node carries {@link ZkAuth#acl()} (the shared parents also
 * give the fleet create); a client without credentials (or with a wrong password) can read everything and write nothing.
 */
class ZkAclTest {
    private static final byte[] X = "{}".getBytes(StandardCharsets.UTF_8);
    private final ZkAuth auth = ZkAuth.parse("mesh:s3cret-zk");
    private final ZkPaths paths = new ZkPaths(ZkPaths.DEFAULT_ROOT);
    /** A server per test (its own client makes no node: mesh's clients below make them). */
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    private final List<AutoCloseable> closing = new ArrayList<>();

    @AfterEach
    void closeClients() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) closing.get(i).close();
    }

    private CuratorFramework mesh() throws Exception {
        CuratorFramework c = MeshZk.connect(zk.connect(), Duration.ofSeconds(20), auth, paths);
        closing.add(c);
        return c;
    }

    /** A plain Curator client: no credentials, or the ones given, and Curator's default (open) ACL provider. */
    private CuratorFramework plain(String digest) throws Exception {
        return zk.plainClient(digest == null ? List.of() : List.of(new AuthInfo("digest", digest.getBytes(StandardCharsets.UTF_8))));
    }

    /** Writes one node of every kind as mesh's processes do, with the mesh client. */
    private Map<String, String> populate(CuratorFramework mesh) throws Exception {
        MeshStore store = new MeshStore(mesh, paths);
        mesh.create().forPath(paths.desired("store"), "{\"module\":\"store\"}".getBytes(StandardCharsets.UTF_8));
        mesh.create().forPath(paths.push("push-0000000000"), X);
        store.writeReport(ApplyReport.applied("host-a", "store", "r1", "push-0000000000", Instant.now(), null, List.of()));
        PersistentNode window = new PersistentNode(mesh, CreateMode.EPHEMERAL, false, paths.window("host-a", "store"), X);
        PersistentNode held = new PersistentNode(mesh, CreateMode.EPHEMERAL, false, paths.held("host-a", "store-registry"), X);
        PersistentNode agent = new PersistentNode(mesh, CreateMode.EPHEMERAL, false, paths.agent("host-a"), X);
        for (PersistentNode n : List.of(window, held, agent)) {
            n.start();
            assertThat(n.waitForInitialCreate(10, TimeUnit.SECONDS)).isTrue();
            closing.add(n);
        }
        ModuleLock lock = new ModuleLock(mesh, paths, "store", "host-a", ProcessRef.current("test"), LockHolder.APPLY);
        assertThat(lock.acquire(Duration.ofSeconds(5))).isTrue();
        closing.add(lock::release);
        String lockChild = paths.lock("store", "host-a") + "/" + mesh.getChildren().forPath(paths.lock("store", "host-a")).get(0);
        return Map.of("desired", paths.desired("store"), "push", paths.push("push-0000000000"),
                "report", paths.report("host-a", "store"), "window", paths.window("host-a", "store"),
                "held", paths.held("host-a", "store-registry"), "agent", paths.agent("host-a"), "lockChild", lockChild);
    }

    private static void refused(String what, Executable write) {
        Throwable t = catchThrowable(write::execute);
        assertThat(t).as(what).isInstanceOf(KeeperException.NoAuthException.class);
    }

    @Test
    void everyNodeMeshCreatesIsWritableByMeshOnlyAndReadableByAnyone() throws Exception {
        CuratorFramework mesh = mesh();
        Map<String, String> n = populate(mesh);
        List<ACL> expected = List.of(new ACL(ZooDefs.Perms.ALL, auth.id()), new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE));
        List<String> all = new ArrayList<>(List.of(paths.root(), paths.desired(), paths.pushes(), paths.locks(), paths.windows(),
                paths.held(), paths.reports(), paths.agents(), paths.lock("store", "host-a"), paths.held("host-a"),
                paths.windows("host-a"), paths.reports("host-a")));
        all.addAll(n.values());
        // Parents every host creates in (decision 19) give the fleet identity create; the admin still owns them. Not the
        // lock parents: only the coordinators make a host's lock node (LockNodes).
        List<String> shared = List.of(paths.agents());
        List<ACL> sharedAcl = List.of(new ACL(ZooDefs.Perms.ALL, auth.id()), new ACL(ZooDefs.Perms.CREATE, auth.fleetId()),
                new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE));
        for (String p : all) assertThat(mesh.getACL().forPath(p)).as(p).isEqualTo(shared.contains(p) ? sharedAcl : expected);
    }

    /** Clients that are not mesh: no credentials, mesh's user with a wrong password, another user with mesh's password. */
    static Stream<Named<String>> outsiders() {
        return Stream.of(Named.of("no credentials", null), Named.of("a wrong password", "mesh:wrong-password"),
                Named.of("another user", "intruder:s3cret-zk"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("outsiders")
    void anUnauthenticatedClientIsRefusedEveryWriteAndCanStillReadEverything(String digest) throws Exception {
        Map<String, String> n = populate(mesh());
        CuratorFramework other = plain(digest);
        // create under each mesh path
        for (String parent : List.of(paths.root(), paths.desired(), paths.pushes(), paths.locks(), paths.windows(),
                paths.held(), paths.reports(), paths.agents(), paths.held("host-a"), paths.windows("host-a"),
                paths.reports("host-a"), paths.lock("store", "host-a"))) {
            refused("create under " + parent, () -> other.create().forPath(parent + "/intruder", X));
        }
        refused("create a lock child", () -> other.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                .forPath(paths.lock("store", "host-a") + "/_c_00000000-0000-0000-0000-000000000000-lock-", X));
        refused("create a held node", () -> other.create().withMode(CreateMode.EPHEMERAL).forPath(paths.held("host-a", "store-web"), X));
        refused("create a held host", () -> other.create().forPath(paths.held("host-b"), X));
        refused("create a window host", () -> other.create().forPath(paths.windows("host-b"), X));
        refused("create a lock module", () -> other.create().forPath(paths.locks() + "/web", X));
        // change data
        refused("setData desired", () -> other.setData().forPath(n.get("desired"), "{\"spec\":{}}".getBytes(StandardCharsets.UTF_8)));
        refused("setData report", () -> other.setData().forPath(n.get("report"), X));
        refused("setData held", () -> other.setData().forPath(n.get("held"), X));
        refused("setData push", () -> other.setData().forPath(paths.pushes(), X));
        // delete
        refused("delete held", () -> other.delete().forPath(n.get("held")));
        refused("delete window", () -> other.delete().forPath(n.get("window")));
        refused("delete lock child", () -> other.delete().forPath(n.get("lockChild")));
        refused("delete desired", () -> other.delete().forPath(n.get("desired")));
        refused("delete report", () -> other.delete().forPath(n.get("report")));
        refused("delete agent", () -> other.delete().forPath(n.get("agent")));
        // open the ACL again
        refused("setACL desired", () -> other.setACL().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(n.get("desired")));
        refused("setACL root", () -> other.setACL().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(paths.root()));

        // Reading still works: zkCli inspection of held containers, windows, reports and locks.
        assertThat(other.getChildren().forPath(paths.held("host-a"))).containsExactly("store-registry");
        assertThat(other.getData().forPath(n.get("held"))).isEqualTo(X);
        assertThat(new String(other.getData().forPath(n.get("desired")), StandardCharsets.UTF_8)).contains("store");
        assertThat(Json.read(other.getData().forPath(n.get("report")), ApplyReport.class).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        assertThat(other.getChildren().forPath(paths.lock("store", "host-a"))).hasSize(1);
        assertThat(Json.read(other.getData().forPath(n.get("lockChild")), LockHolder.class).purpose()).isEqualTo(LockHolder.APPLY);
        assertThat(other.checkExists().forPath(n.get("window"))).isNotNull();
        // Nothing changed.
        assertThat(plain(null).getChildren().forPath(paths.held("host-a"))).containsExactly("store-registry");
    }

    @Test
    void anotherMeshProcessWithTheSameCredentialsMayWriteAndDelete() throws Exception {
        Map<String, String> n = populate(mesh());
        CuratorFramework coordinator = mesh();
        coordinator.setData().forPath(n.get("desired"), X);
        coordinator.create().forPath(paths.desired("web"), X);
        coordinator.delete().forPath(paths.desired("web"));
        assertThat(coordinator.getData().forPath(n.get("desired"))).isEqualTo(X);
        // and its lock waits behind the first one, as a second mesh process's would
        ModuleLock second = new ModuleLock(coordinator, paths, "store", "host-a", ProcessRef.current("second"), LockHolder.APPLY);
        assertThat(second.acquire(Duration.ofMillis(200))).isFalse();
        assertThat(coordinator.getChildren().forPath(paths.lock("store", "host-a"))).hasSize(1);
    }

    @Test
    void nodesLeftOpenByAnUnauthenticatedMeshAreTightenedWhenCredentialsAreSet() throws Exception {
        CuratorFramework before = plain(null);
        before.create().creatingParentsIfNeeded().forPath(paths.desired("store"), X);
        before.create().creatingParentsIfNeeded().forPath(paths.report("host-a", "store"), X);
        assertThat(before.getACL().forPath(paths.desired("store"))).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);

        CuratorFramework mesh = mesh();

        for (String p : List.of(paths.root(), paths.desired(), paths.desired("store"), paths.report("host-a", "store"))) {
            // (read as mesh: ZooKeeper shows others a digest ACL's hash as "x")
            assertThat(mesh.getACL().forPath(p)).as(p).isEqualTo(auth.acl());
        }
        refused("setData desired after tightening", () -> before.setData().forPath(paths.desired("store"), X));
        refused("create under reports after tightening", () -> before.create().forPath(paths.reports("host-b"), X));
    }

    @Test
    void aMeshProcessWithoutCredentialsIsToldToGiveThemWhenTheLayoutIsProtected() throws Exception {
        mesh();
        assertThatThrownBy(() -> MeshZk.connect(zk.connect(), Duration.ofSeconds(20), null, paths))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("--zk-auth-file").hasMessageContaining(ZkAuth.ENV);
        ZkAuth other = ZkAuth.parse("someone:else");
        assertThatThrownBy(() -> MeshZk.connect(zk.connect(), Duration.ofSeconds(20), other, paths))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("another identity");
    }

    @Test
    void withoutCredentialsEverythingStaysOpenAsBefore() throws Exception {
        CuratorFramework open = MeshZk.connect(zk.connect(), Duration.ofSeconds(20), null, paths);
        closing.add(open);
        open.create().creatingParentsIfNeeded().forPath(paths.desired("store"), X);
        assertThat(open.getACL().forPath(paths.desired("store"))).isEqualTo(ZooDefs.Ids.OPEN_ACL_UNSAFE);
        plain(null).setData().forPath(paths.desired("store"), "{\"x\":1}".getBytes(StandardCharsets.UTF_8));
        assertThat(open.getData().forPath(paths.desired("store"))).asString(StandardCharsets.UTF_8).isEqualTo("{\"x\":1}");
    }

    @Test
    void credentialsComeFromAFileOrTheEnvironmentAndAreNeverPrinted() throws Exception {
        Path f = Files.createTempFile("mesh-zk-auth", ".txt");
        try {
            Files.writeString(f, "# mesh's ZooKeeper identity\n\nmesh:s3cret-zk\n");
            ZkAuth fromFile = ZkAuth.resolve(f, Map.of(ZkAuth.ENV, "ignored:when-a-file-is-given"));
            assertThat(fromFile.id()).isEqualTo(auth.id());
            assertThat(fromFile.user()).isEqualTo("mesh");
            assertThat(fromFile.toString()).contains("mesh").doesNotContain("s3cret");

            assertThat(ZkAuth.resolve(null, Map.of(ZkAuth.ENV, "mesh:s3cret-zk")).id()).isEqualTo(auth.id());
            assertThat(ZkAuth.resolve(null, Map.of())).isNull();

            Files.writeString(f, "no-colon-here\n");
            assertThatThrownBy(() -> ZkAuth.resolve(f, Map.of())).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("user:password").hasMessageNotContaining("no-colon-here");
            assertThatThrownBy(() -> ZkAuth.resolve(null, Map.of(ZkAuth.ENV, "mesh:"))).hasMessageContaining(ZkAuth.ENV);
            assertThatThrownBy(() -> ZkAuth.resolve(Path.of("/nonexistent/mesh-zk-auth"), Map.of()))
                    .hasMessageContaining("cannot be read");
        } finally {
            Files.deleteIfExists(f);
        }
    }
}
