package io.mesh.testing;

import io.mesh.testing.TestCerts.Pair;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * A real ZooKeeper server (Curator's {@link TestingServer}) with a {@code secureClientPort} on 127.0.0.1 beside its
 * plain one: Netty, TLS with client certificates required (ZooKeeper's default), key and trust stores in PEM made by
 * {@link TestCerts}; and the client properties file a mesh process's {@code --zk-tls} takes.
 *
 * <p>ZooKeeper's server reads its {@code ssl.*} settings from system properties ({@code zookeeper.ssl.*}, which its
 * config file's lines become), at each connection: they stay set while it runs, and are cleared when it is closed.
 * They are the server's (its key store, its factory), never {@code zookeeper.client.*}: a mesh client reads its own
 * from its {@code --zk-tls} file.
 */
public final class SecureTestZk implements AutoCloseable {
    private final TestingServer server;
    private final int securePort;
    private final Path clientProperties;
    private final Pair ca;
    /** The system properties ZooKeeper's server set from its configuration. */
    private final java.util.List<String> serverProperties = new java.util.ArrayList<>();

    /**
     * @param dir where the certificates and the client's properties file go
     */
    public SecureTestZk(Path dir) throws Exception {
        TestCerts certs = new TestCerts(dir);
        ca = certs.ca("zk-ca");
        Instant tomorrow = Instant.now().plus(Duration.ofDays(1));
        Path serverStore = certs.issue(ca, "zk-server", tomorrow, "DNS:localhost", "IP:127.0.0.1").joined(dir.resolve("zk-server.pem"));
        Path clientStore = certs.issue(ca, "zk-client", tomorrow, "DNS:localhost", "IP:127.0.0.1").joined(dir.resolve("zk-client.pem"));
        securePort = TestZk.freePort();
        Map<String, Object> props = new LinkedHashMap<>();
        props.put("clientPortAddress", "127.0.0.1");
        props.put("admin.enableServer", "false");
        props.put("secureClientPort", String.valueOf(securePort));
        props.put("secureClientPortAddress", "127.0.0.1");
        props.put("serverCnxnFactory", "org.apache.zookeeper.server.NettyServerCnxnFactory");
        props.put("ssl.keyStore.location", serverStore.toString());
        props.put("ssl.keyStore.type", "PEM");
        props.put("ssl.trustStore.location", ca.cert().toString());
        props.put("ssl.trustStore.type", "PEM");
        Properties before = (Properties) System.getProperties().clone();
        server = new TestingServer(new InstanceSpec(null, TestZk.freePort(), TestZk.freePort(), TestZk.freePort(), true, 1, -1, -1,
                props, "127.0.0.1"), true);
        for (String k : System.getProperties().stringPropertyNames()) {
            if (k.startsWith("zookeeper.") && !before.containsKey(k)) serverProperties.add(k);
        }
        clientProperties = Files.writeString(dir.resolve("zk-tls.properties"), String.join("\n",
                "zookeeper.client.secure=true",
                "zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
                "zookeeper.ssl.keyStore.location=" + clientStore,
                "zookeeper.ssl.keyStore.type=PEM",
                "zookeeper.ssl.trustStore.location=" + ca.cert(),
                "zookeeper.ssl.trustStore.type=PEM") + "\n");
    }

    /** @return the plain client port's connect string */
    public String plainConnect() { return server.getConnectString(); }

    /** @return the secure client port's connect string, such as {@code 127.0.0.1:24123} */
    public String secureConnect() { return "127.0.0.1:" + securePort; }

    /** @return the client's TLS properties file, for {@code --zk-tls} */
    public Path clientProperties() { return clientProperties; }

    /** @return the CA that signed the server's and the client's certificates */
    public Pair ca() { return ca; }

    @Override
    public void close() throws Exception {
        try {
            server.close();
        } finally {
            serverProperties.forEach(System::clearProperty);
        }
    }
}
