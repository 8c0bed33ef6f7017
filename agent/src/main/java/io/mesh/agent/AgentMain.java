package io.mesh.agent;

import io.mesh.cli.ListenAddress;
import io.mesh.cli.ProcessOptions;
import io.mesh.curator.MeshZk;
import io.mesh.curator.ZkAuth;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.RegistryAuth;
import io.mesh.ledger.Ledger;
import io.mesh.manifest.ByteSize;
import io.mesh.manifest.Durations;
import io.mesh.policy.Policy;
import io.mesh.window.HostContext;
import io.mesh.window.WindowJournal;
import io.mesh.window.WindowRunner;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowResult;
import io.mesh.wire.ZkPaths;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code mesh-agent}: the per-host agent's command line (SPEC.md, "Commands").
 *
 * <pre>
 * mesh-agent run    --host H [--zk CONNECT] [--zk-root /mesh] [--docker-host URI] [--docker-timeout 30s] [--docker-config DIR]
 *                   [--state-dir DIR] [--secrets-dir DIR]
 *                   [--reconcile-interval 60s] [--apply-lock-wait 2s] [--zk-auth-file F]
 *                   [--allow-host-path PREFIX]... [--allow-privileged] [--allow-host-pid] [--allow-host-network] [--allow-cap CAP]...
 *                   [--allow-device PATH]... [--allow-sysctl NAME|PREFIX.*]... [--allow-security-opt VALUE]...
 * mesh-agent window --host H --module M --schedule S [same common options]
 * </pre>
 *
 * Exit codes: 0 success (for {@code window}: the step exited 0); 1 the window or its step failed; 2 bad usage, or
 * ({@code run}) a {@code --host} that another live agent has; 3 ZooKeeper or Docker unreachable.
 */
@Command(name = "mesh-agent", mixinStandardHelpOptions = true, version = "mesh-agent " + AgentConfig.VERSION,
        description = "Applies this host's mesh modules to the local Docker engine and runs their windows.",
        subcommands = {AgentMain.Run.class, AgentMain.Window.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success", "1:the window or its step failed", "2:bad usage, or a --host that another live agent has",
                "3:ZooKeeper or Docker unreachable"})
