package io.mesh.curator;

import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The registry of host identities, {@code /mesh/identities/<host>} ({@link HostIdentity}): written by
 * {@code mesh-coordinator credentials}, read by an admin process's {@link MeshAcls} when it makes a node a host must
 * write. Lookups are remembered for a minute (an absent host for five seconds), so that an ACL costs no read on most
 * creates and a host registered or re-issued is seen soon without a restart.
 */
public final class HostIdentities {
    private static final Logger log = LoggerFactory.getLogger(HostIdentities.class);
    static final Duration KNOWN_FOR = Duration.ofMinutes(1);
    static final Duration ABSENT_FOR = Duration.ofSeconds(5);

    private record Entry(Optional<Id> id, long expiresNanos) {}

    private final Supplier<CuratorFramework> client;
    private final ZkPaths paths;
    private final Map<String, Entry> cache = new ConcurrentHashMap<>();

    /**
     * @param client the admin process's client (a supplier: the ACL provider exists before its client)
     * @param paths  the layout
     */
    public HostIdentities(Supplier<CuratorFramework> client, ZkPaths paths) {
        this.client = client;
        this.paths = paths;
    }

    /**
     * @param host a host id
     * @return its digest id; empty when it has none (a host that shares the admin identity) or it cannot be read now
     */
    public Optional<Id> idOf(String host) {
        long now = System.nanoTime();
        Entry e = cache.get(host);
        if (e != null && now - e.expiresNanos() < 0) return e.id();
        Optional<Id> id;
        try {
            id = HostIdentity.read(client.get(), paths, host).map(HostIdentity::id);
        } catch (Exception ex) {
            log.warn("identity of host {} not read ({}): the node made now gives that host no rights", host, ex.toString());
            return Optional.empty();
        }
        cache.put(host, new Entry(id, now + (id.isPresent() ? KNOWN_FOR : ABSENT_FOR).toNanos()));
        return id;
    }

    /** Forgets what was read of {@code host} (after this process registered it). */
    public void forget(String host) { cache.remove(host); }

    /**
     * Registers a host's identity: writes {@code /mesh/identities/<host>}, then makes the host's own parents
     * ({@code /mesh/reports|held|windows|requests|events/<host>}) with the ACL {@link MeshAcls} gives them for that identity, or
     * gives them that ACL when they exist; and its lock node of every module ({@link LockNodes#ensureForHost}). The rest
     * of the layout is brought to its rules by {@link MeshZk#secure}.
     *
     * @param admin     a client of the admin identity
     * @param paths     the layout
     * @param adminAuth the admin identity
     * @param hostAuth  the host's new identity ({@link ZkAuth#newHost})
     * @param at        when it was issued
     * @return what was done, one line each (no secret)
     * @throws Exception from ZooKeeper
     */
    public static List<String> register(CuratorFramework admin, ZkPaths paths, ZkAuth adminAuth, ZkAuth hostAuth, Instant at) throws Exception {
        HostIdentity identity = HostIdentity.of(hostAuth, at);
        String host = identity.host();
        boolean replaced = HostIdentity.read(admin, paths, host).isPresent();
        write(admin, paths, identity);
        List<String> done = new ArrayList<>();
        done.add((replaced ? "replaced " : "registered ") + paths.identity(host) + " (user " + hostAuth.user()
                + "; readable by the admin identity only)");
        MeshAcls rules = new MeshAcls(paths, adminAuth, h -> h.equals(host) ? Optional.of(hostAuth.id()) : Optional.empty());
        for (String p : List.of(paths.reports(host), paths.held(host), paths.windows(host), paths.requests(host), paths.events(host))) {
            List<ACL> acl = rules.forPath(p);
            try {
                admin.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).withACL(acl).forPath(p, "{}".getBytes(StandardCharsets.UTF_8));
                done.add("created " + p + " " + MeshAcls.describe(acl));
            } catch (KeeperException.NodeExistsException e) {
                admin.setACL().withACL(acl).forPath(p);
                done.add("set the ACL of " + p + " " + MeshAcls.describe(acl));
            }
        }
        done.addAll(LockNodes.ensureForHost(admin, paths, host, rules, adminAuth.id()));
        return done;
    }

    /**
     * Writes (or replaces) a host's identity; its parents are made when missing. The client's {@link MeshAcls} gives
     * the nodes the admin-only ACL.
     *
     * @throws Exception from ZooKeeper
     */
    public static void write(CuratorFramework admin, ZkPaths paths, HostIdentity identity) throws Exception {
        String path = paths.identity(identity.host());
        try {
            admin.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(path, Json.bytes(identity));
        } catch (KeeperException.NodeExistsException e) {
            admin.setData().forPath(path, Json.bytes(identity));
        }
    }
}
