package io.mesh.testing;

import io.mesh.curator.MeshZk;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.time.Duration;

/**
 * The real 3-server ensemble shared by the test JVM ({@link ZkEnsemble#shared()}: server processes, started on first
 * use), healed before and after each test (every server running, unpaused, with a quorum), and a Curator client of
 * the test's own, connected to all three servers and closed after the test.
 *
 * <pre>{@code @RegisterExtension final EnsembleExtension ensemble = new EnsembleExtension();}</pre>
 */
public final class EnsembleExtension implements BeforeEachCallback, AfterEachCallback {
    private ZkEnsemble ensemble;
    private CuratorFramework client;

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        start();
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        close();
    }

    /** Heals the shared ensemble and connects the client (the callback does; fixtures that compose this one call it). */
    public void start() throws Exception {
        ensemble = ZkEnsemble.shared();
        ensemble.heal();
        client = MeshZk.connect(ensemble.connect(), Duration.ofSeconds(30));
    }

    /** Heals the ensemble for the next test (a test may have killed or paused servers), and closes the client. */
    public void close() throws Exception {
        try {
            if (ensemble != null) ensemble.heal();
        } finally {
            if (client != null) client.close();
            client = null;
        }
    }

    /** @return the ensemble, to find its leader, kill, pause or start servers, read its transaction log */
    public ZkEnsemble ensemble() { return ensemble; }

    /** @return the connect string naming every server */
    public String connect() { return ensemble.connect(); }

    /** @return the test's client, connected to every server */
    public CuratorFramework client() { return client; }
}
