package io.mesh.coordinator;

import java.time.Duration;

/**
 * What the coordinator's HTTP server gives one client at most (docs/decisions/0007-coordinator-http-limits.md;
 * docs/decisions/0007-coordinator-http-limits.md). {@code mesh-coordinator serve} sets them with
 * {@code --http-read-timeout}, {@code --http-max-connections} and {@code --max-push-bytes}.
 *
 * @param readTimeout    a connection that sends nothing for this long is closed; a request's head (request line and
 *                       headers) must arrive whole within this long of the connection's opening or of its previous
 *                       answer, else the connection is closed; its body within this long of its head, else {@code 408}
 * @param maxConnections connections open at once; at the limit the server stops accepting (new connections wait in
 *                       the kernel's accept queue of {@value #ACCEPT_QUEUE}) and closes connections that have sent
 *                       nothing for {@link #AT_LIMIT_IDLE} to make room
 * @param maxPushBytes   largest body of {@code POST /v1/pushes}; a larger one is {@code 413}, whether its
 *                       {@code Content-Length} says so or it streams past the limit
 */
public record HttpLimits(Duration readTimeout, int maxConnections, int maxPushBytes) {
    /** Default {@link #readTimeout()}. */
    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(30);
    /** Default {@link #maxConnections()}. */
    public static final int DEFAULT_MAX_CONNECTIONS = 256;
    /**
     * Default and highest {@link #maxPushBytes()}: 1 MiB. A push is one ZooKeeper transaction, and ZooKeeper refuses
     * a request over its {@code jute.maxbuffer} (1 MiB by default); the manifest parser's limit is the same
     * ({@link io.mesh.manifest.ManifestParser#MAX_CHARS}).
     */
    public static final int MAX_PUSH_BYTES = 1 << 20;
    /** Lowest {@link #maxPushBytes()}: a manifest of one small module. */
    public static final int MIN_PUSH_BYTES = 1024;
    /** Threads that serve requests (plus one accepting and one selecting); more requests wait for one. */
    public static final int THREADS = 16;
    /** Connections the kernel keeps waiting to be accepted while the server is at {@link #maxConnections()}. */
    public static final int ACCEPT_QUEUE = 64;
    /** At {@link #maxConnections()}, a connection that sends nothing for this long is closed to make room. */
    public static final Duration AT_LIMIT_IDLE = Duration.ofSeconds(1);

    /**
     * Most bytes of a refused body read and thrown away after the answer (within the read timeout), so that a client
     * still sending reads the answer rather than a reset ({@link Exchange#send}).
     */
    public static final long DISCARD_BYTES = 64L << 20;

    /** The defaults. */
    public static final HttpLimits DEFAULTS = new HttpLimits(DEFAULT_READ_TIMEOUT, DEFAULT_MAX_CONNECTIONS, MAX_PUSH_BYTES);

    /**
     * @throws IllegalArgumentException naming the option and its range when a value is out of it
     */
    public HttpLimits {
        if (readTimeout == null || readTimeout.compareTo(Duration.ofSeconds(1)) < 0 || readTimeout.compareTo(Duration.ofMinutes(10)) > 0) {
            throw new IllegalArgumentException("--http-read-timeout " + readTimeout + " is out of range: give 1s to 10m, such as 30s");
        }
        if (maxConnections < 1 || maxConnections > 100_000) {
            throw new IllegalArgumentException("--http-max-connections " + maxConnections + " is out of range: give 1 to 100000, such as "
                    + DEFAULT_MAX_CONNECTIONS);
        }
        if (maxPushBytes < MIN_PUSH_BYTES || maxPushBytes > MAX_PUSH_BYTES) {
            throw new IllegalArgumentException("--max-push-bytes " + maxPushBytes + " is out of range: give " + MIN_PUSH_BYTES + " to "
                    + MAX_PUSH_BYTES + " (a push is one ZooKeeper transaction, which ZooKeeper limits to 1 MiB; split larger manifests into several pushes)");
        }
    }

    /** @return these limits with another {@link #readTimeout()} */
    public HttpLimits withReadTimeout(Duration d) { return new HttpLimits(d, maxConnections, maxPushBytes); }

    /** @return these limits with another {@link #maxConnections()} */
    public HttpLimits withMaxConnections(int n) { return new HttpLimits(readTimeout, n, maxPushBytes); }

    /** @return these limits with another {@link #maxPushBytes()} */
    public HttpLimits withMaxPushBytes(int n) { return new HttpLimits(readTimeout, maxConnections, n); }
}
