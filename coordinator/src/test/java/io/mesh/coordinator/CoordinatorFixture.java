package io.mesh.coordinator;

import io.mesh.testing.ScopedFixture;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;

import java.time.Duration;

/**
 * A JUnit 5 extension: a real ZooKeeper ({@link #zk}) and, for every test, a fresh coordinator on it ({@link #api}:
 * {@link HttpApi} on 127.0.0.1, a free port, with its HTTP client). The set-up most of the coordinator's and the
 * client's tests need, registered once and in the right order (the ZooKeeper before the coordinator that writes to it).
 *
 * <pre>{@code
 * @RegisterExtension static final CoordinatorFixture fx = new CoordinatorFixture();   // one ZooKeeper for the class
 * @RegisterExtension @Order(1) final CoordinatorFixture fx = new CoordinatorFixture(); // one ZooKeeper per test
 * }</pre>
 *
 * In a static field the ZooKeeper server runs for the whole class and everything under {@code /mesh} is deleted
 * before each test; in an instance field every test gets a server of its own. Either way each test gets a coordinator
 * of its own, as configured here (credentials, limits, expiry), which is closed after the test, also when it fails:
 * what one test did to it ({@link CoordinatorExtension#restart}, its metrics) does not reach the next.
 * Extensions that use {@link #zk} too (an {@code AgentDaemonExtension}) are registered after this one. A node a test
 * writes as an agent would is read from the coordinator's cache: {@link #writeReport} and {@link #awaitServed} wait
 * until it is served.
 */
public final class CoordinatorFixture extends ScopedFixture {
    public final ZooKeeperExtension zk = new ZooKeeperExtension();
    public final CoordinatorExtension api = new CoordinatorExtension(zk);

    /** @return this, the coordinator asking for that bearer token on pushes */
    public CoordinatorFixture withToken(String bearerToken) {
        api.withToken(bearerToken);
        return this;
    }

    /** @return this, the coordinator with those HTTP limits */
    public CoordinatorFixture withLimits(HttpLimits l) {
        api.withLimits(l);
        return this;
    }

    /** @return this, the coordinator with that {@code --no-agent-expiry} */
    public CoordinatorFixture withNoAgentExpiry(Duration d) {
        api.withNoAgentExpiry(d);
        return this;
    }

    /**
     * Waits until the coordinator serves {@code path} as ZooKeeper holds it now ({@link CoordinatorExtension#awaitServed}):
     * after a test wrote a node an agent would.
     */
    public void awaitServed(String path) throws Exception {
        CoordinatorExtension.awaitServed(zk, path);
    }

    /** Writes a host's report of a module as its agent would (created, or replaced), and waits until the coordinator serves it. */
    public void writeReport(ApplyReport r) throws Exception {
        String path = zk.paths().report(r.host(), r.module());
        zk.client().create().orSetData().creatingParentsIfNeeded().forPath(path, Json.bytes(r));
        awaitServed(path);
    }

    /** Starts the ZooKeeper server (the callbacks do); the coordinator starts before each test. */
    @Override
    public void start() throws Exception {
        zk.start();
    }

    @Override
    protected void beforeEachOfClass() throws Exception {
        zk.reset();
    }

    @Override
    protected void beforeEachTest() throws Exception {
        api.start();
    }

    @Override
    protected void afterEachTest() {
        try {
            api.close();
        } finally {
            zk.closePlainClients();
        }
    }

    /** Stops the coordinator, then the ZooKeeper server. */
    @Override
    public void close() throws Exception {
        try {
            api.close();
        } finally {
            zk.close();
        }
    }
}