public final class AgentMain implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(AgentMain.class);
    /** Exit code when ZooKeeper or Docker cannot be reached. */
    public static final int UNREACHABLE = 3;
    /** Exit code for bad input: bad usage, or a {@code --host} that has a live agent already. */
    public static final int BAD_INPUT = 2;

    /** Options every {@code mesh-agent} command takes. */
    public static final class Common {
        @Option(names = "--host", required = true, description = "This host's id, as manifests' hosts name it.")
        String host;
        @Option(names = "--zk", defaultValue = MeshZk.DEFAULT_CONNECT, description = "ZooKeeper connect string (default: ${DEFAULT-VALUE}).")
        String zk;
        @Option(names = "--docker-host", description = "Docker engine URI (default: DOCKER_HOST, else " + DockerEngine.DEFAULT_HOST + ").")
        String dockerHost;
        @Option(names = "--docker-timeout", defaultValue = "30s", paramLabel = "DURATION",
                description = "The longest a Docker call that dockerd answers at once may take before it fails (a hung dockerd "
                        + "must not hold a module lock for ever); a container's stop gets its stop timeout on top, a step's "
                        + "wait its schedule's timeout (default: ${DEFAULT-VALUE}).")
        String dockerTimeout;
        @Option(names = "--docker-config", paramLabel = "DIR",
                description = "Registry credentials for pulls: Docker's config.json in DIR, with auths (base64 user:password) and "
                        + "credHelpers/credsStore (docker-credential-NAME programs on the agent's PATH), read at each pull "
                        + "(default: DOCKER_CONFIG, else ~/.docker).")
        Path dockerConfig;
        @Option(names = "--state-dir", defaultValue = "/var/lib/mesh/agent", description = "Local state directory (default: ${DEFAULT-VALUE}).")
        Path stateDir;
        @Option(names = "--secrets-dir", defaultValue = "/etc/mesh/secrets", paramLabel = "DIR",
                description = "Where the files named by containers' secrets live; keep it readable by the agent only (default: ${DEFAULT-VALUE}).")
        Path secretsDir;
        @Option(names = "--window-lock-wait", defaultValue = "10m", description = "How long a window waits for the module lock (default: ${DEFAULT-VALUE}).")
        String windowLockWait;
        @Mixin
        ProcessOptions process;
        @Option(names = "--allow-host-path", paramLabel = "PREFIX",
                description = "Allow containers and steps to bind host paths under PREFIX (repeatable). Default: none, named volumes only.")
        List<String> allowHostPath = new ArrayList<>();
        @Option(names = "--allow-privileged", description = "Allow containers with privileged: true (default: refused).")
        boolean allowPrivileged;
        @Option(names = "--allow-host-pid", description = "Allow containers with pid: host (default: refused).")
        boolean allowHostPid;
        @Option(names = "--allow-host-network",
                description = "Allow containers and steps on the host's network (network: host, also a container's default): "
                        + "they reach whatever listens on the host's loopback, ZooKeeper and the coordinator among them (default: refused).")
        boolean allowHostNetwork;
        @Option(names = "--allow-cap", paramLabel = "CAP",
                description = "Allow containers to cap-add CAP, such as NET_ADMIN (repeatable). Default: none.")
        List<String> allowCap = new ArrayList<>();
        @Option(names = "--allow-device", paramLabel = "PATH",
                description = "Allow containers to map the host device PATH, such as /dev/fuse (repeatable). Default: none.")
        List<String> allowDevice = new ArrayList<>();
        @Option(names = "--allow-sysctl", paramLabel = "NAME",
                description = "Allow containers to set the kernel parameter NAME, such as net.core.somaxconn, or every one under a "
                        + "prefix written PREFIX.*, such as 'net.ipv4.*' (repeatable). Default: none.")
        List<String> allowSysctl = new ArrayList<>();
        @Option(names = "--allow-security-opt", paramLabel = "VALUE",
                description = "Allow containers the security-opt VALUE, exactly as written, such as no-new-privileges:true or "
                        + "seccomp=unconfined (repeatable). Default: none.")
        List<String> allowSecurityOpt = new ArrayList<>();

        /**
         * @param reconcile     the daemon's reconcile interval
         * @param applyLockWait how long an apply waits for the module lock (the daemon's {@code --apply-lock-wait})
         */
        AgentConfig config(Duration reconcile, Duration applyLockWait) {
            process.selectLogFormat();
            return new AgentConfig(ZkPaths.checkHost(host), process.paths(), stateDir, reconcile,
                    applyLockWait, Durations.parse(windowLockWait),
                    Policy.builder().allowHostPaths(allowHostPath).allowPrivileged(allowPrivileged).allowHostPid(allowHostPid)
                            .allowHostNetwork(allowHostNetwork)
                            .allowCaps(allowCap).allowDevices(allowDevice).allowSysctls(allowSysctl)
                            .allowSecurityOpts(allowSecurityOpt).build(), secretsDir);
        }

        /**
         * @return the Docker engine of {@code --docker-host}, its calls bounded by {@code --docker-timeout}, its pulls
         *         with the credentials of {@code --docker-config}
         * @throws IllegalArgumentException when {@code --docker-config} is no directory or its config.json cannot be read
         */
        DockerEngine docker() {
            if (dockerConfig != null && !Files.isDirectory(dockerConfig)) {
                throw new IllegalArgumentException("--docker-config " + dockerConfig + " is not a directory: give the directory"
                        + " that holds Docker's " + RegistryAuth.CONFIG_FILE);
            }
            RegistryAuth auth = RegistryAuth.of(dockerConfig);
            auth.check(); // a broken config.json is said at start, not at the first pull
            return new DockerEngine(dockerHost, Durations.parse(dockerTimeout), auth);
        }

        /**
         * @return a client as {@code MeshZk} makes it, with this process's credentials, the layout secured
         * @throws IllegalArgumentException when the credentials are another host's (decision 19: a host's agent
         *                                  authenticates as that host), or {@code --zk-tls} is not usable
         */
        CuratorFramework connect(AgentConfig config) throws Exception {
            ZkAuth auth = process.zkAuth();
            ProcessOptions.warnWhenOpen(auth, LOG);
            if (auth != null && auth.host().isPresent() && !auth.host().get().equals(config.host())) {
                throw new IllegalArgumentException("--host " + config.host() + " but the ZooKeeper credentials are host "
                        + auth.host().get() + "'s (user " + auth.user() + "): give the file mesh-coordinator credentials "
                        + config.host() + " wrote");
            }
            return MeshZk.connect(zk, Duration.ofSeconds(30), auth, config.paths(), process.zkTls());
        }
    }

    @Override
    public void run() {
        CommandLine.usage(this, System.out);
    }

    /** {@code mesh-agent run}: the daemon. */
    @Command(name = "run", mixinStandardHelpOptions = true,
            description = "Run the agent daemon: watch desired state, apply, reconcile, run cron windows.")
    static final class Run implements Callable<Integer> {
        @Mixin Common common;
        @Option(names = "--reconcile-interval", defaultValue = "60s", description = "Apply every module this often even without a push (default: ${DEFAULT-VALUE}).")
        String reconcileInterval;
        @Option(names = "--apply-lock-wait", defaultValue = "2s", description = "How long an apply waits for the module lock before reporting deferred (default: ${DEFAULT-VALUE}).")
        String applyLockWait;
        @Option(names = "--metrics-listen", paramLabel = "HOST:PORT",
                description = "Serve Prometheus metrics at http://HOST:PORT/metrics, such as 127.0.0.1:9464 (default: not served).")
        String metricsListen;
        @Option(names = "--request-ttl", defaultValue = "10m",
                description = "How long a window request (mesh window run) may wait to be picked up, and a finished one is kept (default: ${DEFAULT-VALUE}).")
        String requestTtl;
        @Option(names = "--ledger-max-age", defaultValue = "30d", paramLabel = "DURATION",
                description = "Delete ledger files older than this (default: ${DEFAULT-VALUE}; decision 28).")
        String ledgerMaxAge;
        @Option(names = "--ledger-max-size", defaultValue = "256MiB", paramLabel = "SIZE",
                description = "Delete the oldest ledger files while the ledger is larger than this (default: ${DEFAULT-VALUE}).")
        String ledgerMaxSize;

        /** @return {@code --ledger-max-age}: whole days ({@code 30d}), or a duration as {@link Durations} reads it */
        static Duration days(String text) {
            if (text != null && text.matches("\\d{1,5}d")) {
                Duration d = Duration.ofDays(Long.parseLong(text.substring(0, text.length() - 1)));
                if (d.isZero()) throw new IllegalArgumentException("--ledger-max-age " + text + " is zero: give a duration above 0, such as 30d");
                return d;
            }
            return Durations.parse(text);
        }

        @Override
        public Integer call() throws Exception {
            AgentConfig config = common.config(Durations.parse(reconcileInterval),
                    Durations.parse(applyLockWait));
            DockerEngine docker = common.docker();
            docker.ping();
            InetSocketAddress metricsAddress = metricsListen == null ? null : ListenAddress.parse("--metrics-listen", metricsListen);
            Duration ttl = Durations.parse(requestTtl);
            Duration ledgerAge = days(ledgerMaxAge);
            long ledgerSize = ByteSize.parse(ledgerMaxSize);
            CuratorFramework client = common.connect(config);
            ProcessRef me = ProcessRef.current("mesh-agent run");
            AgentDaemon daemon = new AgentDaemon(config, client, docker, me);
            daemon.ledgerRetention(ledgerAge, ledgerSize);
            try {
                daemon.claimHost(); // before anything is written or served: one agent per host
            } catch (AgentNode.HostTakenException e) {
                System.err.println("mesh-agent: " + e.getMessage());
                daemon.ledger().close();
                client.close();
                docker.close();
                return BAD_INPUT;
            }
            // Another agent took the host while this one had lost its session: stop (the shutdown hook closes all).
            daemon.onHostTaken(() -> new Thread(() -> System.exit(BAD_INPUT), "mesh-host-taken").start());
            AgentMetrics metrics = new AgentMetrics(client, config.paths(), config.host());
            metrics.start();
            daemon.ledger().onViolation((module, kind) -> metrics.auditViolation(module, kind));
            if (metricsAddress != null) {
                System.err.println("mesh-agent: metrics at " + metrics.serve(metricsAddress) + "/metrics");
            }
            WindowRequests requests = new WindowRequests(client, config.paths(), config.host(), me, daemon::runWindow, ttl, daemon.timer());
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                daemon.close();
                requests.close();
                metrics.close();
                client.close();
                stopped.countDown();
            }, "mesh-shutdown"));
            daemon.start();
            requests.start();
            stopped.await();
            return 0;
        }
    }

    /**
     * {@code mesh-agent window}: one window now, in this process. Told to stop (SIGTERM, SIGINT) it cuts the window short
     * as the daemon does ({@link WindowRunner#cutShort}; docs/decisions/0026-agent-stop.md): the step is killed, the held
     * containers are started again, the result ({@code failed}, step cut short) is printed and reported, and the process
     * exits (143 after a SIGTERM) once its ZooKeeper client is closed; at most {@link AgentDaemon#SHUTDOWN_BUDGET} after.
     */
    @Command(name = "window", mixinStandardHelpOptions = true,
            description = "Run one window of a module's schedule now, in this process; exit 0 when the step succeeded. "
                    + "SIGTERM cuts the step short and gives the held containers back before the process exits.")
    static final class Window implements Callable<Integer> {
        @Mixin Common common;
        @Option(names = "--module", required = true, description = "Module name.")
        String module;
        @Option(names = "--schedule", required = true, description = "Schedule name within the module.")
        String schedule;

        @Override
        public Integer call() throws Exception {
            AgentConfig config = common.config(Duration.ofSeconds(60), Duration.ofSeconds(2)); // a window makes no apply
            try (DockerEngine docker = common.docker();
                 CuratorFramework client = common.connect(config);
                 Ledger ledger = Ledger.open(config.stateDir()).engineClock(docker.events()::engineTime)) {
                // its calls, beside the daemon's, stamped by the engine's clock (decision 28)
                docker.ping();
                MeshStore store = new MeshStore(client, config.paths());
                // A typo in --module or --schedule is bad usage: say so, write nothing.
                var desired = store.desired(module);
                if (desired == null || !desired.spec().schedules().containsKey(schedule)) {
                    System.err.println("mesh-agent window: " + (desired == null
                            ? "module '" + module + "' has no desired state under " + config.paths().desired()
                            : "module '" + module + "' has no schedule '" + schedule + "'; it has " + desired.spec().schedules().keySet()));
                    return 2;
                }
                WindowRunner runner = new WindowRunner(new HostContext(store, docker, config.host(),
                        ProcessRef.current("mesh-agent window"), new WindowJournal(config.stateDir()), config.policy(),
                        config.secrets(), ledger));
                stopping = new Thread(() -> cutShortUntilDone(runner), "mesh-window-stop");
                Runtime.getRuntime().addShutdownHook(stopping);
                WindowResult r = runner.run(module, schedule, config.windowLockWait());
                runner.closeEvents(5_000); // its events for webhooks, before the client closes (decision 34)
                System.out.println(Json.text(r));
                return r.succeeded() ? 0 : 1;
            } finally {
                done.countDown(); // the client is closed: the lock child and the nodes are gone with its session
                if (stopping != null) {
                    try {
                        Runtime.getRuntime().removeShutdownHook(stopping);
                    } catch (IllegalStateException shuttingDown) {
                        // the hook runs: it returns now
                    }
                }
            }
        }

        /** Counted down once the window ended and this process's Docker and ZooKeeper clients are closed. */
        private final CountDownLatch done = new CountDownLatch(1);
        /** The shutdown hook that cuts the window short, once the window runs. */
        private Thread stopping;

        /**
         * The shutdown hook: the window is cut short (again every second: a step started just as the first kill came is
         * killed by a later one), and the JVM exits once the window has given its containers back and its result is
         * printed and reported; at most {@link AgentDaemon#SHUTDOWN_BUDGET} from the signal, after which the window's
         * journal lets the next mesh process of the host finish it. A second signal changes nothing.
         */
        private void cutShortUntilDone(WindowRunner runner) {
            if (done.getCount() == 0) return;
            LOG.warn("mesh-agent window: stopping: the window of {}/{} is cut short: its step is killed and its held containers "
                    + "are given back before this process exits; a second SIGTERM changes nothing", module, schedule);
            long end = System.nanoTime() + AgentDaemon.SHUTDOWN_BUDGET.toNanos();
            try {
                while (System.nanoTime() < end) {
                    runner.cutShort();
                    if (done.await(1, java.util.concurrent.TimeUnit.SECONDS)) return;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            LOG.error("mesh-agent window: the window of {}/{} has not given its containers back within {}s of the stop; exiting "
                    + "anyway: its journal under {} lets the next mesh process on this host finish it", module, schedule,
                    AgentDaemon.SHUTDOWN_BUDGET.toSeconds(), common.stateDir);
        }
    }

    /**
     * @param args command line
     */
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** @return the command line {@link #main} runs: an error is one line on stderr, exit 3 for an unreachable peer, else 1 */
    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new AgentMain());
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            cmd.getErr().println("mesh-agent: " + e.getMessage());
            return e instanceof IllegalStateException ? UNREACHABLE : 1;
        });
        return cl;
    }
}
