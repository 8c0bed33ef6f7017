package io.mesh.fleet;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.httpclient5.ApacheDockerHttpClient;
import io.mesh.client.CoordinatorClient;
import io.mesh.curator.MeshZk;
import io.mesh.docker.Labels;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * The fleet on one machine ({@code deploy/dev/fleet.sh}, SPEC "Fleet on one machine") for integration tests: a
 * JUnit 5 extension that brings a {@value #SIZE}-host fleet up once per JVM and gives tests its parts. Use it as
 * {@code @ExtendWith(Fleet.class)} and take a {@code Fleet} parameter in a test or lifecycle method.
 *
 * <p>{@code fleet.sh up} is idempotent: the first class that needs the fleet starts what is missing (a fleet already
 * up is used as it is, after its agents and coordinators are restarted on this checkout's jars if they run others).
 * When the run ends (JUnit closes its root store) the fleet is stopped with {@code fleet.sh down}, but only when this
 * JVM started it: a fleet an operator brought up before stays up. {@code -Dmesh.fleet.keep=true} (or
 * {@code MESH_FLEET_KEEP=1}) keeps it up in any case, for looking at it after a failure.
 *
 * <p>Everything here is real: each engine is reached through its own Docker socket (docker-java, not mesh's
 * {@code DockerEngine}, so that a test's evidence does not go through the code under test), ZooKeeper through the
 * ensemble, the coordinators over HTTP. {@code fleet.sh}'s output goes to {@code target/fleet-sh.log}.
 */
public final class Fleet implements BeforeAllCallback, ParameterResolver {
    /** Hosts the tests' fleet has: {@code fleet-1} .. {@code fleet-3}. */
    public static final int SIZE = 3;
    /** Where fleet.sh keeps its env, pid files and logs. */
    public static final Path RUN = Path.of("/run/mesh-fleet");
    /** How long one fleet.sh command may take ({@code up} from nothing takes about 25 s on 2 cores). */
    static final Duration SCRIPT_TIMEOUT = Duration.ofMinutes(5);

    private static Fleet shared;

    private final Path repo;
    private final boolean startedHere;
    private final Map<String, String> env;
    private final List<String> hosts;
    private final Map<String, DockerClient> engines = new ConcurrentHashMap<>();
    private final ZkPaths paths = new ZkPaths(ZkPaths.DEFAULT_ROOT);
    private CuratorFramework zk;

    /** For JUnit: the instance tests see is {@link #get()}'s. */
    public Fleet() {
        repo = null;
        startedHere = false;
        env = Map.of();
        hosts = List.of();
    }

    private Fleet(Path repo, boolean startedHere, Map<String, String> env) {
        this.repo = repo;
        this.startedHere = startedHere;
        this.env = env;
        this.hosts = List.of(env.get("MESH_FLEET_HOSTS").split(" "));
    }

    /**
     * @return the fleet of this JVM, brought up ({@code fleet.sh up 3}) on first use
     * @throws IOException when fleet.sh fails or does not finish within {@link #SCRIPT_TIMEOUT}
     */
    public static synchronized Fleet get() throws IOException, InterruptedException {
        if (shared == null) {
            Path repo = findRepo();
            boolean wasUp = Files.exists(RUN.resolve("env"));
            run(repo, "up", String.valueOf(SIZE));
            shared = new Fleet(repo, !wasUp, readEnv(RUN.resolve("env")));
        }
        return shared;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        Fleet fleet = get();
        // Closed by JUnit once every test of the run is done: the fleet goes down with the run that brought it up.
        context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
                .getOrComputeIfAbsent(Fleet.class.getName() + ".down", k -> (AutoCloseable) fleet::close);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == Fleet.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        try {
            return get();
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("the fleet is not up: " + e.getMessage(), e);
        }
    }

    // -----------------------------------------------------------------------------------------------------------
    // What the fleet is.

    /** @return the host ids, {@code fleet-1} .. {@code fleet-N} ({@code MESH_FLEET_HOSTS}) */
    public List<String> hosts() { return hosts; }

    /** @return every line of {@code /run/mesh-fleet/env}, name to value */
    public Map<String, String> env() { return env; }

    /** @return ZooKeeper's connect string ({@code MESH_ZK}) */
    public String zkConnect() { return env.get("MESH_ZK"); }

    /** @return the coordinators' URLs, in order ({@code MESH_COORDINATOR}) */
    public List<URI> coordinators() { return Arrays.stream(env.get("MESH_COORDINATOR").split(",")).map(URI::create).toList(); }

    /** @return the Docker socket of a host's engine, such as {@code unix:///run/mesh-fleet/fleet-1/docker.sock} */
    public String dockerHost(String host) { return required("MESH_FLEET_DOCKER_" + host.replace('-', '_')); }

    /** @return the agent's {@code --state-dir} of a host */
    public Path stateDir(String host) { return Path.of(required("MESH_FLEET_STATE_" + host.replace('-', '_'))); }

    /** @return the repository fleet.sh and the launchers are run from */
    public Path repo() { return repo; }

    /**
     * @param host      a fleet host
     * @param container a container's Docker name or id on that host's engine
     * @return its environment, as {@code docker inspect} gives it; empty when it does not exist
     */
    public List<String> env(String host, String container) {
        try {
            String[] env = docker(host).inspectContainerCmd(container).exec().getConfig().getEnv();
            return env == null ? List.of() : List.of(env);
        } catch (RuntimeException e) {
            return List.of();
        }
    }

    /** @return file {@code name} in {@code dir}, written with {@code text} */
    public static Path write(Path dir, String name, String text) throws java.io.IOException {
        Path f = dir.resolve(name);
        java.nio.file.Files.writeString(f, text);
        return f;
    }

    /** @return a docker-java client of that host's engine (one per host, kept for the run) */
    public DockerClient docker(String host) {
        return engines.computeIfAbsent(host, h -> {
            DefaultDockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(dockerHost(h)).build();
            ApacheDockerHttpClient http = new ApacheDockerHttpClient.Builder().dockerHost(config.getDockerHost())
                    .connectionTimeout(Duration.ofSeconds(10)).responseTimeout(Duration.ofSeconds(60)).build();
            return DockerClientImpl.getInstance(config, http);
        });
    }

    /** @return a ZooKeeper client of the fleet's ensemble (connected on first use, closed with the fleet) */
    public synchronized CuratorFramework zk() throws InterruptedException {
        if (zk == null) zk = MeshZk.connect(zkConnect(), Duration.ofSeconds(30));
        return zk;
    }

    /** @return mesh's ZooKeeper paths under the default root */
    public ZkPaths paths() { return paths; }

    /** @return a {@code mesh} client of every coordinator, in order */
    public CoordinatorClient client() { return new CoordinatorClient(coordinators(), null); }

    /** @return the containers of a module on a host's engine, running or not (by its {@code mesh.module} label) */
    public List<Container> containers(String host, String module) {
        return docker(host).listContainersCmd().withShowAll(true).withLabelFilter(Map.of(Labels.MODULE, module)).exec();
    }

    // -----------------------------------------------------------------------------------------------------------
    // Pid files (fleet.sh's header): what a nemesis signals.

    /** @return pid file of a host's dockerd */
    public static Path dockerdPidFile(int host) { return RUN.resolve("fleet-" + host).resolve("dockerd.pid"); }

    /** @return pid file of a host's agent */
    public static Path agentPidFile(int host) { return RUN.resolve("fleet-" + host).resolve("agent.pid"); }

    /** @return pid file of ZooKeeper server {@code j} (1..3) */
    public static Path zkPidFile(int j) { return RUN.resolve("zk-" + j + ".pid"); }

    /** @return pid file of coordinator {@code k} (1..2) */
    public static Path coordinatorPidFile(int k) { return RUN.resolve("coordinator-" + k + ".pid"); }

    /** @return the pid in a pid file */
    public static long pid(Path pidFile) throws IOException { return Long.parseLong(Files.readString(pidFile).strip()); }

    // -----------------------------------------------------------------------------------------------------------
    // Acting on it (fleet.sh commands, bounded).

    /** {@code fleet.sh up 3}: starts whatever is missing (a stopped coordinator, agent, engine or ZooKeeper server). */
    public void up() throws IOException, InterruptedException { fleetSh("up", String.valueOf(SIZE)); }

    /** {@code fleet.sh stop-coordinator K --kill}: SIGKILL, as a crash. */
    public void killCoordinator(int k) throws IOException, InterruptedException { fleetSh("stop-coordinator", String.valueOf(k), "--kill"); }

    /** {@code fleet.sh start-coordinator K}: back, and healthy. */
    public void startCoordinator(int k) throws IOException, InterruptedException { fleetSh("start-coordinator", String.valueOf(k)); }

    /** {@code fleet.sh stop-agent I} (SIGTERM; with {@code kill}, SIGKILL). */
    public void stopAgent(int host, boolean kill) throws IOException, InterruptedException {
        if (kill) fleetSh("stop-agent", String.valueOf(host), "--kill");
        else fleetSh("stop-agent", String.valueOf(host));
    }

    /** {@code fleet.sh start-agent I}: back, with its agent node. */
    public void startAgent(int host) throws IOException, InterruptedException { fleetSh("start-agent", String.valueOf(host)); }

    /** {@code fleet.sh restart-engine I}: that host's dockerd stopped (its containers with it) and started again. */
    public void restartEngine(int host) throws IOException, InterruptedException { fleetSh("restart-engine", String.valueOf(host)); }

    /**
     * Runs {@code deploy/dev/fleet.sh ARGS}, its output appended to {@code target/fleet-sh.log}.
     *
     * @return its output (stdout and stderr)
     * @throws IOException when it fails or runs past {@link #SCRIPT_TIMEOUT}
     */
    public String fleetSh(String... args) throws IOException, InterruptedException {
        return run(repo, args);
    }

    /**
     * Takes a module away from the whole fleet, so that a rerun starts clean (there is no delete push): its desired
     * node goes (the agents remove its containers), then whatever container of it is left on an engine is removed
     * through that engine's API, and its reports, lock, rollout and history nodes go.
     */
    public void removeModule(String module) throws Exception {
        CuratorFramework c = zk();
        deleteTree(c, paths.desired(module));
        // An agent leaves a module whose desired node is gone alone (no apply runs for it): once no apply or window
        // of it holds its lock on any host, the engines' APIs remove its containers. (Waiting for the agents to
        // remove them cost 30 s per module.)
        try {
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> {
                for (String h : hosts) {
                    if (c.checkExists().forPath(paths.lock(module, h)) != null && !c.getChildren().forPath(paths.lock(module, h)).isEmpty()) return false;
                }
                return true;
            });
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            // a lock held by a process that is gone: its session ends it; remove the containers all the same
        }
        for (String h : hosts) {
            for (Container ct : containers(h, module)) {
                try {
                    docker(h).removeContainerCmd(ct.getId()).withForce(true).withRemoveVolumes(true).exec();
                } catch (com.github.dockerjava.api.exception.NotFoundException gone) {
                    // removed meanwhile
                }
            }
            removeNetworks(h, module);
            deleteTree(c, paths.report(h, module));
        }
        // Best effort: an agent may still be deleting its lock parent itself.
        for (String p : List.of(paths.locks() + "/" + module, paths.root() + "/rollouts/" + module, paths.root() + "/history/" + module)) {
            try {
                deleteTree(c, p);
            } catch (org.apache.zookeeper.KeeperException e) {
                System.out.println("fleet: " + p + " not deleted: " + e);
            }
        }
    }

    /** Removes the module's networks on a host's engine (decision 31: labelled {@code mesh.module}); best effort. */
    public void removeNetworks(String host, String module) {
        for (var n : docker(host).listNetworksCmd().withFilter("label", List.of(io.mesh.docker.Labels.MODULE + "=" + module)).exec()) {
            try {
                docker(host).removeNetworkCmd(n.getId()).exec();
            } catch (RuntimeException inUse) {
                System.out.println("fleet: network " + n.getName() + " on " + host + " not removed: " + inUse.getMessage());
            }
        }
    }

    private static void deleteTree(CuratorFramework c, String path) throws Exception {
        try {
            c.delete().deletingChildrenIfNeeded().forPath(path);
        } catch (org.apache.zookeeper.KeeperException.NoNodeException gone) {
            // not there
        }
    }

    /** Closes the clients; brings the fleet down when this JVM brought it up (and it is not kept). */
    void close() throws Exception {
        for (DockerClient d : engines.values()) d.close();
        engines.clear();
        synchronized (this) {
            if (zk != null) zk.close();
            zk = null;
        }
        boolean keep = Boolean.getBoolean("mesh.fleet.keep") || "1".equals(System.getenv("MESH_FLEET_KEEP"));
        if (startedHere && !keep) run(repo, "down");
        synchronized (Fleet.class) {
            if (shared == this) shared = null;
        }
    }

    // -----------------------------------------------------------------------------------------------------------

    private String required(String name) {
        String v = env.get(name);
        if (v == null) throw new IllegalArgumentException("no " + name + " in " + RUN.resolve("env") + ": hosts are " + hosts);
        return v;
    }

    private static String run(Path repo, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", repo.resolve("deploy/dev/fleet.sh").toString()));
        cmd.addAll(List.of(args));
        Path log = repo.resolve("coordinator/target/fleet-sh.log");
        Files.createDirectories(log.getParent());
        Path out = Files.createTempFile(log.getParent(), "fleet-sh", ".out");
        try {
            // Not inherited: the forked test JVM's stdout is surefire's channel to Maven.
            Process p = new ProcessBuilder(cmd).directory(repo.toFile()).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            boolean done = p.waitFor(SCRIPT_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            // The script alone: the daemons it started are its descendants too, and stay (fleet.sh down stops them).
            if (!done) p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            String text = Files.readString(out, StandardCharsets.UTF_8);
            Files.writeString(log, "$ " + String.join(" ", cmd) + "\n" + text, StandardCharsets.UTF_8,
                    java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
            System.out.print("$ fleet.sh " + String.join(" ", args) + "\n" + text);
            if (!done) throw new IOException("fleet.sh " + String.join(" ", args) + " did not finish within " + SCRIPT_TIMEOUT + ":\n" + text);
            if (p.exitValue() != 0) throw new IOException("fleet.sh " + String.join(" ", args) + " exited " + p.exitValue() + ":\n" + text);
            return text;
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** @return the repository root: the nearest directory up from the working directory with deploy/dev/fleet.sh */
    private static Path findRepo() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("deploy/dev/fleet.sh"))) return d;
        }
        throw new IllegalStateException("no deploy/dev/fleet.sh above " + Path.of("").toAbsolutePath());
    }

    /** @return the {@code export NAME=value} lines of an env file, quotes removed (also B12's, {@code FleetBench}) */
    public static Map<String, String> readEnv(Path file) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            line = line.strip();
            if (!line.startsWith("export ")) continue;
            int eq = line.indexOf('=');
            if (eq < 0) continue;
            String value = line.substring(eq + 1);
            if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) value = value.substring(1, value.length() - 1);
            out.put(line.substring("export ".length(), eq), value);
        }
        return out;
    }
}
