package io.mesh.curator;

import io.mesh.wire.Times;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * Curator clients as every mesh process makes them: same retry policy, same session timeout, and the same access
 * control (docs/security.md, docs/decisions/0019-host-identities.md).
 *
 * <p>With credentials ({@link ZkAuth}: {@code --zk-auth-file} or {@code MESH_ZK_AUTH}), the client authenticates
 * with ZooKeeper's {@code digest} scheme and {@link MeshAcls} gives every node it creates the ACL of its path: the
 * admin identity (coordinators) or the host's own may change it, {@code world:anyone} may only read. {@link #secure}
 * then makes the layout fit the identity (or refuses to start). Without credentials mesh works as before with open
 * ACLs (demos and tests); production must set them.
 */
public final class MeshZk {
    /** Default connect string, {@code 127.0.0.1:2181}. */
    public static final String DEFAULT_CONNECT = "127.0.0.1:2181";
    /** ZooKeeper session timeout; the held and window nodes of a dead process vanish this long after it dies. */
    public static final Duration SESSION_TIMEOUT = Times.SESSION_TIMEOUT;
    /** Connection timeout of each attempt. */
    public static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(5);

    private static final Logger log = LoggerFactory.getLogger(MeshZk.class);
    private static final byte[] EMPTY_JSON = "{}".getBytes(StandardCharsets.UTF_8);

    private MeshZk() {}

    /**
     * Starts a client without credentials (open ACLs) and waits for its first connection.
     *
     * @param connect  ZooKeeper connect string such as {@code 127.0.0.1:2181} or {@code a:2181,b:2181,c:2181}
     * @param waitFor  how long to wait for the first connection
     * @return a started client; close it when done
     * @throws IllegalStateException when no connection is made within {@code waitFor}
     * @throws InterruptedException  when interrupted while waiting
     */
    public static CuratorFramework connect(String connect, Duration waitFor) throws InterruptedException {
        return open(connect, waitFor, null, new ZkPaths(ZkPaths.DEFAULT_ROOT));
    }

    /**
     * Starts a client and waits for its first connection, without looking at the layout ({@link #secure} does).
     *
     * @param connect ZooKeeper connect string
     * @param waitFor how long to wait for the first connection
     * @param auth    this process's identity: the client authenticates as it (and as the fleet, {@link ZkAuth}) and
     *                every node it creates gets the ACL {@link MeshAcls} gives its path; {@code null} for none (open
     *                ACLs)
     * @param paths   the layout, which the ACLs follow
     * @return a started client; close it when done
     * @throws IllegalStateException when no connection is made within {@code waitFor}
     * @throws InterruptedException  when interrupted while waiting
     */
    public static CuratorFramework open(String connect, Duration waitFor, ZkAuth auth, ZkPaths paths) throws InterruptedException {
        return open(connect, waitFor, auth, paths, null);
    }

    /**
     * As {@link #open(String, Duration, ZkAuth, ZkPaths)}, over TLS when {@code tls} is given: the client speaks to an
     * ensemble's {@code secureClientPort} with the settings of {@code --zk-tls} (docs/decisions/0040-tls.md), held by
     * this client alone (never the JVM's system properties).
     *
     * @param tls ZooKeeper's client TLS settings, or {@code null} for plain text
     * @throws IllegalStateException when no connection is made within {@code waitFor}
     * @throws InterruptedException  when interrupted while waiting
     */
    public static CuratorFramework open(String connect, Duration waitFor, ZkAuth auth, ZkPaths paths, ZkTls tls) throws InterruptedException {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs((int) SESSION_TIMEOUT.toMillis())
                .connectionTimeoutMs((int) CONNECTION_TIMEOUT.toMillis())
                .retryPolicy(new ExponentialBackoffRetry(200, 10, 5_000))
                .runSafeService(runSafeService());
        // Curator hands this configuration to each ZooKeeper handle it makes, after a session expiry too.
        if (tls != null) b.zkClientConfig(tls.clientConfig());
        AtomicReference<CuratorFramework> self = new AtomicReference<>();
        if (auth != null) {
            b.authorization(auth.authorizations()).aclProvider(acls(auth, paths, self::get));
        }
        CuratorFramework client = b.build();
        self.set(client);
        if (auth != null && !auth.admin()) AS_HOST.add(client);
        client.start();
        if (!client.blockUntilConnected((int) waitFor.toMillis(), TimeUnit.MILLISECONDS)) {
            client.close();
            throw new IllegalStateException("ZooKeeper at " + connect + " did not answer within " + waitFor.toSeconds()
                    + "s: check --zk (default " + DEFAULT_CONNECT + ") and that the ensemble is up" + (tls == null
                    ? " (an ensemble's secureClientPort answers only over TLS: give --zk-tls FILE)"
                    : "; over TLS (" + tls.file() + "), that the port is its secureClientPort, that the trustStore holds the CA "
                    + "of the servers' certificates and that they trust the keyStore's (the log says which)"));
        }
        return client;
    }

