package io.mesh.zk;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * Watches a Curator client's connection state, so that a process holding a module lock can follow Curator's rule
 * before each Docker call (Curator Tech Notes 10 and 14; "Error handling" in Curator's recipes docs):
 *
 * <ul>
 *   <li>{@code SUSPENDED}: the lock may be lost; make no Docker call until {@code RECONNECTED};</li>
 *   <li>{@code LOST}: the session expired and its ephemeral nodes (the lock node among them) are gone; the lock must
 *       be acquired again before the next Docker call.</li>
 * </ul>
 *
 * {@link #lostCount()} counts {@code LOST} events, so a holder can tell whether its session was lost since it
 * acquired the lock. Thread-safe; one per client.
 */
public final class SessionGuard implements ConnectionStateListener {
    private static final Logger log = LoggerFactory.getLogger(SessionGuard.class);

    /** Thrown instead of making a Docker call while ZooKeeper is not connected, or after the session was lost. */
    public static final class SessionLostException extends RuntimeException {
        /** @param message what happened, and that nothing more was done */
        public SessionLostException(String message) { super(message); }
    }

    private final CuratorFramework client;
    private final AtomicLong lost = new AtomicLong();
    private volatile ConnectionState state;

    /** @param client a started client; the guard registers itself as its connection state listener */
    public SessionGuard(CuratorFramework client) {
        this.client = client;
        this.state = client.getZookeeperClient().isConnected() ? ConnectionState.CONNECTED : ConnectionState.SUSPENDED;
        client.getConnectionStateListenable().addListener(this);
    }

    @Override
    public void stateChanged(CuratorFramework c, ConnectionState newState) {
        if (newState == ConnectionState.LOST) lost.incrementAndGet();
        if (newState != state) log.info("ZooKeeper connection {} -> {}", state, newState);
        state = newState;
        synchronized (this) {
            notifyAll();
        }
    }

    /** @return true while the connection is up (CONNECTED, RECONNECTED or READ_ONLY is not counted as up) */
    public boolean connected() {
        ConnectionState s = state;
        return (s == ConnectionState.CONNECTED || s == ConnectionState.RECONNECTED) && client.getZookeeperClient().isConnected();
    }

    /** @return the connection state last seen */
    public ConnectionState state() { return state; }

    /** @return how many times the session was lost since this guard started */
    public long lostCount() { return lost.get(); }

    /**
     * @return the ZooKeeper session id of the client's current handle, or 0 while it has none (Curator makes a new
     *         handle, and with it a new session, when it decides a session was lost)
     */
    public long sessionId() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    /**
     * Before a Docker call made under a lock acquired when {@link #lostCount()} was {@code lostAtAcquire}.
     *
     * @param lostAtAcquire the lost count read before acquiring the lock (ModuleSection#lock)
     * @throws SessionLostException when ZooKeeper is not connected now, or the session was lost since
     */
    public void check(long lostAtAcquire) {
        if (lost.get() != lostAtAcquire) {
            throw new SessionLostException("the ZooKeeper session was lost, and the module lock with it; stopped before the next Docker call");
        }
        if (!connected()) {
            throw new SessionLostException("ZooKeeper is not connected (" + state + "); stopped before the next Docker call");
        }
    }

    /**
     * Waits until the connection is up.
     *
     * @param max      the longest wait
     * @param stopping polled every second; true gives up
     * @return true when connected
     * @throws InterruptedException when interrupted
     */
    public boolean awaitConnected(Duration max, BooleanSupplier stopping) throws InterruptedException {
        long end = System.nanoTime() + max.toNanos();
        while (!connected()) {
            if (stopping.getAsBoolean() || System.nanoTime() >= end) return connected();
            synchronized (this) {
                wait(1_000);
            }
        }
        return true;
    }
}
