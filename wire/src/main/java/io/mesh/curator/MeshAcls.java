package io.mesh.curator;

import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import static org.apache.zookeeper.ZooDefs.Ids.ANYONE_ID_UNSAFE;

/**
 * Which ACL each node mesh creates gets, by its path (docs/decisions/0019-host-identities.md has the table and its
 * reasons). ZooKeeper's ACLs are per node and not inherited, and creating or deleting a node is a right on its parent:
 * so a host's own parents ({@code /mesh/reports/<host>}, {@code /mesh/locks/<module>/<host>} ...) give that host
 * create and delete, the shared parents (slots, {@code /mesh/agents}) give every host (the fleet identity) create,
 * and each node a host creates is writable by that host only. A right on a parent cannot be limited to some child
 * names: so {@code /mesh/locks} and {@code /mesh/locks/<module>} are the admin's alone, and the coordinators make each
 * registered host's lock node ({@link LockNodes}); {@code /mesh/agents} and the slots stay shared (the limits this
 * leaves: docs/security.md, residual risks). Everyone may read everything but {@code /mesh/identities}.
 *
 * <p>Rules for an admin process (coordinators; agents that share the admin identity):
 * <pre>
 * identities, identities/{host}                      admin: all (no one else reads)
 * agents, slots, progress, waits                    admin: all; fleet: create; world: read
 * slots/{key}, slots/{key}/{queue|claims|leases|locks} admin: all; fleet: create, delete, read; world: read
 * {reports|held|windows|requests|events}/{host},
 *   locks/{module}/{host}, audits/{audit}/{host}     admin: all; host: create, delete, read, write; world: read
 *                                                    (an audit's host node: the host answers in page children)
 * {reports|held|windows|events}/{host}/{node},
 *   requests/{host}/{request}, plans/{plan}/{host},
 *   rollouts/{module}/{host}                         admin: all; host: read, write; world: read
 * anything else (locks and locks/{module} too: only the
 *   admin makes a host's lock node; rollouts/{module}
 *   too: coordinators alone write a rollout's state,
 *   SPEC "Identities")                                admin: all; world: read
 * </pre>
 * ("host" is the host's identity from {@link HostIdentities}; a host without one gets no entry.) Rules for a host's
 * process: slots/{key} and their four children fleet: create, delete, read; anything else the host: all; world: read
 * everywhere.
 */
public final class MeshAcls implements ACLProvider {
    private static final Set<String> PER_HOST = Set.of("reports", "held", "windows", "requests", "events");
    private static final int CRDW = Perms.CREATE | Perms.DELETE | Perms.READ | Perms.WRITE;
    private static final int CRD = Perms.CREATE | Perms.DELETE | Perms.READ;
    private static final int RW = Perms.READ | Perms.WRITE;

    private final ZkPaths paths;
    private final ZkAuth auth;
    private final Function<String, Optional<Id>> hostIds;

    /**
     * @param paths   the layout
     * @param auth    this process's identity
     * @param hostIds a host's identity, for an admin process's rules ({@link HostIdentities#idOf}); unused for a host's
     */
    public MeshAcls(ZkPaths paths, ZkAuth auth, Function<String, Optional<Id>> hostIds) {
        this.paths = paths;
        this.auth = auth;
        this.hostIds = hostIds;
    }

    @Override
    public List<ACL> getDefaultAcl() { return auth.acl(); }

    @Override
    public List<ACL> getAclForPath(String path) { return forPath(path); }

    /**
     * @param path an absolute znode path
     * @return the ACL a node made there by this process gets (a mutable list: ZooKeeper's client asks it
     *         {@code contains(null)})
     */
    public List<ACL> forPath(String path) {
        String[] p = parts(path);
        List<ACL> out = new ArrayList<>();
        if (p == null) {
            out.addAll(auth.acl());
            return out;
        }
        if (auth.admin()) admin(p, out);
        else host(p, out);
        return out;
    }

