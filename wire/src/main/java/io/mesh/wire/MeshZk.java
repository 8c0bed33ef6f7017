package io.mesh.wire;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
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
import java.util.concurrent.TimeUnit;

/**
 * Curator clients as every mesh process makes them: same retry policy, same session timeout, and the same access
 * control (docs/security.md).
 *
 * <p>With credentials ({@link ZkAuth}: {@code --zk-auth-file} or {@code MESH_ZK_AUTH}), the client authenticates
 * with ZooKeeper's {@code digest} scheme and its {@link ACLProvider} gives every node it creates the ACL
 * {@link ZkAuth#acl()}: mesh's identity may do everything, {@code world:anyone} may only read. {@link #secure}
 * then makes sure the root and its top-level nodes exist with that ACL, and tightens nodes under the root that an
 * earlier, unauthenticated mesh left open. Without credentials mesh works as before with open ACLs (demos and
 * tests); production must set them.
 */
public final class MeshZk {
    /** Default connect string, {@code 127.0.0.1:2181}. */
    public static final String DEFAULT_CONNECT = "127.0.0.1:2181";
    /** ZooKeeper session timeout; the held and window nodes of a dead process vanish this long after it dies. */
    public static final Duration SESSION_TIMEOUT = Duration.ofSeconds(15);
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
        return connect(connect, waitFor, null);
    }

    /**
     * Starts a client and waits for its first connection.
     *
     * @param connect ZooKeeper connect string
     * @param waitFor how long to wait for the first connection
     * @param auth    mesh's credentials: the client authenticates with them and every node it creates gets
     *                {@link ZkAuth#acl()}; {@code null} for none (open ACLs)
     * @return a started client; close it when done
     * @throws IllegalStateException when no connection is made within {@code waitFor}
     * @throws InterruptedException  when interrupted while waiting
     */
    public static CuratorFramework connect(String connect, Duration waitFor, ZkAuth auth) throws InterruptedException {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs((int) SESSION_TIMEOUT.toMillis())
                .connectionTimeoutMs((int) CONNECTION_TIMEOUT.toMillis())
                .retryPolicy(new ExponentialBackoffRetry(200, 10, 5_000));
        if (auth != null) {
            b.authorization(ZkAuth.SCHEME, auth.credentials()).aclProvider(new ACLProvider() {
                @Override
                public List<ACL> getDefaultAcl() { return auth.acl(); }

                @Override
                public List<ACL> getAclForPath(String path) { return auth.acl(); }
            });
        }
        CuratorFramework client = b.build();
        client.start();
        if (!client.blockUntilConnected((int) waitFor.toMillis(), TimeUnit.MILLISECONDS)) {
            client.close();
            throw new IllegalStateException("ZooKeeper at " + connect + " did not answer within " + waitFor.toSeconds()
                    + "s: check --zk (default " + DEFAULT_CONNECT + ") and that the ensemble is up");
        }
        return client;
    }

    /**
     * Starts a client as a mesh process does ({@link #connect(String, Duration, ZkAuth)}), then {@link #secure}s the
     * layout.
     *
     * @param connect ZooKeeper connect string
     * @param waitFor how long to wait for the first connection
     * @param auth    mesh's credentials, or {@code null}
     * @param paths   the layout
     * @return a started client
     * @throws IllegalStateException when ZooKeeper does not answer, or when the layout is protected and {@code auth}
     *                               is {@code null} or not mesh's identity
     * @throws Exception             from ZooKeeper
     */
    public static CuratorFramework connect(String connect, Duration waitFor, ZkAuth auth, ZkPaths paths) throws Exception {
        CuratorFramework client = connect(connect, waitFor, auth);
        try {
            secure(client, paths, auth);
            return client;
        } catch (Exception | Error e) {
            client.close();
            throw e;
        }
    }

    /**
     * Makes the layout safe for the credentials given.
     *
     * <ul>
     *   <li>With credentials: creates the root and its top-level nodes ({@code desired}, {@code pushes},
     *       {@code locks}, {@code windows}, {@code held}, {@code reports}, {@code agents}) with data {@code {}} when
     *       missing, and gives every node under the root that anyone may write (left by a mesh run without
     *       credentials) the ACL {@link ZkAuth#acl()}. A node already owned by another identity is left alone and
     *       named in a warning.</li>
     *   <li>Without credentials: fails when the root exists and the world may not create under it (the other mesh
     *       processes run with credentials: this one could read but not write).</li>
     * </ul>
     *
     * @param client a started client made by {@link #connect(String, Duration, ZkAuth)} with the same {@code auth}
     * @param paths  the layout
     * @param auth   mesh's credentials, or {@code null}
     * @throws IllegalStateException naming the fix when the root is protected and this process has no credentials, or
     *                               when the root belongs to another identity
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
        for (String p : List.of(root, paths.desired(), paths.pushes(), paths.history(), paths.locks(), paths.windows(), paths.held(),
                paths.reports(), paths.agents())) {
            if (client.checkExists().forPath(p) != null) continue;
            try {
                client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(p, EMPTY_JSON);
            } catch (KeeperException.NodeExistsException raced) {
                // another mesh process made it
            }
        }
        int tightened = 0;
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
            if (acl.equals(auth.acl())) continue;
            boolean open = worldMay(acl, ZooDefs.Perms.WRITE | ZooDefs.Perms.CREATE | ZooDefs.Perms.DELETE | ZooDefs.Perms.ADMIN);
            if (!open) {
                if (acl.stream().anyMatch(a -> a.getId().equals(auth.id()))) continue; // ours, set by hand
                if (p.equals(root)) {
                    throw new IllegalStateException("ZooKeeper " + root + " belongs to another identity than '" + auth.user()
                            + "': check --zk-auth-file / " + ZkAuth.ENV + " (every mesh process must use mesh's credentials)");
                }
                log.warn("{} belongs to another ZooKeeper identity than '{}': mesh cannot write it", p, auth.user());
                continue;
            }
            try {
                client.setACL().withACL(auth.acl()).forPath(p);
                tightened++;
            } catch (KeeperException.NoNodeException gone) {
                // went meanwhile
            } catch (KeeperException.NoAuthException e) {
                log.warn("{} has ACL {} and mesh may not change it: fix it with zkCli setAcl", p, acl);
            }
        }
        if (tightened > 0) log.info("ZooKeeper ACLs: {} node(s) under {} were open and now carry mesh's ACL (user {})",
                tightened, root, auth.user());
    }

    /** @return true when {@code world:anyone} has any of {@code perms} */
    private static boolean worldMay(List<ACL> acl, int perms) {
        return acl.stream().anyMatch(a -> a.getId().equals(ZooDefs.Ids.ANYONE_ID_UNSAFE) && (a.getPerms() & perms) != 0);
    }
}
