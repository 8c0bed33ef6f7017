package io.mesh.coordinator;

import io.mesh.curator.HostIdentities;
import io.mesh.curator.HostIdentity;
import io.mesh.curator.MeshZk;
import io.mesh.curator.ZkAuth;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@code mesh-coordinator credentials HOST --zk-auth-file ADMIN_FILE --out FILE} (SPEC.md, "Identities"; decision 19)
 * run as an operator runs it, against a real ZooKeeper: the file is mode 0600 in the form {@code --zk-auth-file}
 * reads, the identity is registered, the host's parents exist with ACLs for that host, the output says what was done
 * without a password; the file's identity then writes its own nodes and no other host's; bad usage writes nothing.
 */
class CredentialsCommandTest {
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @TempDir
    Path dir;
    private final ZkPaths paths = new ZkPaths(ZkPaths.DEFAULT_ROOT);

    private record Run(int code, String out, String err) {}

    private Run run(String... args) {
        StringWriter out = new StringWriter(), err = new StringWriter();
        CommandLine cl = new CommandLine(new CoordinatorMain()).setOut(new PrintWriter(out)).setErr(new PrintWriter(err));
        int code = cl.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    private Path adminFile() throws Exception {
        Path f = dir.resolve("admin.auth");
        Files.writeString(f, "mesh:admin-s3cret-pw\n");
        return f;
    }

    @Test
    void issuesAHostsCredentialsFileAndItsNodesAndTheFileWorksForThatHostOnly() throws Exception {
        Path out = dir.resolve("hi-one.auth");
        Run r = run("credentials", "hi-one", "--zk", zk.connect(), "--zk-auth-file", adminFile().toString(), "--out", out.toString());
        assertThat(r.code()).as(r.err()).isZero();

        assertThat(Files.getPosixFilePermissions(out)).isEqualTo(PosixFilePermissions.fromString("rw-------"));
        ZkAuth host = ZkAuth.fromFile(out);
        assertThat(host.user()).isEqualTo("host-hi-one");
        assertThat(host.host()).contains("hi-one");
        String secret = Files.readString(out).lines().filter(l -> l.startsWith("host-hi-one:")).findFirst().orElseThrow().substring("host-hi-one:".length());
        assertThat(secret).hasSizeGreaterThanOrEqualTo(43); // 256 random bits
        assertThat(r.out()).contains(out.toString(), "registered " + paths.identity("hi-one"), "created " + paths.held("hi-one"),
                "digest:host-hi-one:cdrw", "mesh-agent run --host hi-one").doesNotContain(secret).doesNotContain("admin-s3cret");
        assertThat(dir.toFile().list()).as("no temporary file left").containsExactlyInAnyOrder("admin.auth", "hi-one.auth");

        try (CuratorFramework admin = MeshZk.connect(zk.connect(), Duration.ofSeconds(20), ZkAuth.fromFile(adminFile()), paths);
             CuratorFramework mine = MeshZk.connect(zk.connect(), Duration.ofSeconds(20), host, paths)) {
            HostIdentity id = HostIdentity.read(admin, paths, "hi-one").orElseThrow();
            assertThat(id.digest()).isEqualTo(host.id().getId());
            assertThat(admin.getACL().forPath(paths.identity("hi-one"))).as("the admin's alone")
                    .extracting(a -> ZkAuth.userOf(a.getId())).containsExactly("mesh");
            mine.create().forPath(paths.report("hi-one", "hi-mod"), "{}".getBytes(StandardCharsets.UTF_8));
            Throwable t = catchThrowable(() -> mine.create().forPath(paths.reports("hi-two"), "{}".getBytes(StandardCharsets.UTF_8)));
            assertThat(t).as("another host's report parent").isInstanceOf(KeeperException.NoAuthException.class);
            Throwable d = catchThrowable(() -> mine.create().forPath(paths.desired("hi-mod"), "{}".getBytes(StandardCharsets.UTF_8)));
            assertThat(d).isInstanceOf(KeeperException.NoAuthException.class);
            assertThat(admin.getACL().forPath(paths.held("hi-one"))).extracting(a -> ZkAuth.userOf(a.getId()) + ":" + a.getPerms())
                    .containsExactly("mesh:" + ZooDefs.Perms.ALL,
                            "host-hi-one:" + (ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE | ZooDefs.Perms.READ | ZooDefs.Perms.WRITE),
                            "anyone:" + ZooDefs.Perms.READ);
        }

        Run again = run("credentials", "hi-one", "--zk", zk.connect(), "--zk-auth-file", adminFile().toString(), "--out", out.toString());
        assertThat(again.code()).as("an existing file is not replaced without --force").isEqualTo(2);
        assertThat(again.err()).contains("--force");
        assertThat(ZkAuth.fromFile(out).id()).isEqualTo(host.id());
        Run forced = run("credentials", "hi-one", "--zk", zk.connect(), "--zk-auth-file", adminFile().toString(), "--out", out.toString(), "--force");
        assertThat(forced.code()).as(forced.err()).isZero();
        assertThat(forced.out()).contains("replaced " + paths.identity("hi-one"), "deleted " + paths.report("hi-one", "hi-mod"));
        assertThat(ZkAuth.fromFile(out).id()).isNotEqualTo(host.id());
    }

    @Test
    void badUsageWritesNothing() throws Exception {
        Path out = dir.resolve("x.auth");
        Run noAdmin = run("credentials", "hi-one", "--zk", zk.connect(), "--out", out.toString());
        assertThat(noAdmin.code()).isEqualTo(2);
        assertThat(noAdmin.err()).contains("--zk-auth-file");
        Run badHost = run("credentials", "../etc", "--zk", zk.connect(), "--zk-auth-file", adminFile().toString(), "--out", out.toString());
        assertThat(badHost.code()).isEqualTo(2);
        assertThat(badHost.err()).contains("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");
        Path hostFile = dir.resolve("h.auth");
        Files.writeString(hostFile, "host-hi-z:pw\nmesh-fleet:pw2\n");
        Run asHost = run("credentials", "hi-one", "--zk", zk.connect(), "--zk-auth-file", hostFile.toString(), "--out", out.toString());
        assertThat(asHost.code()).isEqualTo(2);
        assertThat(asHost.err()).contains("admin identity");
        assertThat(Files.exists(out)).isFalse();
        assertThat(zk.client().checkExists().forPath(paths.identities())).isNull();
    }

    /**
     * SPEC "Identities": a host's credentials make only its own lock nodes, and cannot make them at all: the
     * coordinators do. A push (through {@link PushWriter}, as {@code POST /v1/pushes} writes it) makes the lock node
     * of each registered host it names, {@code ["*"]} naming every one, before its desired node; credentials issued
     * later make the new host's lock node of every module pushed before. Each host then locks its own and can make
     * nothing under another's, nor a lock node of its own that no push named.
     */
    @Test
    void pushesAndCredentialsMakeEachHostsLockNodesAndNoHostMakesAnyLockNode() throws Exception {
        Path one = dir.resolve("hi-one.auth"), two = dir.resolve("hi-two.auth"), three = dir.resolve("hi-three.auth");
        assertThat(run("credentials", "hi-one", "--zk", zk.connect(), "--zk-auth-file", adminFile().toString(), "--out", one.toString()).code()).isZero();
        assertThat(run("credentials", "hi-two", "--zk", zk.connect(), "--zk-auth-file", adminFile().toString(), "--out", two.toString()).code()).isZero();
        int crdw = ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE | ZooDefs.Perms.READ | ZooDefs.Perms.WRITE;
        try (CuratorFramework admin = MeshZk.connect(zk.connect(), Duration.ofSeconds(20), ZkAuth.fromFile(adminFile()), paths)) {
            String manifest = "module: hi-mod\nhosts: [hi-one]\ncontainers:\n  web: {image: \"mesh-demo/busybox:1\"}\n---\n"
                    + "module: hi-all\nhosts: [\"*\"]\ncontainers:\n  web: {image: \"mesh-demo/busybox:1\"}\n";
            new PushWriter(admin, paths, java.time.Clock.systemUTC()).write(manifest, "r1");

            assertThat(admin.getChildren().forPath(paths.locks() + "/hi-mod")).containsExactly("hi-one");
            assertThat(admin.getChildren().forPath(paths.locks() + "/hi-all")).containsExactlyInAnyOrder("hi-one", "hi-two");
            assertThat(admin.getACL().forPath(paths.lock("hi-mod", "hi-one"))).extracting(a -> ZkAuth.userOf(a.getId()) + ":" + a.getPerms())
                    .containsExactly("mesh:" + ZooDefs.Perms.ALL, "host-hi-one:" + crdw, "anyone:" + ZooDefs.Perms.READ);
            assertThat(admin.getACL().forPath(paths.locks() + "/hi-mod")).as("the module's lock parent: the admin's alone")
                    .extracting(a -> ZkAuth.userOf(a.getId()) + ":" + a.getPerms())
                    .containsExactly("mesh:" + ZooDefs.Perms.ALL, "anyone:" + ZooDefs.Perms.READ);
            assertThat(admin.getACL().forPath(paths.locks())).extracting(a -> ZkAuth.userOf(a.getId()) + ":" + a.getPerms())
                    .containsExactly("mesh:" + ZooDefs.Perms.ALL, "anyone:" + ZooDefs.Perms.READ);

            try (CuratorFramework hostTwo = zk.plainClient(ZkAuth.fromFile(two))) {
                byte[] x = "{}".getBytes(StandardCharsets.UTF_8);
                assertThat(catchThrowable(() -> hostTwo.create().forPath(paths.lock("hi-mod", "hi-two"), x)))
                        .as("hi-two's lock node of a module not pushed to it").isInstanceOf(KeeperException.NoAuthException.class);
                assertThat(catchThrowable(() -> hostTwo.create().forPath(paths.lock("hi-mod", "hi-one") + "/_c_x-lock-", x)))
                        .as("a child of hi-one's lock node").isInstanceOf(KeeperException.NoAuthException.class);
                assertThat(catchThrowable(() -> hostTwo.create().forPath(paths.locks() + "/hi-new", x)))
                        .as("a module's lock parent").isInstanceOf(KeeperException.NoAuthException.class);
                hostTwo.create().withMode(org.apache.zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL)
                        .forPath(paths.lock("hi-all", "hi-two") + "/_c_x-lock-", x); // its own
            }

            // A host registered after the pushes gets its lock node of each module pushed before.
            Run r = run("credentials", "hi-three", "--zk", zk.connect(), "--zk-auth-file", adminFile().toString(), "--out", three.toString());
            assertThat(r.code()).as(r.err()).isZero();
            assertThat(r.out()).contains("lock nodes of host hi-three under " + paths.locks() + "/<module>: 2 made");
            assertThat(admin.getACL().forPath(paths.lock("hi-all", "hi-three"))).extracting(a -> ZkAuth.userOf(a.getId()) + ":" + a.getPerms())
                    .containsExactly("mesh:" + ZooDefs.Perms.ALL, "host-hi-three:" + crdw, "anyone:" + ZooDefs.Perms.READ);
        }
    }
}
