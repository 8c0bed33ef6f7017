package io.mesh.curator;

import io.mesh.wire.ZkPaths;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.apache.zookeeper.ZooDefs.Ids.ANYONE_ID_UNSAFE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The ACL of each path ({@link MeshAcls}, decision 19) and the credentials' lines ({@link ZkAuth}), as pure logic. */
class MeshAclsTest {
    private final ZkPaths paths = new ZkPaths("/mesh");
    private final ZkAuth admin = ZkAuth.parse("mesh:admin-pw");
    private final ZkAuth hostA = ZkAuth.newHost("hi-a", admin);
    private final MeshAcls adminRules = new MeshAcls(paths, admin, h -> h.equals("hi-a") ? Optional.of(hostA.id()) : Optional.empty());
    private final MeshAcls hostRules = new MeshAcls(paths, hostA, h -> Optional.empty());
    private static final int CRDW = Perms.CREATE | Perms.DELETE | Perms.READ | Perms.WRITE;
    private static final int CRD = Perms.CREATE | Perms.DELETE | Perms.READ;
    private static final ACL WORLD_R = new ACL(Perms.READ, ANYONE_ID_UNSAFE);

    private ACL all(Id id) { return new ACL(Perms.ALL, id); }

    @Test
    void anAdminsNodesGiveHostsAndTheFleetOnlyWhatTheirPathNeeds() {
        Id a = admin.id(), fleet = admin.fleetId(), host = hostA.id();
        Map<String, List<ACL>> expected = Map.ofEntries(
                Map.entry("/mesh", List.of(all(a), WORLD_R)),
                Map.entry("/mesh/desired/store", List.of(all(a), WORLD_R)),
                Map.entry("/mesh/identities", List.of(all(a))),
                Map.entry("/mesh/identities/hi-a", List.of(all(a))),
                Map.entry("/mesh/agents", List.of(all(a), new ACL(Perms.CREATE, fleet), WORLD_R)),
                // Lock parents: the admin's alone; it makes each host's lock node (LockNodes), no host may make any.
                Map.entry("/mesh/locks", List.of(all(a), WORLD_R)),
                Map.entry("/mesh/locks/store", List.of(all(a), WORLD_R)),
                Map.entry("/mesh/locks/store/hi-a", List.of(all(a), new ACL(CRDW, host), WORLD_R)),
                Map.entry("/mesh/slots/window-store-gc", List.of(all(a), new ACL(CRD, fleet), WORLD_R)),
                Map.entry("/mesh/slots/window-store-gc/claims", List.of(all(a), new ACL(CRD, fleet), WORLD_R)),
                Map.entry("/mesh/slots/window-store-gc/claims/x", List.of(all(a), WORLD_R)),
                Map.entry("/mesh/rollouts/store", List.of(all(a), WORLD_R)),
                Map.entry("/mesh/rollouts/store/hi-a", List.of(all(a), new ACL(Perms.READ | Perms.WRITE, host), WORLD_R)),
                Map.entry("/mesh/rollouts/store/hi-unregistered", List.of(all(a), WORLD_R)),
                Map.entry("/mesh/held/hi-a", List.of(all(a), new ACL(CRDW, host), WORLD_R)),
                Map.entry("/mesh/held/hi-a/store-registry", List.of(all(a), new ACL(Perms.READ | Perms.WRITE, host), WORLD_R)),
                Map.entry("/mesh/requests/hi-a/window-0000000001", List.of(all(a), new ACL(Perms.READ | Perms.WRITE, host), WORLD_R)),
                Map.entry("/mesh/plans/plan-0000000001/hi-a", List.of(all(a), new ACL(Perms.READ | Perms.WRITE, host), WORLD_R)),
                Map.entry("/mesh/plans/plan-0000000001", List.of(all(a), WORLD_R)),
                // An audit's host node: the host answers into it and creates its pages under it (decision 28).
                Map.entry("/mesh/audits/audit-0000000001/hi-a", List.of(all(a), new ACL(CRDW, host), WORLD_R)),
                Map.entry("/mesh/audits/audit-0000000001", List.of(all(a), WORLD_R)),
                Map.entry("/mesh/held/hi-unregistered", List.of(all(a), WORLD_R)),
                // The webhooks' outbox (decision 34): a host's parent is its own, as its reports are; the coordinators'
                // and the delivery state are the admin's.
                Map.entry("/mesh/events", List.of(all(a), WORLD_R)),
                Map.entry("/mesh/events/hi-a", List.of(all(a), new ACL(CRDW, host), WORLD_R)),
                Map.entry("/mesh/events/hi-a/e-0000000001", List.of(all(a), new ACL(Perms.READ | Perms.WRITE, host), WORLD_R)),
                Map.entry("/mesh/events/_coordinators", List.of(all(a), WORLD_R)),
                Map.entry("/mesh/events/_coordinators/e-0000000001", List.of(all(a), WORLD_R)),
                Map.entry("/mesh/notify/ops/hi-a/e-0000000001", List.of(all(a), WORLD_R)),
                Map.entry("/mesh/leader", List.of(all(a), WORLD_R)),
                Map.entry("/elsewhere", List.of(all(a), WORLD_R)));
        expected.forEach((p, acl) -> assertThat(adminRules.forPath(p)).as(p).isEqualTo(acl));
    }