    /** The clients that authenticate as a host's identity ({@link #asHost}). */
    private static final java.util.Set<CuratorFramework> AS_HOST = java.util.Collections.newSetFromMap(
            java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>()));

    /**
     * @param client a client {@link #open} made
     * @return true when it authenticates as a host's identity: what such a client writes into an empty tree must not
     *         make the shared parents ({@code /mesh}, {@code /mesh/agents}, {@code /mesh/reports}), which would get its
     *         host's ACL and shut the admin out (docs/decisions/0039-backups-and-an-empty-ensemble.md item 6: the agent
     *         node and a {@code no-desired-state} report wait for them)
     */
    public static boolean asHost(CuratorFramework client) { return AS_HOST.contains(client); }

    /**
     * Curator's {@code runSafe} executor (CuratorCache and other recipes hand listener calls to it) as Curator makes it,
     * one thread, tasks in order, except that its thread ends after 5 s without a task: Curator's own keeps its thread
     * for good once used, even after the client closes, and an agent at rest needs none (docs/benchmark-notes.md, B8).
     */
    private static ExecutorService runSafeService() {
        ThreadPoolExecutor e = new ThreadPoolExecutor(1, 1, 5, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "Curator-SafeNotifyService");
            t.setDaemon(true);
            return t;
        });
        e.allowCoreThreadTimeOut(true);
        return e;
    }

    /** @return the ACL rules of {@code auth}; an admin's look host identities up through {@code client} */
    private static MeshAcls acls(ZkAuth auth, ZkPaths paths, Supplier<CuratorFramework> client) {
        if (!auth.admin()) return new MeshAcls(paths, auth, host -> Optional.empty());
        HostIdentities ids = new HostIdentities(client, paths);
        return new MeshAcls(paths, auth, ids::idOf);
    }

    /**
     * Starts a client as a mesh process does ({@link #open}), then {@link #secure}s the layout.
     *
     * @param connect ZooKeeper connect string
     * @param waitFor how long to wait for the first connection
     * @param auth    this process's identity, or {@code null}
     * @param paths   the layout
     * @return a started client
     * @throws IllegalStateException when ZooKeeper does not answer, or when the layout does not fit {@code auth}
     *                               ({@link #secure})
     * @throws Exception             from ZooKeeper
     */
    public static CuratorFramework connect(String connect, Duration waitFor, ZkAuth auth, ZkPaths paths) throws Exception {
        return connect(connect, waitFor, auth, paths, null);
    }

    /**
     * As {@link #connect(String, Duration, ZkAuth, ZkPaths)}, over TLS when {@code tls} is given
     * ({@link #open(String, Duration, ZkAuth, ZkPaths, ZkTls)}).
     *
     * @param tls ZooKeeper's client TLS settings, or {@code null} for plain text
     * @return a started client
     * @throws IllegalStateException when ZooKeeper does not answer, or when the layout does not fit {@code auth}
     * @throws Exception             from ZooKeeper
     */
    public static CuratorFramework connect(String connect, Duration waitFor, ZkAuth auth, ZkPaths paths, ZkTls tls) throws Exception {
        CuratorFramework client = open(connect, waitFor, auth, paths, tls);
        try {
            secure(client, paths, auth);
            return client;
        } catch (Exception | Error e) {
            client.close();
            throw e;
        }
    }

    /**
     * Makes the layout safe for the identity given, or refuses to start (docs/decisions/0019-host-identities.md).
     *
     * <ul>
     *   <li>An admin identity: creates the root and its top-level nodes ({@code desired}, {@code pushes},
     *       {@code history}, {@code locks}, {@code windows}, {@code held}, {@code reports}, {@code agents},
     *       {@code slots}, {@code requests}) with data {@code {}} when missing, and the module-lock node of every
     *       registered host for every module ({@link LockNodes#ensureAll}); gives every node under the root that
     *       anyone may write (left by a mesh run without credentials), and every node of this identity whose ACL is
     *       not the one {@link MeshAcls} gives its path now (made before host identities, or before its host was
     *       registered), that ACL. Nodes of a host or of the fleet are left alone; a node of any other identity is
     *       named in a warning.</li>
     *   <li>A host's identity: checks that its own parents exist ({@code mesh-coordinator credentials} makes them)
     *       and that it may write them.</li>
     *   <li>Without credentials: fails when the root exists and the world may not create under it (the other mesh
     *       processes run with credentials: this one could read but not write).</li>
     * </ul>
     *
     * @param client a started client made by {@link #open} with the same {@code auth}
     * @param paths  the layout
     * @param auth   this process's identity, or {@code null}
     * @throws IllegalStateException naming the fix when the root is protected and this process has no credentials,
     *                               when the root belongs to another identity, or when a host's nodes are missing or
     *                               not writable with its credentials
     * @throws Exception             from ZooKeeper
     */
    public static void secure(CuratorFramework client, ZkPaths paths, ZkAuth auth) throws Exception {
        String root = paths.root();
        if (auth == null) {
            Stat s = client.checkExists().forPath(root);
            if (s != null && !worldMay(client.getACL().forPath(root), ZooDefs.Perms.CREATE)) {
                throw new IllegalStateException("ZooKeeper " + root + " is protected by ACLs and this process has no credentials: "
                        + "give --zk-auth-file FILE or " + ZkAuth.ENV + "=user:password (mesh's identity)");
            }
            return;
        }
        if (!auth.admin()) {
            checkHost(client, paths, auth);
            return;
        }
        MeshAcls acls = acls(auth, paths, () -> client);
        for (String p : List.of(root, paths.desired(), paths.pushes(), paths.history(), paths.locks(), paths.windows(), paths.held(),
                paths.reports(), paths.agents(), paths.slots(), paths.requests(), paths.progress(), paths.waits(), paths.events(),
                paths.notifications())) {
            if (client.checkExists().forPath(p) != null) continue;
            try {
                client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(p, EMPTY_JSON);
            } catch (KeeperException.NodeExistsException raced) {
                // another mesh process made it
            }
        }
        // The webhooks' outbox of each registered host (decision 34): a host registered before it existed gets it here,
        // with the ACL its path gets, as at credentials HOST; its agent cannot make it under the admin's /mesh/events.
        for (String host : LockNodes.registeredHosts(client, paths)) {
            try {
                client.create().withMode(CreateMode.PERSISTENT).forPath(paths.events(host), EMPTY_JSON);
            } catch (KeeperException.NodeExistsException known) {
                // made at credentials HOST or at an earlier start
            }
        }
        int locks = LockNodes.ensureAll(client, paths);
        if (locks > 0) log.info("ZooKeeper ACLs: made {} module-lock node(s) of registered hosts under {}", locks, paths.locks());
        int tightened = 0;
        int aligned = 0;
        Deque<String> todo = new ArrayDeque<>(List.of(root));
        while (!todo.isEmpty()) {
            String p = todo.pop();
            List<ACL> acl;
            List<String> children;
            try {
                acl = client.getACL().forPath(p);
                children = client.getChildren().forPath(p);
            } catch (KeeperException.NoNodeException gone) {
                continue; // an ephemeral node went meanwhile
            }
            for (String c : children) todo.push(p.equals("/") ? "/" + c : p + "/" + c);
            List<ACL> rule = acls.forPath(p);
            if (acl.equals(rule)) continue;
            boolean open = worldMay(acl, ZooDefs.Perms.WRITE | ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE | ZooDefs.Perms.ADMIN);
            boolean ours = acl.stream().anyMatch(a -> a.getId().equals(auth.id()) && a.getPerms() == ZooDefs.Perms.ALL);
            if (!open && !ours) {
                if (MeshAcls.namesMeshIdentity(acl)) { // a host's node, or a shared parent a host made
                    if (p.startsWith(paths.locks() + "/") && p.indexOf('/', paths.locks().length() + 1) < 0
                            && acl.stream().anyMatch(a -> (a.getPerms() & ZooDefs.Perms.CREATE) != 0 && a.getId().equals(auth.fleetId()))) {
                        log.warn("{} was made by an agent before the coordinators made the module-lock nodes: every host may create "
                                + "under it, so one host could make another's lock node there. Only ZooKeeper's super user can change it: "
                                + "setAcl {} digest:{}:<its digest>:cdrwa,world:anyone:r (docs/security.md, residual risks)", p, p, auth.user());
                    }
                    continue;
                }
                if (p.equals(root)) {
                    throw new IllegalStateException("ZooKeeper " + root + " belongs to another identity than '" + auth.user()
                            + "': check --zk-auth-file / " + ZkAuth.ENV + " (coordinators use mesh's admin credentials)");
                }
                log.warn("{} belongs to another ZooKeeper identity than '{}': mesh cannot write it", p, auth.user());
                continue;
            }
            try {
                client.setACL().withACL(rule).forPath(p);
                if (open) tightened++;
                else aligned++;
            } catch (KeeperException.NoNodeException gone) {
                // went meanwhile
            } catch (KeeperException.NoAuthException e) {
                log.warn("{} has ACL {} and mesh may not change it: fix it with zkCli setAcl", p, acl);
            }
        }
        if (tightened > 0) log.info("ZooKeeper ACLs: {} node(s) under {} were open and now carry mesh's ACLs (user {})",
                tightened, root, auth.user());
        if (aligned > 0) log.info("ZooKeeper ACLs: {} node(s) under {} now carry the ACL their path gets (host identities, decision 19)",
                aligned, root);
    }

    /**
     * A host's process starts only where {@code mesh-coordinator credentials} made its nodes, and only with the
     * credentials it issued last: it rewrites {@code /mesh/reports/<host>} with the data it has, which only the
     * host's current identity may.
     */
    private static void checkHost(CuratorFramework client, ZkPaths paths, ZkAuth auth) throws Exception {
        String host = auth.host().orElseThrow();
        String issue = "mesh-coordinator credentials " + host + " --zk-auth-file ADMIN_FILE --out FILE";
        if (auth.fleetId() == null) {
            throw new IllegalStateException("the identity of host " + host + " lacks its " + ZkAuth.FLEET_USER
                    + " line: use the whole file " + issue + " writes");
        }
        for (String p : List.of(paths.reports(host), paths.held(host), paths.windows(host), paths.requests(host))) {
            if (client.checkExists().forPath(p) == null) {
                throw new IllegalStateException("ZooKeeper has no " + p + ": host " + host + "'s nodes are made when its credentials "
                        + "are issued; run " + issue + " (with the admin identity) and start this process with that FILE");
            }
        }
        String probe = paths.reports(host);
        Stat st = new Stat();
        byte[] data = client.getData().storingStatIn(st).forPath(probe);
        try {
            client.setData().withVersion(st.getVersion()).forPath(probe, data);
        } catch (KeeperException.BadVersionException raced) {
            // written meanwhile by another process of this host: it may write
        } catch (KeeperException.NoAuthException e) {
            throw new IllegalStateException("user " + auth.user() + " may not write " + probe + ": these are not the credentials "
                    + "last issued for host " + host + " (or not its at all); use the newest file of " + issue);
        }
    }

    /** @return true when {@code world:anyone} has any of {@code perms} */
    private static boolean worldMay(List<ACL> acl, int perms) {
        return acl.stream().anyMatch(a -> a.getId().equals(ZooDefs.Ids.ANYONE_ID_UNSAFE) && (a.getPerms() & perms) != 0);
    }
}
