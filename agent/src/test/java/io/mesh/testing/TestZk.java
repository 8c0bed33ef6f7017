package io.mesh.testing;

import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ManifestParser;
import io.mesh.wire.MeshZk;
import io.mesh.wire.ModuleSpec;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;

import java.time.Duration;
import java.util.List;

/** A real ZooKeeper server (Curator's {@link TestingServer}) on a free loopback port, and helpers to write desired state. */
public final class TestZk implements AutoCloseable {
    private final TestingServer server;
    private final CuratorFramework client;
    private final ZkPaths paths = new ZkPaths(ZkPaths.DEFAULT_ROOT);
    private int pushes;

    /** Starts a server on 127.0.0.1 (admin server off) and a client. */
    public TestZk() throws Exception {
        server = new TestingServer(loopbackSpec(), true);
        client = MeshZk.connect(server.getConnectString(), Duration.ofSeconds(20));
    }

    /** @return a TestingServer spec whose client port listens on 127.0.0.1 only, on a free port, admin server off */
    public static InstanceSpec loopbackSpec() throws java.io.IOException {
        return new InstanceSpec(null, freePort(), freePort(), freePort(), true, 1, -1, -1,
                java.util.Map.of("clientPortAddress", "127.0.0.1", "admin.enableServer", "false"), "127.0.0.1");
    }

    /** @return a free TCP port on 127.0.0.1 (closed again before return) */
    public static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** @return the connect string, such as {@code 127.0.0.1:43211} */
    public String connect() { return server.getConnectString(); }

    /** @return a started client */
    public CuratorFramework client() { return client; }

    /** @return the layout at /mesh */
    public ZkPaths paths() { return paths; }

    /** @return the server, to stop or restart it */
    public TestingServer server() { return server; }

    /**
     * Writes {@code /mesh/desired/<module>} as the coordinator would (the coordinator's own tests cover its path).
     *
     * @param yaml     one module document
     * @param revision revision to record
     * @return the record written
     */
    public DesiredRecord setDesired(String yaml, String revision) throws Exception {
        List<ModuleSpec> specs = new ManifestParser().parse(yaml);
        ModuleSpec spec = specs.get(0);
        String push = ZkPaths.pushName(++pushes);
        DesiredRecord d = new DesiredRecord(spec.module(), revision, push, spec);
        String path = paths.desired(spec.module());
        try {
            client.setData().forPath(path, Json.bytes(d));
        } catch (KeeperException.NoNodeException e) {
            client.create().creatingParentsIfNeeded().forPath(path, Json.bytes(d));
        }
        return d;
    }

    @Override
    public void close() throws Exception {
        client.close();
        server.close();
    }
}
