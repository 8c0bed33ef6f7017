package io.mesh.coordinator;

import io.mesh.wire.MeshZk;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;

/**
 * A real ZooKeeper server (Curator's {@link TestingServer}) bound to 127.0.0.1 on a free port, admin server off,
 * with a connected client. Tests reset {@code /mesh} with {@link #reset()}.
 */
public final class LoopbackZk implements AutoCloseable {
    public final TestingServer server;
    public final CuratorFramework client;
    public final ZkPaths paths = new ZkPaths(ZkPaths.DEFAULT_ROOT);

    public LoopbackZk() throws Exception {
        int port = freePort();
        InstanceSpec spec = new InstanceSpec(null, port, freePort(), freePort(), true, 1, -1, -1,
                Map.of("clientPortAddress", "127.0.0.1", "admin.enableServer", "false"), "127.0.0.1");
        server = new TestingServer(spec, true);
        client = MeshZk.connect(server.getConnectString(), Duration.ofSeconds(20));
    }

    /** Deletes everything under /mesh. */
    public void reset() throws Exception {
        if (client.checkExists().forPath(paths.root()) != null) client.delete().deletingChildrenIfNeeded().forPath(paths.root());
    }

    /** @return a free TCP port on 127.0.0.1 (closed again before return) */
    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() throws Exception {
        client.close();
        server.close();
    }
}
