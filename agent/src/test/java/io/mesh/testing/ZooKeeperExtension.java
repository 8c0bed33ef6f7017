package io.mesh.testing;

import io.mesh.curator.ZkAuth;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.AuthInfo;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * A real ZooKeeper server ({@link TestZk}: Curator's {@link TestingServer} on a free loopback port, admin server off)
 * and a connected client, as a JUnit 5 extension; {@link #plainClient} makes the clients of other identities a test logs in as.
 *
 * <pre>{@code
 * @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();   // one server for the class
 * @RegisterExtension final ZooKeeperExtension zk = new ZooKeeperExtension();          // one server per test
 * }</pre>
 *
 * In a static field the server starts before the class's first test and stops after its last;
 * {@link #resetBeforeEach()} then deletes {@code /mesh} before each test. In an instance field every test gets a
 * server of its own. Extensions that use this server ({@code CoordinatorExtension}, {@link AgentDaemonExtension})
 * must be registered after it: a static server and instance users, or {@code @Order}.
 */
public final class ZooKeeperExtension extends ScopedFixture {
    private final Map<String, String> serverProperties = new LinkedHashMap<>();
    private boolean resetBeforeEach;
    private TestZk zk;
    private final List<CuratorFramework> plainClients = new ArrayList<>();

    /**
     * Sets a system property while the server starts, and clears it afterwards: ZooKeeper reads some settings once,
     * when the server starts (such as {@code znode.container.checkIntervalMs}); other tests' servers keep the default.
     *
     * @return this
     */
    public ZooKeeperExtension withServerProperty(String name, String value) {
        serverProperties.put(name, value);
        return this;
    }

    /**
     * With one server for the class: deletes everything under {@code /mesh} before each test.
     *
     * @return this
     */
    public ZooKeeperExtension resetBeforeEach() {
        resetBeforeEach = true;
        return this;
    }

    @Override
    protected void beforeEachOfClass() throws Exception {
        if (resetBeforeEach) reset();
    }

    /** Starts the server and its client (the callbacks do; fixtures that compose this one call it themselves). */
    @Override
    public void start() throws Exception {
        if (zk != null) return;
        Map<String, String> before = new LinkedHashMap<>();
        serverProperties.forEach((k, v) -> before.put(k, System.setProperty(k, v)));
        try {
            zk = new TestZk();
        } finally {
            before.forEach((k, v) -> {
                if (v == null) System.clearProperty(k);
                else System.setProperty(k, v);
            });
        }
    }

    @Override
    protected void afterEachTest() {
        closePlainClients();
    }

    /** Closes the test's {@link #plainClient}s, newest first (after each test; fixtures that compose this one call it). */
    public void closePlainClients() {
        for (int i = plainClients.size() - 1; i >= 0; i--) plainClients.get(i).close();
        plainClients.clear();
    }

    /**
     * A client as a test's other party makes it: plain Curator, logged in with {@code authorizations} (none: anyone),
     * Curator's default (open) ACLs, connected; closed after the test.
     *
     * @throws IllegalStateException when it does not connect within 20 s
     */
    public CuratorFramework plainClient(List<AuthInfo> authorizations) throws InterruptedException {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder().connectString(connect())
                .retryPolicy(new RetryOneTime(100)).sessionTimeoutMs(15_000);
        if (!authorizations.isEmpty()) b.authorization(authorizations);
        CuratorFramework c = b.build();
        plainClients.add(c);
        c.start();
        if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) throw new IllegalStateException("a plain client did not connect to " + connect());
        return c;
    }

    /** @return a {@link #plainClient} logged in as {@code auth} (both lines of a host's identity), or as no one for {@code null} */
    public CuratorFramework plainClient(ZkAuth auth) throws InterruptedException {
        return plainClient(auth == null ? List.of() : auth.authorizations());
    }

    /** Stops the client and the server; nothing when they are not running. */
    @Override
    public void close() throws Exception {
        if (zk == null) return;
        try {
            zk.close();
        } finally {
            zk = null;
        }
    }

    private TestZk zk() {
        if (zk == null) throw new IllegalStateException("the ZooKeeper server is not running: register ZooKeeperExtension "
                + "before the extensions that use it (a static field, or @Order)");
        return zk;
    }

    /** @return true while the server runs */
    public boolean running() { return zk != null; }

    /** @return the connect string, such as {@code 127.0.0.1:43211} */
    public String connect() { return zk().connect(); }

    /** @return the test's client, connected */
    public CuratorFramework client() { return zk().client(); }

    /** @return the layout at /mesh */
    public ZkPaths paths() { return zk().paths(); }

    /** @return the server, to stop or restart it */
    public TestingServer server() { return zk().server(); }

    /**
     * Writes a push of a module with {@code rollout} as the coordinator's transaction does: the desired node, the
     * rollout node and one node per host (decision 13).
     *
     * @param host each host's node as the test wants it, from the waiting one {@link RolloutRecord#startChildren} makes
     */
    public void writeRolloutPush(DesiredRecord d, RolloutRecord r, UnaryOperator<RolloutHostRecord> host) throws Exception {
        CuratorFramework c = client();
        if (c.checkExists().forPath(paths().rollouts()) == null) c.create().creatingParentsIfNeeded().forPath(paths().rollouts());
        if (c.checkExists().forPath(paths().desired()) == null) c.create().creatingParentsIfNeeded().forPath(paths().desired());
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(c.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths().desired(d.module()), Json.bytes(d)));
        ops.add(c.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths().rollout(d.module()), Json.bytes(r)));
        for (RolloutHostRecord h : r.startChildren()) {
            ops.add(c.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths().rolloutHost(d.module(), h.host()),
                    Json.bytes(host.apply(h))));
        }
        c.transaction().forOperations(ops);
    }

    /** Writes {@code /mesh/desired/<module>} as the coordinator would: {@link TestZk#setDesired}. */
    public DesiredRecord setDesired(String yaml, String revision) throws Exception {
        return zk().setDesired(yaml, revision);
    }

    /** Deletes everything under {@code /mesh}. */
    public void reset() throws Exception {
        CuratorFramework c = client();
        if (c.checkExists().forPath(paths().root()) != null) c.delete().deletingChildrenIfNeeded().forPath(paths().root());
    }
}