    @Test
    void aHostsNodesAreItsOwnButTheSharedParentsItMakes() {
        Id host = hostA.id(), fleet = hostA.fleetId();
        assertThat(fleet).as("the host's fleet line is its admin's").isEqualTo(admin.fleetId());
        assertThat(hostRules.forPath("/mesh/reports/hi-a/store")).isEqualTo(List.of(all(host), WORLD_R));
        assertThat(hostRules.forPath("/mesh/locks/store/hi-a")).isEqualTo(List.of(all(host), WORLD_R));
        assertThat(hostRules.forPath("/mesh/audits/audit-0000000001/hi-a/page-0")).isEqualTo(List.of(all(host), WORLD_R));
        // (a host cannot make a lock node or its parent; were it the admin's, its rules would give the fleet nothing there)
        assertThat(hostRules.forPath("/mesh/locks/store")).noneMatch(acl -> acl.getId().equals(fleet));
        assertThat(hostRules.forPath("/mesh/slots/group-registries")).isEqualTo(List.of(new ACL(CRD, fleet), WORLD_R));
        assertThat(hostRules.forPath("/mesh/slots/group-registries/leases")).isEqualTo(List.of(new ACL(CRD, fleet), WORLD_R));
        assertThat(hostRules.forPath("/mesh/slots/group-registries/leases/l-1")).isEqualTo(List.of(all(host), WORLD_R));
    }

    @Test
    void credentialsLinesAreReadAsTheirKindAndNeverPrinted() {
        ZkAuth fromText = ZkAuth.parseLines("# host a\n" + hostA.fileText());
        assertThat(fromText.id()).isEqualTo(hostA.id());
        assertThat(fromText.host()).contains("hi-a");
        assertThat(fromText.admin()).isFalse();
        assertThat(ZkAuth.resolve(null, Map.of(ZkAuth.ENV, hostA.fileText().strip().replace('\n', ' '))).fleetId()).isEqualTo(admin.fleetId());
        assertThat(ZkAuth.resolve(null, Map.of(ZkAuth.ENV, "mesh:pass word")).user()).as("a space in an admin password").isEqualTo("mesh");
        assertThat(ZkAuth.newHost("hi-a", admin).id()).as("a random password each time").isNotEqualTo(hostA.id());
        assertThat(ZkAuth.parse("mesh:admin-pw").fleetId()).as("derived, the same on every coordinator").isEqualTo(admin.fleetId());
        assertThat(ZkAuth.parse("mesh:other-pw").fleetId()).isNotEqualTo(admin.fleetId());
        assertThat(hostA.toString()).doesNotContain(hostA.fileText().lines().findFirst().orElseThrow().substring(10));

        assertThatThrownBy(() -> ZkAuth.parseLines("host-hi-a:pw\n")).hasMessageContaining(ZkAuth.FLEET_USER).hasMessageNotContaining("pw\n");
        assertThatThrownBy(() -> ZkAuth.parseLines("mesh:pw\nmesh-fleet:x\n")).hasMessageContaining("one user:password line");
        assertThatThrownBy(() -> ZkAuth.parseLines("mesh-fleet:x\n")).hasMessageContaining("own identity");
        assertThatThrownBy(() -> ZkAuth.parseLines("host-../x:pw\nmesh-fleet:x")).hasMessageContaining("--host must match");
        assertThatThrownBy(() -> ZkAuth.newHost("hi-b", hostA)).hasMessageContaining("admin identity");
    }
}
