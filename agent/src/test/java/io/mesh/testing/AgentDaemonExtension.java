package io.mesh.testing;

import io.mesh.agent.AgentConfig;
import io.mesh.agent.AgentDaemon;
import io.mesh.curator.MeshZk;
import io.mesh.docker.ContainerRuntime;
import io.mesh.policy.Policy;
import io.mesh.wire.ProcessRef;
import org.apache.curator.framework.CuratorFramework;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * An agent daemon ({@code mesh-agent run}'s {@link AgentDaemon}) running in the test JVM for one host, on the real
 * Docker engine ({@link TestDocker}) and the ZooKeeper of a {@link ZooKeeperExtension}, which must be registered
 * before this one. A static field runs one daemon for the class, an instance field one per test; it is closed after.
 *
 * <p>By default it reconciles every 10 minutes, so that what a test sees land does not depend on the interval; waits
 * 2 s for an apply's module lock and a minute for a window's; uses the default {@link Policy} with the host's network
 * allowed ({@link TestPolicy#HOST_NETWORK}, as the demos' agents run); shares the
 * extension's ZooKeeper client; and has a fresh state directory, which it keeps across {@link #close()} and
 * {@link #start()}: a restarted agent keeps its {@code --state-dir}.
 */
public final class AgentDaemonExtension extends ScopedFixture {
    /** The process name the daemon's held nodes, lock nodes and reports give. */
    public static final String PROCESS = "mesh-agent run (test)";

    private final ZooKeeperExtension zk;
    private final String host;
    private Duration reconcileInterval = Duration.ofMinutes(10);
    private Duration applyLockWait = Duration.ofSeconds(2);
    private Policy policy = TestPolicy.HOST_NETWORK;
    private boolean ownSession;
    private ContainerRuntime runtime;
    private AgentDaemon daemon;
    private CuratorFramework ownClient;
    private Path stateDir;

    /**
     * @param zk   the ZooKeeper the daemon uses (registered before this extension)
     * @param host the daemon's host id
     */
    public AgentDaemonExtension(ZooKeeperExtension zk, String host) {
        this.zk = zk;
        this.host = host;
    }

    /** @return this, reconciling at that interval */
    public AgentDaemonExtension reconcileEvery(Duration interval) {
        reconcileInterval = interval;
        return this;
    }

    /** @return this, waiting that long for an apply's module lock */
    public AgentDaemonExtension applyLockWait(Duration wait) {
        applyLockWait = wait;
        return this;
    }

    /** @return this, with that policy (instead of {@link TestPolicy#HOST_NETWORK}: give the host's network too if needed) */
    public AgentDaemonExtension withPolicy(Policy p) {
        policy = p;
        return this;
    }

    /** @return this, making its Docker calls through {@code r} (e.g. {@link TestDocker#intercepting} over the engine) */
    public AgentDaemonExtension withRuntime(ContainerRuntime r) {
        runtime = r;
        return this;
    }

    /** @return this, with a ZooKeeper session of its own (as a separate agent process has), closed with the daemon */
    public AgentDaemonExtension withOwnSession() {
        ownSession = true;
        return this;
    }

    /** Starts the daemon (the callbacks do; fixtures that compose this one call it themselves). */
    @Override
    public void start() throws Exception {
        if (daemon != null) return;
        TestDocker.engine();
        if (stateDir == null) stateDir = Files.createTempDirectory("mesh-agent"); // a restarted agent keeps its --state-dir
        AgentConfig config = new AgentConfig(host, zk.paths(), stateDir, reconcileInterval, applyLockWait, Duration.ofMinutes(1), policy);
        CuratorFramework client = zk.client();
        if (ownSession) client = ownClient = MeshZk.connect(zk.connect(), Duration.ofSeconds(20));
        daemon = new AgentDaemon(config, client, runtime != null ? runtime : TestDocker.engine(), ProcessRef.current(PROCESS));
        daemon.start();
    }

    /** Stops the daemon (and its own session); nothing when it does not run. */
    @Override
    public void close() {
        try {
            if (daemon != null) daemon.close();
        } finally {
            daemon = null;
            if (ownClient != null) ownClient.close();
            ownClient = null;
        }
    }

    /** @return the running daemon */
    public AgentDaemon daemon() {
        if (daemon == null) throw new IllegalStateException("the agent daemon is not running");
        return daemon;
    }

    /** @return the daemon's host id */
    public String host() { return host; }

    /** @return the daemon's {@code --state-dir} */
    public Path stateDir() { return stateDir; }
}
