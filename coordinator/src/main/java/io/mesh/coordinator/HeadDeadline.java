package io.mesh.coordinator;

import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Closes a connection whose request head (request line and headers) has not arrived whole within a bound of the
 * connection's opening or of its previous answer: Jetty's idle timeout closes a connection that sends nothing, but is
 * reset by every byte, so a client that sends its headers a byte at a time would hold the connection for as long as it
 * likes (docs/decisions/0007-coordinator-http-limits.md). Jetty has no such bound of its own; this is it, on Jetty's
 * connection events and scheduler.
 *
 * <p>A bean of the connector: Jetty calls {@link #onOpened} and {@link #onClosed} for each connection. {@link HttpApi}
 * calls {@link #headReceived} when a request reaches it and {@link #answered} when its answer has been written.
 */
final class HeadDeadline implements Connection.Listener {
    private static final Logger LOG = LoggerFactory.getLogger(HeadDeadline.class);

    private final Scheduler scheduler;
    private final long millis;
    /** The connections waiting for a head, each with the token of its one live deadline. */
    private final ConcurrentHashMap<Connection, Object> waiting = new ConcurrentHashMap<>();

    /**
     * @param scheduler the server's scheduler
     * @param bound     how long a head may take
     */
    HeadDeadline(Scheduler scheduler, Duration bound) {
        this.scheduler = scheduler;
        this.millis = bound.toMillis();
    }

    @Override
    public void onOpened(Connection connection) { arm(connection); }

    @Override
    public void onClosed(Connection connection) { waiting.remove(connection); }

    /** A request's head arrived whole on {@code connection}: no deadline until it is answered. */
    void headReceived(Connection connection) { waiting.remove(connection); }

    /** {@code connection}'s request was answered: the next head on it has the bound again. */
    void answered(Connection connection) {
        if (connection.getEndPoint().isOpen()) arm(connection);
    }

    /** @return connections waiting for a request head now (for tests and logs) */
    int waiting() { return waiting.size(); }

    private void arm(Connection connection) {
        Object token = new Object();
        waiting.put(connection, token);
        scheduler.schedule(() -> {
            if (waiting.remove(connection, token)) {
                LOG.debug("closing the HTTP connection from {}: no whole request head within {} ms (--http-read-timeout)",
                        connection.getEndPoint().getRemoteSocketAddress(), millis);
                connection.getEndPoint().close();
            }
        }, millis, TimeUnit.MILLISECONDS);
    }
}
