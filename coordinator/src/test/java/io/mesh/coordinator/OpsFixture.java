package io.mesh.coordinator;

import io.mesh.testing.ScopedFixture;
import io.mesh.agent.AgentDaemon;
import io.mesh.agent.AgentMetrics;
import io.mesh.agent.WindowRequests;
import io.mesh.policy.Policy;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ProcessRef;
import io.mesh.zk.MeshStore;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.awaitility.Awaitility.await;

/**
 * A JUnit 5 extension: a running coordinator ({@link CoordinatorExtension}) and a running agent daemon for
 * {@value #HOST} (in this JVM: {@link AgentDaemonExtension}, with {@link WindowRequests} and {@link AgentMetrics}
 * served on a free port), on a real ZooKeeper ({@link ZooKeeperExtension}) and the real Docker engine
 * ({@link TestDocker}). One module with a fresh name: container {@code app} (busybox), schedule {@code sweep} whose
 * step waits until the test {@link #release()}s it (a file in a host directory mounted into the step), and schedule
 * {@code fails} whose step exits 3.
 *
 * <pre>{@code @RegisterExtension static final OpsFixture fx = new OpsFixture();   // one fleet for the class}</pre>
 */
public final class OpsFixture extends ScopedFixture {
    /** The agent's host id. */
    public static final String HOST = "host-a";

    public final ZooKeeperExtension zk = new ZooKeeperExtension();
    public final CoordinatorExtension api = new CoordinatorExtension(zk);
    public final String module = TestDocker.uniqueModule("op");
    private AgentDaemonExtension agent;
    private WindowRequests requests;
    private AgentMetrics metrics;
    private URI agentMetrics;
    private Path gate;

    @Override
    public void start() throws Exception {
        TestDocker.engine();
        zk.start();
        api.start();
        gate = Files.createTempDirectory("mesh-ops-gate");
        gate.toFile().setWritable(true, false);
        // The sweep step mounts the gate directory: the agent's policy allows that host path, and only it; and the
        // host's network, which app uses.
        agent = new AgentDaemonExtension(zk, HOST).applyLockWait(Duration.ofSeconds(1))
                .withPolicy(Policy.builder().allowHostPaths(List.of(gate.toString())).allowHostNetwork(true).build());
        ProcessRef me = ProcessRef.current(AgentDaemonExtension.PROCESS);
        metrics = new AgentMetrics(zk.client(), zk.paths(), HOST);
        metrics.start();
        agentMetrics = metrics.serve(new InetSocketAddress("127.0.0.1", 0));
        agent.start();
        requests = new WindowRequests(zk.client(), zk.paths(), HOST, me, agent.daemon()::runWindow, Duration.ofMinutes(10));
        requests.start();
        await().atMost(Duration.ofSeconds(20)).until(() -> zk.client().checkExists().forPath(zk.paths().agent(HOST)) != null);
    }

    @Override
    public void close() throws Exception {
        try {
            release();
        } catch (Exception ignored) {
            // best effort: a window still waiting ends
        }
        if (agent != null) agent.close();
        if (requests != null) requests.close();
        if (metrics != null) metrics.close();
        api.close();
        TestDocker.clean(module);
        zk.close();
    }

    /** @return the agent daemon */
    public AgentDaemon daemon() { return agent.daemon(); }

    /** @return the base URL of the agent's metrics */
    public URI agentMetrics() { return agentMetrics; }

    /** @return the module's manifest, with an env value that changes the container's spec per revision */
    public String manifest(String rev, String hosts) {
        return "module: " + module + "\nhosts: " + hosts + "\ncontainers:\n"
                + "  app:\n    image: " + TestDocker.BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    env: {REV: \"" + rev + "\"}\n    network: host\n    stop-timeout: 2s\n    restart: unless-stopped\n"
                + "schedules:\n"
                + "  sweep:\n    cron: \"30 3 * * *\"\n    timezone: UTC\n    while-stopped: [app]\n"
                + "    step:\n      image: " + TestDocker.BUSYBOX + "\n"
                + "      command: [sh, -c, \"echo sweeping; until [ -f /gate/go ]; do sleep 0.2; done; rm -f /gate/go; echo swept\"]\n"
                + "      volumes: [\"" + gate + ":/gate\"]\n    timeout: 1m\n"
                + "  fails:\n    cron: \"0 4 * * *\"\n    while-stopped: [app]\n"
                + "    step:\n      image: " + TestDocker.BUSYBOX + "\n      command: [sh, -c, \"echo broken; exit 3\"]\n    timeout: 1m\n";
    }

    /** Lets the running {@code sweep} step finish. */
    public void release() throws Exception {
        Files.writeString(gate.resolve("go"), "go");
    }

    /** @return the module's last report on {@value #HOST} */
    public ApplyReport report() throws Exception {
        return new MeshStore(zk.client(), zk.paths()).report(HOST, module);
    }

    /** Waits until the module's report on {@value #HOST} has that outcome and revision. */
    public void awaitReport(ApplyOutcome outcome, String revision) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            ApplyReport r = report();
            return r != null && r.outcome() == outcome && revision.equals(r.revision());
        });
    }

    /** Waits until the module's container is held (the window node and held node exist). */
    public void awaitHeld() {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> zk.client().checkExists().forPath(zk.paths().held(HOST, module + "-app")) != null);
    }

    /** Waits until no window of the module is open. */
    public void awaitNoWindow() {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> zk.client().checkExists().forPath(zk.paths().window(HOST, module)) == null);
    }
}
