package io.mesh.coordinator;

import java.util.Map;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * A standalone ZooKeeper server inside the coordinator's JVM, through ZooKeeper's own
 * {@link ZooKeeperServerEmbedded}: client port on {@code 127.0.0.1} only, data (snapshots and transaction log) under
 * {@code <stateDir>/zookeeper}, admin server off, and a fatal server error logged rather than exiting the JVM.
 */
public final class EmbeddedZk implements AutoCloseable {
    /** Default client port of the embedded server. */
    public static final int DEFAULT_PORT = 2181;
    /** How long {@link #start} waits for the server to serve, in milliseconds. */
    public static final long START_TIMEOUT_MS = 30_000;

    /**
     * The settings that are the same at every start: ZooKeeper's usual standalone timing, the admin server off, the
     * four-letter words the runbook uses, and old snapshots purged daily (five kept).
     */
    private static final Map<String, String> SETTINGS = Map.of(
            "tickTime", "2000",
            "initLimit", "10",
            "syncLimit", "5",
            "admin.enableServer", "false",
            "4lw.commands.whitelist", "srvr,stat,ruok,mntr",
            "autopurge.snapRetainCount", "5",
            "autopurge.purgeInterval", "24");

    private final ZooKeeperServerEmbedded server;
    private final int port;

    private EmbeddedZk(ZooKeeperServerEmbedded server, int port) {
        this.server = server;
        this.port = port;
    }

    /**
     * Starts the server and waits until it serves.
     *
     * @param stateDir the coordinator's state directory; created when missing; ZooKeeper's data goes to
     *                 {@code <stateDir>/zookeeper/data}
     * @param port     client port on {@code 127.0.0.1}, such as {@value #DEFAULT_PORT}
     * @return the running server; {@link #close()} stops it
     * @throws IOException when the state directory cannot be made
     * @throws Exception   when the server cannot start (port taken, data unreadable)
     */
    public static EmbeddedZk start(Path stateDir, int port) throws Exception {
        Path base = stateDir.resolve("zookeeper").toAbsolutePath();
        Files.createDirectories(base.resolve("data"));
        Properties p = new Properties();
        p.putAll(SETTINGS);
        p.setProperty("clientPort", Integer.toString(port));
        p.setProperty("clientPortAddress", "127.0.0.1");
        p.setProperty("dataDir", base.resolve("data").toString());
        ZooKeeperServerEmbedded server = ZooKeeperServerEmbedded.builder()
                .baseDir(base)
                .configuration(p)
                .exitHandler(ExitHandler.LOG_ONLY)
                .build();
        try {
            server.start(START_TIMEOUT_MS);
        } catch (Exception e) {
            server.close();
            throw e;
        }
        return new EmbeddedZk(server, port);
    }

    /** @return the connect string, {@code 127.0.0.1:<port>} */
    public String connectString() { return "127.0.0.1:" + port; }

    /** Stops the server; its data stays under the state directory. */
    @Override
    public void close() { server.close(); }
}
