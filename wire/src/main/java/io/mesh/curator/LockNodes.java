package io.mesh.curator;

import io.mesh.wire.Json;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The coordinators make each registered host's module-lock node, {@code /mesh/locks/<module>/<host>} (SPEC.md
 * "Identities"; docs/decisions/0019-host-identities.md): ZooKeeper's create right is on the parent and cannot be given
 * per child name, so a host that could create under {@code /mesh/locks/<module>} could create another host's lock node
 * (with an ACL of its choosing) and take or block that host's module lock. The parents are the admin's alone; each
 * lock node is made persistent, with {@code "{}"} ({@link PersistentParents} takes it as mesh's), and the ACL
 * {@link MeshAcls} gives it: the admin all, the host create, delete, read and write (its lock children), anyone read.
 *
 * <p>Made at each push for the hosts it names (every registered host for {@code ["*"]}), at every admin start for
 * every module and registered host, and when {@code mesh-coordinator credentials} registers a host. Hosts without an
 * identity of their own (sharing the admin's, or no credentials) make their own, as before.
 */
public final class LockNodes {
    private static final Logger log = LoggerFactory.getLogger(LockNodes.class);
    private static final byte[] EMPTY_JSON = "{}".getBytes(StandardCharsets.UTF_8);

    private LockNodes() {}

    /**
     * @param admin a client of the admin identity
     * @param paths the layout
     * @return the hosts with an identity of their own ({@code /mesh/identities}), sorted; none without credentials
     * @throws Exception from ZooKeeper
     */
    public static List<String> registeredHosts(CuratorFramework admin, ZkPaths paths) throws Exception {
        try {
            return admin.getChildren().forPath(paths.identities()).stream().sorted().toList();
        } catch (KeeperException.NoNodeException | KeeperException.NoAuthException e) {
            return List.of(); // no host was ever registered, or this process is not the admin
        }
    }

    /**
     * Makes the missing lock nodes of pushed modules for the registered hosts each names (all of them for
     * {@code "*"}), before the push is written: their agents' first lock then finds its node.
     *
     * @param admin   a client of the admin identity, with mesh's ACL provider
     * @param paths   the layout
     * @param modules each module pushed, with its {@code hosts}
     * @return how many nodes were made
     * @throws Exception from ZooKeeper (a node another identity made is left, and logged)
     */
    public static int ensureForPush(CuratorFramework admin, ZkPaths paths, Map<String, ? extends Collection<String>> modules) throws Exception {
        List<String> registered = registeredHosts(admin, paths);
        if (registered.isEmpty()) return 0;
        int made = 0;
        for (Map.Entry<String, ? extends Collection<String>> m : modules.entrySet()) {
            Set<String> wanted = new TreeSet<>(m.getValue().contains("*") ? registered : m.getValue());
            wanted.retainAll(new HashSet<>(registered));
            made += ensure(admin, paths, m.getKey(), wanted);
        }
        return made;
    }

    /**
     * Makes the missing lock nodes of every module with a desired node, for every registered host (an admin start).
     *
     * @return how many nodes were made
     * @throws Exception from ZooKeeper
     */
    public static int ensureAll(CuratorFramework admin, ZkPaths paths) throws Exception {
        List<String> registered = registeredHosts(admin, paths);
        if (registered.isEmpty()) return 0;
        int made = 0;
        for (String module : children(admin, paths.desired())) made += ensure(admin, paths, module, registered);
        return made;
    }

    private static int ensure(CuratorFramework admin, ZkPaths paths, String module, Collection<String> hosts) throws Exception {
        Set<String> there = new HashSet<>(children(admin, paths.locks() + "/" + module));
        int made = 0;
        for (String host : hosts) {
            if (there.contains(host)) continue;
            String p = paths.lock(module, host);
            try {
                admin.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(p, EMPTY_JSON);
                made++;
            } catch (KeeperException.NodeExistsException raced) {
                continue; // made meanwhile (another coordinator, or the host itself under a parent of before)
            } catch (KeeperException.NoAuthException e) {
                log.warn("{} not made: {} belongs to another identity (an agent made it before the coordinators made lock nodes), "
                        + "so any host may create lock nodes under it: docs/security.md, residual risks", p, paths.locks() + "/" + module);
                continue;
            }
            // The ACL provider knows identities as it read them up to a minute ago: a host registered since by another
            // process (mesh-coordinator credentials) gets its rights from a fresh read.
            Optional<Id> id = HostIdentity.read(admin, paths, host).map(HostIdentity::id);
            List<ACL> acl = admin.getACL().forPath(p);
            if (id.isPresent() && acl.stream().noneMatch(a -> a.getId().equals(id.get()))) {
                List<ACL> fixed = new ArrayList<>(acl.stream().filter(a -> !a.getId().equals(ZooDefs.Ids.ANYONE_ID_UNSAFE)).toList());
                fixed.add(new ACL(ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE | ZooDefs.Perms.READ | ZooDefs.Perms.WRITE, id.get()));
                fixed.add(new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE));
                admin.setACL().withACL(fixed).forPath(p);
            }
        }
        return made;
    }

    /**
     * The lock nodes of a host being registered ({@code mesh-coordinator credentials}): for every module with a
     * desired node or a lock node, its node is made, or given the ACL of its path when the admin owns it, or replaced
     * when another identity made it (a previous identity of the host, or another host before the parents were the
     * admin's): no identity but this host's current one may then use it. A node in use, or one the admin may not
     * delete, is left and named.
     *
     * @param admin a client of the admin identity, whose ACL provider knows the host's new identity
     * @param paths the layout
     * @param host    the host registered
     * @param rules   the ACL rules of the admin, knowing the host's new identity
     * @param adminId the admin's digest id
     * @return what was done, for the operator; one line for the nodes made or aligned, one per node left
     * @throws Exception from ZooKeeper
     */
    public static List<String> ensureForHost(CuratorFramework admin, ZkPaths paths, String host, MeshAcls rules, Id adminId) throws Exception {
        Set<String> modules = new TreeSet<>(children(admin, paths.desired()));
        modules.addAll(children(admin, paths.locks()));
        List<String> out = new ArrayList<>();
        int made = 0, aligned = 0, replaced = 0;
        for (String module : modules) {
            String p = paths.lock(module, host);
            List<ACL> rule = rules.forPath(p);
            Stat st = admin.checkExists().forPath(p);
            try {
                if (st == null) {
                    admin.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).withACL(rule).forPath(p, EMPTY_JSON);
                    made++;
                    continue;
                }
                List<ACL> acl = admin.getACL().forPath(p);
                if (acl.equals(rule)) continue;
                if (acl.stream().anyMatch(a -> a.getId().equals(adminId) && a.getPerms() == ZooDefs.Perms.ALL)) {
                    admin.setACL().withACL(rule).forPath(p);
                    aligned++;
                    continue;
                }
                admin.delete().withVersion(st.getVersion()).forPath(p);
                admin.create().withMode(CreateMode.PERSISTENT).withACL(rule).forPath(p, EMPTY_JSON);
                replaced++;
            } catch (KeeperException.NotEmptyException e) {
                out.add("left " + p + ": made by another identity and in use; stop the process that holds or waits for it "
                        + "(mesh locks), then issue again");
            } catch (KeeperException.NoAuthException e) {
                out.add("left " + p + ": made by another identity under " + paths.locks() + "/" + module + ", which an agent made and"
                        + " the admin may not change; delete it as ZooKeeper's super user (docs/decisions/0019-host-identities.md)");
            } catch (KeeperException.NodeExistsException | KeeperException.NoNodeException | KeeperException.BadVersionException raced) {
                out.add("left " + p + ": it changed meanwhile; issue again");
            }
        }
        if (made + aligned + replaced > 0) {
            out.add(0, "lock nodes of host " + host + " under " + paths.locks() + "/<module>: " + made + " made, " + aligned
                    + " given the host's rights, " + replaced + " replaced (made by another identity) "
                    + MeshAcls.describe(rules.forPath(paths.lock(modules.iterator().next(), host))));
        }
        return out;
    }

    private static List<String> children(CuratorFramework client, String path) throws Exception {
        try {
            return client.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    /**
     * Reads who holds and who waits for a module lock: the agent's messages about a long wait, the coordinator's
     * {@code GET /v1/locks}.
     *
     * @param client a started Curator client
     * @param paths  the layout
     * @param module module name
     * @param host   host id
     * @return holder first, then waiters in order; empty when nobody holds it. Unreadable children are skipped.
     * @throws Exception from ZooKeeper
     */
    public static List<LockHolder> holders(CuratorFramework client, ZkPaths paths, String module, String host) throws Exception {
        String lockPath = paths.lock(module, host);
        Collection<String> nodes;
        try {
            nodes = new InterProcessMutex(client, lockPath).getParticipantNodes();
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
        List<LockHolder> out = new ArrayList<>();
        for (String node : nodes) {
            try {
                out.add(Json.read(client.getData().forPath(node), LockHolder.class));
            } catch (KeeperException.NoNodeException | UncheckedIOException e) {
                // released meanwhile, or not ours
            }
        }
        return out;
    }
}
