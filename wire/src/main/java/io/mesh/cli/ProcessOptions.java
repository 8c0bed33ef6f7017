package io.mesh.cli;

import io.mesh.curator.ZkAuth;
import io.mesh.curator.ZkTls;
import io.mesh.wire.ZkPaths;
import org.slf4j.Logger;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/**
 * The options of every mesh process that connects to ZooKeeper ({@code mesh-agent run} and {@code window},
 * {@code mesh-coordinator serve} and {@code credentials}): the root of mesh's znodes, its ZooKeeper credentials, its
 * TLS to ZooKeeper and its log format. A picocli
 * {@code @Mixin}; here, in the wire, because the agent and the coordinator share nothing else (SPEC.md, "Commands").
 * Their {@code --zk} stays their own: the agent's defaults to a server, the coordinator's to starting an embedded one.
 */
public final class ProcessOptions {
    @Option(names = "--zk-root", paramLabel = "PATH", defaultValue = ZkPaths.DEFAULT_ROOT,
            description = "Root znode of mesh (default: ${DEFAULT-VALUE}).")
    String zkRoot;

    @Option(names = "--zk-auth-file", paramLabel = "FILE",
            description = "File of this process's ZooKeeper digest credentials, user:password: the admin identity "
                    + "(coordinators), or a host's identity as mesh-coordinator credentials HOST writes it (host-HOST and a "
                    + ZkAuth.FLEET_USER + " line) (default: the " + ZkAuth.ENV + " environment variable). With them every node "
                    + "mesh creates is writable by its owner only and readable by anyone; without them ACLs are open (demos "
                    + "and tests only: see docs/security.md).")
    Path zkAuthFile;

    @Option(names = "--zk-tls", paramLabel = "FILE",
            description = "ZooKeeper's client TLS properties (zookeeper.client.secure=true, zookeeper.clientCnxnSocket="
                    + ZkTls.NETTY + ", zookeeper.ssl.keyStore.location, zookeeper.ssl.trustStore.location, their passwords "
                    + "and types PEM, PKCS12 or JKS), for an ensemble's secureClientPort (default: the file the "
                    + ZkTls.ENV + " environment variable names; neither means plain text). A property ZooKeeper does not know, "
                    + "or a store that does not open, refuses the start.")
    Path zkTlsFile;

    @Option(names = "--log-format", paramLabel = "text|json", defaultValue = "${env:" + LogFormat.ENV + ":-text}",
            description = "Log lines on stderr as text or as one JSON object per line (default: $MESH_LOG_FORMAT, else text).")
    String logFormat;

    /**
     * @return the layout under {@code --zk-root}
     * @throws IllegalArgumentException when {@code --zk-root} is not an absolute znode path
     */
    public ZkPaths paths() { return new ZkPaths(zkRoot); }

    /**
     * Switches this process's logging to {@code --log-format} ({@link LogFormat#select}).
     *
     * @throws IllegalArgumentException for another format than text or json
     */
    public void selectLogFormat() { LogFormat.select(logFormat); }

    /**
     * @return the credentials of {@code --zk-auth-file}, else of {@value ZkAuth#ENV}; {@code null} for none
     * @throws IllegalArgumentException when the file cannot be read, or it or the variable holds no valid credentials
     */
    public ZkAuth zkAuth() { return ZkAuth.resolve(zkAuthFile, System.getenv()); }

    /**
     * @return the ZooKeeper TLS settings of {@code --zk-tls}, else of the file {@value ZkTls#ENV} names; {@code null}
     *         for none (plain text)
     * @throws IllegalArgumentException naming the file and the fix when it cannot be read or is not usable
     *                                  ({@link ZkTls#read})
     */
    public ZkTls zkTls() { return ZkTls.resolve(zkTlsFile, System.getenv()); }

    /**
     * Warns on {@code log} that ZooKeeper's ACLs are open when {@code auth} is {@code null}.
     *
     * @param auth the process's credentials, from {@link #zkAuth()}
     * @param log  the command's logger
     */
    public static void warnWhenOpen(ZkAuth auth, Logger log) {
        if (auth != null) return;
        log.warn("no ZooKeeper credentials (--zk-auth-file or {}): ACLs are open, anyone who reaches ZooKeeper "
                + "can lock, hold and push; set them in production (docs/security.md)", ZkAuth.ENV);
    }
}
