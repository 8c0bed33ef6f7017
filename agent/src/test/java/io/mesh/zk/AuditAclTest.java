package io.mesh.zk;

import io.mesh.agent.AuditRequests;
import io.mesh.curator.HostIdentities;
import io.mesh.curator.MeshZk;
import io.mesh.curator.ZkAuth;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.AuditAnswer;
import io.mesh.wire.AuditPage;
import io.mesh.wire.AuditRequest;
import io.mesh.wire.AuditState;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * An audit's host node with host identities (SPEC.md "Identities", decisions 19 and 28) on a real server: the
 * coordinator (admin) writes the request and each host's node as {@code AuditStore} does; host A's agent answers with
 * its own identity, creating its pages under its node and setting the node; host B may neither write A's node nor
 * create pages under it, and the coordinator may delete it all.
 */
class AuditAclTest {
    private static final String A = "hi-a";
    private static final String B = "hi-b";
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

    private CuratorFramework mesh(ZkAuth auth) throws Exception {
        CuratorFramework c = MeshZk.connect(zk.connect(), Duration.ofSeconds(20), auth, paths);
        closing.add(c);
        return c;
    }

    @Test
    void aHostAnswersIntoItsOwnNodeAndNoOtherHostMay() throws Exception {
        String audit = ZkPaths.auditName(0);
        Instant now = Times.now();
        coordinator.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(paths.audit(audit),
                Json.bytes(new AuditRequest(audit, now.minusSeconds(3600), now, null, List.of(A, B), now, ProcessRef.current("test"))));
        coordinator.create().forPath(paths.audit(audit, A), Json.bytes(AuditAnswer.pending(audit, A)));
        coordinator.create().forPath(paths.audit(audit, B), Json.bytes(AuditAnswer.pending(audit, B)));

        CuratorFramework b = zk.plainClient(hostB);
        byte[] x = "{}".getBytes(StandardCharsets.UTF_8);
        assertThat(catchThrowable(() -> b.setData().forPath(paths.audit(audit, A), Json.bytes(AuditAnswer.pending(audit, A).answered(0)))))
                .as("B writes A's answer").isInstanceOf(KeeperException.NoAuthException.class);
        assertThat(catchThrowable(() -> b.create().forPath(paths.auditPage(audit, A, 0), x)))
                .as("B makes a page under A's node").isInstanceOf(KeeperException.NoAuthException.class);

        List<LedgerEntry> lines = List.of(LedgerEntry.follow(now.minusSeconds(60), "the engine's buffer reached back"));
        AuditRequests agentA = new AuditRequests(mesh(hostA), paths, A, (from, to, modules) -> lines, Clock.systemUTC());
        closing.add(agentA);
        agentA.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> Json.read(coordinator.getData().forPath(paths.audit(audit, A)),
                AuditAnswer.class).state() == AuditState.ANSWERED);
        assertThat(Json.read(coordinator.getData().forPath(paths.auditPage(audit, A, 0)), AuditPage.class).lines()).isEqualTo(lines);
        assertThat(Json.read(coordinator.getData().forPath(paths.audit(audit, B)), AuditAnswer.class).state())
                .as("A answers only its own node").isEqualTo(AuditState.PENDING);

        coordinator.delete().deletingChildrenIfNeeded().forPath(paths.audit(audit));
        assertThat(coordinator.checkExists().forPath(paths.audit(audit))).isNull();
    }
}