    private void host(String[] p, List<ACL> out) {
        if (auth.fleetId() == null) {
            out.add(new ACL(Perms.ALL, auth.id())); // no fleet line: MeshZk refuses to start such a process
        } else if (slotParent(p)) {
            out.add(new ACL(CRD, auth.fleetId()));
        } else {
            out.add(new ACL(Perms.ALL, auth.id()));
        }
        out.add(new ACL(Perms.READ, ANYONE_ID_UNSAFE));
    }

    private void admin(String[] p, List<ACL> out) {
        out.add(new ACL(Perms.ALL, auth.id()));
        if (p.length >= 1 && p[0].equals("identities")) return;
        if (p.length >= 2 && p[0].equals("events") && p[1].equals(ZkPaths.COORDINATOR_EVENTS)) { // coordinators' own outbox
            out.add(new ACL(Perms.READ, ANYONE_ID_UNSAFE));
            return;
        }
        if (p.length == 1 && Set.of("agents", "slots", "progress", "waits").contains(p[0])) {
            out.add(new ACL(Perms.CREATE, auth.fleetId()));
        } else if (slotParent(p)) {
            out.add(new ACL(CRD, auth.fleetId()));
        } else if (p.length == 2 && PER_HOST.contains(p[0])) {
            hostIds.apply(p[1]).ifPresent(id -> out.add(new ACL(CRDW, id)));
        } else if (p.length == 3 && (p[0].equals("locks") || p[0].equals("audits"))) {
            hostIds.apply(p[2]).ifPresent(id -> out.add(new ACL(CRDW, id)));
        } else if (p.length == 3 && PER_HOST.contains(p[0])) {
            hostIds.apply(p[1]).ifPresent(id -> out.add(new ACL(RW, id)));
        } else if (p.length == 3 && (p[0].equals("plans") || p[0].equals("rollouts"))) {
            hostIds.apply(p[2]).ifPresent(id -> out.add(new ACL(RW, id)));
        }
        out.add(new ACL(Perms.READ, ANYONE_ID_UNSAFE));
    }

    private static boolean slotParent(String[] p) { return (p.length == 2 || p.length == 3) && p[0].equals("slots"); }

    /** @return the names below the root (empty for the root itself); {@code null} for a path outside it */
    private String[] parts(String path) {
        String root = paths.root();
        if (path.equals(root)) return new String[0];
        if (!path.startsWith(root + "/")) return null;
        return Arrays.stream(path.substring(root.length() + 1).split("/")).filter(s -> !s.isEmpty()).toArray(String[]::new);
    }

    /**
     * @param acl an ACL as read
     * @return true when it names a mesh identity other than an admin's: a host's or the fleet's (read by a process
     *         without ADMIN on the node, ZooKeeper shows their hashes as {@code x})
     */
    public static boolean namesMeshIdentity(List<ACL> acl) {
        return acl.stream().anyMatch(a -> ZkAuth.SCHEME.equals(a.getId().getScheme())
                && (ZkAuth.userOf(a.getId()).startsWith(ZkAuth.HOST_PREFIX) || ZkAuth.userOf(a.getId()).equals(ZkAuth.FLEET_USER)));
    }

    /** @return an ACL as {@code zkCli getAcl} would sum it up, hashes left out: {@code [digest:mesh:cdrwa, world:anyone:r]} */
    public static String describe(List<ACL> acl) {
        List<String> out = new ArrayList<>();
        for (ACL a : acl) {
            int p = a.getPerms();
            String perms = ((p & Perms.CREATE) != 0 ? "c" : "") + ((p & Perms.DELETE) != 0 ? "d" : "") + ((p & Perms.READ) != 0 ? "r" : "")
                    + ((p & Perms.WRITE) != 0 ? "w" : "") + ((p & Perms.ADMIN) != 0 ? "a" : "");
            out.add(a.getId().getScheme() + ":" + ZkAuth.userOf(a.getId()) + ":" + perms);
        }
        return "[" + String.join(", ", out) + "]";
    }
}
