package io.mesh.coordinator;

import io.mesh.cli.ListenAddress;
import io.mesh.cli.ProcessOptions;
import io.mesh.curator.MeshZk;
import io.mesh.curator.ZkAuth;
import io.mesh.curator.ZkTls;
import io.mesh.manifest.Durations;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * {@code mesh-coordinator}: the main class of {@code coordinator/target/mesh-coordinator.jar}.
 * {@code serve} runs the HTTP API in front of ZooKeeper (and, without {@code --zk}, an embedded ZooKeeper server)
 * until SIGTERM or SIGINT; {@code credentials HOST} issues a host's ZooKeeper identity ({@link HostCredentials}).
 */
@Command(name = "mesh-coordinator", mixinStandardHelpOptions = true, version = "mesh-coordinator " + io.mesh.wire.MeshVersion.CURRENT,
        description = "Takes pushes over HTTP and writes desired state into ZooKeeper; reports pushes per host.",
        subcommands = {CoordinatorMain.Serve.class, CoordinatorMain.Credentials.class, CommandLine.HelpCommand.class})
public final class CoordinatorMain implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorMain.class);

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /**
     * Runs the command line and exits the JVM with its code (0 ok, 1 runtime failure, 2 usage error).
     *
     * @param args command-line arguments, such as {@code serve --listen 127.0.0.1:7070}
     */
    public static void main(String[] args) {
        int code = new CommandLine(new CoordinatorMain()).execute(args);
        if (code != 0) System.exit(code);
    }

    /** Without a subcommand: prints the usage. */
    @Override
    public void run() { spec.commandLine().usage(spec.commandLine().getOut()); }

    /** {@code serve}: the coordinator daemon. */
    @Command(name = "serve", mixinStandardHelpOptions = true,
            description = {"Serves the mesh HTTP API (POST /v1/pushes, GET /v1/pushes/{push}, /v1/fleet, /v1/held, /v1/windows, /v1/locks, /v1/hosts, window requests, /healthz, /metrics, /v1/openapi.json) and the page at /.",
                    "Without --zk, first starts an embedded ZooKeeper server on 127.0.0.1:<--embedded-zk-port> with its data under --state-dir, and prints its connect string.",
                    "Stops cleanly on SIGTERM or SIGINT."})
    public static final class Serve extends PrintingCommand {
        @Option(names = "--zk", paramLabel = "CONNECT",
                description = "ZooKeeper connect string, such as 127.0.0.1:2181 or a:2181,b:2181,c:2181. Default: start an embedded server.")
        String zk;

        @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:7070",
                description = "Address of the HTTP API (default: ${DEFAULT-VALUE}); port 0 picks a free one.")
        String listen;

        @Option(names = "--state-dir", paramLabel = "DIR", defaultValue = "${env:MESH_STATE_DIR:-/var/lib/mesh/coordinator}",
                description = "Where the embedded ZooKeeper keeps its data, under DIR/zookeeper (default: $MESH_STATE_DIR, else /var/lib/mesh/coordinator; "
                        + "give a directory you can write to when not root, such as ./.mesh-state). Unused with --zk.")
        Path stateDir;

        @Option(names = "--embedded-zk-port", paramLabel = "PORT", defaultValue = "2181",
                description = "Client port of the embedded ZooKeeper on 127.0.0.1 (default: ${DEFAULT-VALUE}). Unused with --zk.")
        int embeddedZkPort;

        @Option(names = "--http-read-timeout", paramLabel = "DURATION", defaultValue = "30s",
                description = "A client connection that sends nothing for this long is closed, and so is one whose request line and "
                        + "headers have not all arrived this long after it opened (or after its previous answer); a request body "
                        + "not all arrived this long after its headers is answered 408 (default: ${DEFAULT-VALUE}; 1s to 10m).")
        String httpReadTimeout;

        @Option(names = "--http-max-connections", paramLabel = "N", defaultValue = "" + HttpLimits.DEFAULT_MAX_CONNECTIONS,
                description = "Client connections open at once (default: ${DEFAULT-VALUE}). At the limit no more are accepted (up to "
                        + HttpLimits.ACCEPT_QUEUE + " wait in the kernel's queue) and connections that sent nothing for 1s are closed "
                        + "to make room. Requests are served by " + HttpLimits.THREADS + " threads.")
        int httpMaxConnections;

        @Option(names = "--max-push-bytes", paramLabel = "BYTES", defaultValue = "" + HttpLimits.MAX_PUSH_BYTES,
                description = "Largest manifest POST /v1/pushes takes; a larger one is answered 413 naming this limit, before its "
                        + "body is read when its Content-Length says so (default and most: ${DEFAULT-VALUE}, since a push is one "
                        + "ZooKeeper transaction; least: " + HttpLimits.MIN_PUSH_BYTES + "). Split a larger manifest into several pushes.")
        int maxPushBytes;

        @Option(names = "--token-file", paramLabel = "FILE",
                description = "File of name:token lines: the bearer tokens POST /v1/pushes and every other write take "
                        + "(Authorization: Bearer <token>); the token's name is the push's by. A file of one plain token "
                        + "still works (by: token). Default: the MESH_TOKEN environment variable (one token); neither set "
                        + "means no token is required.")
        Path tokenFile;

        @Option(names = "--admin", paramLabel = "NAME",
                description = "A token name (a name:token line of --token-file; a file of one token, or MESH_TOKEN, is named "
                        + "token) whose token may also do what only an admin may: mesh release HOST CONTAINER --stale "
                        + "(repeatable). Default: none, so with a token configured no one may.")
        List<String> admins = new ArrayList<>();

        @Option(names = "--webhook-secret-file", paramLabel = "FILE",
                description = "File holding the shared secret of signed pushes: POST /v1/pushes is also accepted with "
                        + "X-Hub-Signature-256: sha256=<HMAC-SHA256 of the body> (the form Git forges send). Default: none.")
        Path webhookSecretFile;

        @Option(names = "--no-agent-expiry", paramLabel = "DURATION", defaultValue = "24h",
                description = "A push still pending on a host that has no agent this long after it was taken reads 'expired' "
                        + "there instead of 'pending' (it is then done, and no longer listed as pending); the target reads "
                        + "pending again once an agent of that host starts (default: ${DEFAULT-VALUE}; "
                        + "docs/decisions/0030-cancel-and-expire-pushes.md).")
        String noAgentExpiry;

        @Option(names = "--notify-config", paramLabel = "FILE",
                description = "YAML file of the webhooks this coordinator sends events to when it leads (webhooks: name, url, "
                        + "secret-file, events, format; docs/reference/notify.md). A mistake in it refuses the start. Give every "
                        + "coordinator the same file. Default: no webhooks (the leader deletes events as they come).")
        Path notifyConfig;

        @Option(names = "--tls-cert", paramLabel = "FILE",
                description = "PEM certificate of the coordinator (then the CAs between it and the root its clients trust): with "
                        + "--tls-key, --listen serves HTTPS only, and a plain HTTP request there is answered 400 naming https://. "
                        + "Its subjectAltName must hold the names and addresses clients use in their URLs. Default: plain HTTP.")
        Path tlsCert;

        @Option(names = "--tls-key", paramLabel = "FILE",
                description = "PEM private key of --tls-cert: unencrypted PKCS#8 (BEGIN PRIVATE KEY), RSA or EC, readable by this "
                        + "user only; openssl pkey -in KEY -out KEY.pkcs8 converts another (BEGIN RSA PRIVATE KEY, BEGIN EC PRIVATE "
                        + "KEY, an encrypted key).")
        Path tlsKey;

        @Option(names = "--tls-client-ca", paramLabel = "FILE",
                description = "PEM certificates of the CAs whose client certificates are accepted: every client must then present "
                        + "one (mutual TLS; mesh --cert/--key). Needs --tls-cert. Default: no client certificate asked for.")
        Path tlsClientCa;

        @Mixin
        ProcessOptions process;

        private final CountDownLatch stopped = new CountDownLatch(1);

        /**
         * Starts everything, prints the connect string and URL, and blocks until the JVM is asked to stop.
         *
         * @return 0 after a clean stop; 1 when something could not start
         */
        @Override
        public Integer call() throws Exception {
            PrintWriter out = out();
            PrintWriter err = err();
            ZkPaths paths;
            InetSocketAddress address;
            BearerToken token;
            WebhookSecret webhook;
            ZkAuth zkAuth;
            ZkTls zkTls;
            HttpLimits limits;
            Duration expiry;
            NotifyConfig notify;
            ServerTls tls;
            try {
                process.selectLogFormat();
                paths = process.paths();
                address = parseListen(listen);
                token = loadToken();
                if (!admins.isEmpty()) {
                    if (token == null) throw new IllegalArgumentException("--admin names a token: give --token-file FILE (or MESH_TOKEN) too");
                    token = token.withAdmins(admins);
                }
                webhook = loadWebhookSecret();
                notify = notifyConfig == null ? NotifyConfig.NONE : NotifyConfig.read(notifyConfig);
                zkAuth = process.zkAuth();
                zkTls = process.zkTls();
                if (tlsClientCa != null && tlsCert == null) {
                    throw new IllegalArgumentException("--tls-client-ca needs --tls-cert and --tls-key: client certificates are "
                            + "asked for over HTTPS only");
                }
                tls = tlsCert == null && tlsKey == null ? null : ServerTls.read(tlsCert, tlsKey, tlsClientCa, java.time.Clock.systemUTC());
                if (zkTls != null && (zk == null || zk.isBlank())) {
                    throw new IllegalArgumentException("--zk-tls needs --zk: the embedded ZooKeeper serves plain text on 127.0.0.1 "
                            + "only; give the ensemble's secureClientPort as --zk HOST:PORT");
                }
                Duration readTimeout;
                try {
                    readTimeout = Durations.parse(httpReadTimeout);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("--http-read-timeout " + e.getMessage());
                }
                limits = new HttpLimits(readTimeout, httpMaxConnections, maxPushBytes);
                try {
                    expiry = Durations.parse(noAgentExpiry);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("--no-agent-expiry " + e.getMessage());
                }
            } catch (IllegalArgumentException e) {
                err.println("mesh-coordinator: " + e.getMessage());
                err.flush();
                return CommandLine.ExitCode.USAGE;
            }
            EmbeddedZk embedded = null;
            CuratorFramework client = null;
            HttpApi api = null;
            Notifier notifier = null;
            try {
                String connect = zk;
                if (connect == null || connect.isBlank()) {
                    embedded = EmbeddedZk.start(stateDir, embeddedZkPort);
                    connect = embedded.connectString();
                    out.println("embedded ZooKeeper: " + connect + " (data in " + stateDir.resolve("zookeeper").toAbsolutePath() + ")");
                    out.flush();
                }
                ProcessOptions.warnWhenOpen(zkAuth, LOG);
                if (tls == null && !address.getAddress().isLoopbackAddress()) {
                    LOG.warn("no --tls-cert/--tls-key: the HTTP API on {} is plain text, tokens and manifests cross the network "
                            + "readable (docs/security.md)", address);
                }
                if (token == null && webhook == null) {
                    LOG.warn("no push credentials (--token-file, {} or --webhook-secret-file): anyone who reaches {} can push",
                            BearerToken.ENV, address);
                }
                client = MeshZk.connect(connect, Duration.ofSeconds(30), zkAuth, paths, zkTls);
                api = new HttpApi(client, paths, address, token, webhook, limits, expiry, tls);
                notifier = new Notifier(client, paths, notify);
                notifier.start();
                api.moreMetrics(notifier::metrics);
                api.start();
                out.println("mesh coordinator listening on " + api.uri() + " (ZooKeeper " + connect + (zkTls == null ? "" : " over TLS")
                        + ", root " + paths.root()
                        + (zkAuth == null ? ", open ZooKeeper ACLs" : ", ZooKeeper user " + zkAuth.user())
                        + (token == null && webhook == null ? ", no token" : ", POST /v1/pushes needs "
                        + (token != null && webhook != null ? "a token or a webhook signature" : token != null ? "a token" : "a webhook signature"))
                        + (token != null && !token.admins().isEmpty() ? ", admin tokens " + token.admins() : "")
                        + (tls == null ? "" : tls.clientCertificates() ? ", client certificates required" : "")
                        + (notify.webhooks().isEmpty() ? "" : ", webhooks " + notify.webhooks().stream().map(Webhook::name).toList()) + ")");
                out.flush();
            } catch (Exception e) {
                err.println("mesh-coordinator: cannot start: " + e.getMessage());
                err.flush();
                LOG.debug("start failed", e);
                closeAll(api, notifier, client, embedded);
                return 1;
            }
            final HttpApi a = api;
            final Notifier n = notifier;
            final CuratorFramework c = client;
            final EmbeddedZk z = embedded;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                LOG.info("stopping: HTTP API, ZooKeeper client{}", z == null ? "" : ", embedded ZooKeeper");
                closeAll(a, n, c, z);
                stopped.countDown();
            }, "mesh-coordinator-shutdown"));
            stopped.await();
            return 0;
        }

        private BearerToken loadToken() {
            try {
                if (tokenFile != null) return BearerToken.fromFile(tokenFile);
            } catch (IOException e) {
                throw new IllegalArgumentException("--token-file " + tokenFile + " cannot be read: " + e.getMessage());
            }
            String env = System.getenv(BearerToken.ENV);
            return env == null || env.isBlank() ? null : BearerToken.of(env);
        }

        private WebhookSecret loadWebhookSecret() {
            if (webhookSecretFile == null) return null;
            try {
                return WebhookSecret.fromFile(webhookSecretFile);
            } catch (IOException e) {
                throw new IllegalArgumentException("--webhook-secret-file " + webhookSecretFile + " cannot be read: " + e.getMessage());
            }
        }

        private static void closeAll(HttpApi api, Notifier notifier, CuratorFramework client, EmbeddedZk embedded) {
            if (api != null) try { api.close(1); } catch (RuntimeException e) { LOG.warn("closing HTTP API: {}", e.toString()); }
            if (notifier != null) try { notifier.close(); } catch (RuntimeException e) { LOG.warn("closing the webhooks' sender: {}", e.toString()); }
            if (client != null) try { client.close(); } catch (RuntimeException e) { LOG.warn("closing ZooKeeper client: {}", e.toString()); }
            if (embedded != null) try { embedded.close(); } catch (RuntimeException e) { LOG.warn("closing embedded ZooKeeper: {}", e.toString()); }
        }
    }

    /** {@code credentials HOST}: a host's ZooKeeper identity (SPEC.md, "Identities"; decision 19). */
    @Command(name = "credentials", mixinStandardHelpOptions = true,
            description = {"Issues host HOST's ZooKeeper identity: writes FILE (mode 0600) for that host's mesh-agent --zk-auth-file, "
                    + "registers it under /mesh/identities, makes the host's own nodes (/mesh/reports|held|windows|requests/HOST) "
                    + "with ACLs that let that host alone write them, and prints what it did.",
                    "Runs with the admin identity (--zk-auth-file, the coordinators' file). Issuing again replaces the identity."})
    public static final class Credentials extends PrintingCommand {
        @CommandLine.Parameters(index = "0", paramLabel = "HOST", description = "The host id, as its agent's --host.")
        String host;

        @Option(names = "--out", paramLabel = "FILE", required = true, description = "The credentials file to write (mode 0600).")
        Path out;

        @Option(names = "--force", description = "Replace --out when it exists.")
        boolean force;

        @Option(names = "--zk", paramLabel = "CONNECT", defaultValue = "${env:MESH_ZK:-" + MeshZk.DEFAULT_CONNECT + "}",
                description = "ZooKeeper connect string (default: $MESH_ZK, else ${DEFAULT-VALUE}).")
        String zk;

        @Mixin
        ProcessOptions process;

        /** @return 0 when issued; 2 for bad usage (nothing written); 1 when ZooKeeper or the file system failed */
        @Override
        public Integer call() {
            PrintWriter out = out();
            PrintWriter err = err();
            ZkPaths paths;
            ZkAuth admin;
            ZkTls tls;
            try {
                process.selectLogFormat();
                paths = process.paths();
                ZkPaths.checkHost(host);
                admin = process.zkAuth();
                if (admin == null) throw new IllegalArgumentException("--zk-auth-file ADMIN_FILE is required: the coordinators' "
                        + "ZooKeeper identity (user:password), with which host identities are issued");
                if (!admin.admin()) throw new IllegalArgumentException("--zk-auth-file must hold the admin identity (the coordinators' "
                        + "user:password), not host " + admin.host().orElseThrow() + "'s");
                tls = process.zkTls();
            } catch (IllegalArgumentException e) {
                err.println("mesh-coordinator credentials: " + e.getMessage());
                err.flush();
                return CommandLine.ExitCode.USAGE;
            }
            try (CuratorFramework client = MeshZk.connect(zk, Duration.ofSeconds(30), admin, paths, tls)) {
                for (String line : new HostCredentials(client, paths, admin, java.time.Clock.systemUTC()).issue(host, this.out, force)) {
                    out.println(line);
                }
                out.flush();
                return 0;
            } catch (IllegalArgumentException e) {
                err.println("mesh-coordinator credentials: " + e.getMessage());
                err.flush();
                return CommandLine.ExitCode.USAGE;
            } catch (Exception e) {
                err.println("mesh-coordinator credentials: " + e.getMessage());
                err.flush();
                LOG.debug("credentials failed", e);
                return 1;
            }
        }
    }

    /**
     * @param listen {@code HOST:PORT} such as {@code 127.0.0.1:7070}, or {@code [::1]:7070}
     * @return the socket address
     * @throws IllegalArgumentException naming the expected form when it is not one
     */
    public static InetSocketAddress parseListen(String listen) {
        return ListenAddress.parse("--listen", listen);
    }
}
