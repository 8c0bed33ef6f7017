package io.mesh.testing;

import io.mesh.curator.MeshZk;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
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

    /** Ports handed out by {@link #freePort()} in this JVM, so that two servers of one test never get the same. */
    private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * A free TCP port on 127.0.0.1 (closed again before return), below the kernel's ephemeral range.
     *
     * <p>Why below it: a server that a test kills and starts again must get its port back. A port from the ephemeral
     * range ({@code ip_local_port_range}, where a bind to port 0 lands) can be taken meanwhile as the local end of any
     * outgoing loopback connection (a ZooKeeper client's, a peer's), and then the server's bind fails; a ZooKeeper
     * server that cannot bind its election port leaves the ensemble and exits. Ports from 20000 up to the range's
     * start are never taken that way.
     *
     * @return the port
     * @throws java.io.IOException when no port in that span is free after many tries
     */
    public static int freePort() throws java.io.IOException {
        int low = 20_000, high = Math.min(32_000, ephemeralStart());
        java.util.Random random = new java.util.Random();
        for (int attempt = 0; high - low > 100 && attempt < 200; attempt++) {
            int port = low + random.nextInt(high - low);
            if (port == 22_881 || !HANDED_OUT.add(port)) continue;   // 22881: a fixed port some configurations name
            try (java.net.ServerSocket s = new java.net.ServerSocket()) {
                s.bind(new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), port), 1);
                return port;
            } catch (java.net.BindException inUse) {
                // taken by another process: try another
            }
        }
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** @return the first port of the kernel's ephemeral range (32768 when it cannot be read) */
    private static int ephemeralStart() {
        try {
            return Integer.parseInt(java.nio.file.Files.readString(java.nio.file.Path.of("/proc/sys/net/ipv4/ip_local_port_range")).strip().split("\\s+")[0]);
        } catch (java.io.IOException | RuntimeException e) {
            return 32_768;
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
