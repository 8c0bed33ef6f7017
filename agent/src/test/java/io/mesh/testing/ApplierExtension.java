package io.mesh.testing;

import io.mesh.apply.Applier;
import io.mesh.docker.DockerEngine;
import io.mesh.window.HostContext;
import io.mesh.window.WindowJournal;
import io.mesh.window.WindowRunner;
import io.mesh.wire.ProcessRef;
import io.mesh.zk.MeshStore;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;

/**
 * An apply's and a window's fixture on the real Docker engine ({@link TestDocker}) and the ZooKeeper of a
 * {@link ZooKeeperExtension}: a fresh module name, a fresh state directory and the {@link HostContext} of host
 * {@code host-a} on them, from which tests build their {@link Applier}s and {@link WindowRunner}s. A static field
 * serves the class, an instance field each test; after it the module's containers and the state directory are removed.
 *
 * <pre>{@code
 * @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension();
 * @RegisterExtension final ApplierExtension host = new ApplierExtension(zk, "ap");
 * ... host.applier().apply(host.module(), () -> false) ...
 * }</pre>
 *
 * The context is built at its first use, so this extension may be registered in any order with the ZooKeeper one.
 */
public final class ApplierExtension extends ScopedFixture {
    /** The host id of the context, the one the tests' manifests name. */
    public static final String HOST = "host-a";
    /** How long an apply waits for the module lock. */
    public static final Duration LOCK_WAIT = Duration.ofSeconds(2);

    private final ZooKeeperExtension zk;
    private final String modulePrefix;
    private String module;
    private Path stateDir;
    private HostContext context;

    /**
     * @param zk           the ZooKeeper the applies use
     * @param modulePrefix the start of the module's name ({@link TestDocker#uniqueModule})
     */
    public ApplierExtension(ZooKeeperExtension zk, String modulePrefix) {
        this.zk = zk;
        this.modulePrefix = modulePrefix;
    }

    /** Picks the module's name and makes the state directory (the callbacks do). */
    @Override
    public void start() throws IOException {
        if (module != null) return;
        module = TestDocker.uniqueModule(modulePrefix);
        stateDir = Files.createTempDirectory(modulePrefix + "-state");
    }

    /** Removes the module's containers and the state directory; nothing when not started. */
    @Override
    public void close() throws IOException {
        if (module == null) return;
        try {
            TestDocker.clean(module);
            try (var files = Files.walk(stateDir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        } finally {
            module = null;
            context = null;
        }
    }

    private void started() {
        if (module == null) throw new IllegalStateException("ApplierExtension is not started: register it with @RegisterExtension");
    }

    /** @return the module's name, such as {@code ap3f2a9c} */
    public String module() {
        started();
        return module;
    }

    /** @return the state directory ({@code --state-dir}) of the context's journal */
    public Path stateDir() {
        started();
        return stateDir;
    }

    /**
     * @return host-a's context: the test's ZooKeeper, the real engine, process "test", the default secrets and the
     *         default policy with the host's network allowed ({@link TestPolicy#HOST_NETWORK})
     */
    public HostContext context() {
        started();
        if (context == null) {
            context = HostContext.of(new MeshStore(zk.client(), zk.paths()), TestDocker.engine(), HOST,
                    ProcessRef.current("test"), new WindowJournal(stateDir)).withPolicy(TestPolicy.HOST_NETWORK);
        }
        return context;
    }

    /** @return the context's store */
    public MeshStore store() { return context().store(); }

    /** @return the real engine */
    public DockerEngine docker() { return TestDocker.engine(); }

    /** @return the context's journal */
    public WindowJournal journal() { return context().journal(); }

    /** @return a new applier of the context, waiting {@link #LOCK_WAIT} for the module lock */
    public Applier applier() { return applier(context()); }

    /** @return a new applier of that context (the context with another policy, secrets dir or engine, say) */
    public Applier applier(HostContext c) { return new Applier(c, LOCK_WAIT); }

    /** @return a new window runner of the context */
    public WindowRunner windows() { return new WindowRunner(context()); }
}
