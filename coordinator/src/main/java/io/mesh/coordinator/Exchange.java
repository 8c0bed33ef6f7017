package io.mesh.coordinator;

import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Blocker;
import org.eclipse.jetty.util.Callback;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One request and its answer, as {@link HttpApi} handles them on a Jetty thread: headers, a body read with a limit
 * and a deadline, and exactly one answer.
 */
final class Exchange {
    /** The body is over its limit: by its {@code Content-Length} ({@code declared} &gt;= 0) or as it streamed. */
    static final class TooLargeException extends Exception {
        final long declared;

        TooLargeException(long declared) {
            super(null, null, false, false);
            this.declared = declared;
        }
    }

    /** The body did not arrive whole within the read timeout. */
    static final class TimedOutException extends Exception {
        final long received;

        TimedOutException(long received) {
            super(null, null, false, false);
            this.received = received;
        }
    }

    private final Request request;
    private final Response response;
    private final Callback callback;
    private final long headNanos;
    private final Duration readTimeout;
    private boolean answered;
    private boolean bodyRead;
    /** Jetty's one outstanding content demand, when a wait for it timed out. */
    private CountDownLatch demand;

    /**
     * @param request     the request, whose head has arrived
     * @param response    its response
     * @param callback    completed by the answer
     * @param readTimeout how long the body may take after the head
     */
    Exchange(Request request, Response response, Callback callback, Duration readTimeout) {
        this.request = request;
        this.response = response;
        this.callback = callback;
        this.readTimeout = readTimeout;
        this.headNanos = System.nanoTime();
    }

    String method() { return request.getMethod(); }

    /** @return the path as sent, not decoded */
    String path() {
        String p = request.getHttpURI().getPath();
        return p == null ? "/" : p;
    }

    /** @return the query as sent, or {@code null} */
    String query() { return request.getHttpURI().getQuery(); }

    /**
     * @param name a flag of the query, such as {@code force}
     * @return true when the query holds {@code name=true} ({@code ?force=true}, {@code ?stale=true})
     */
    boolean flag(String name) {
        String q = query();
        return q != null && java.util.Arrays.asList(q.split("&")).contains(name + "=true");
    }

    /** @return the first value of the request header, or {@code null} */
    String header(String name) { return request.getHeaders().get(name); }

    /** Sets a response header (before {@link #send}). */
    void responseHeader(String name, String value) { response.getHeaders().put(name, value); }

    /** @return the client's address, such as {@code /127.0.0.1:51234} */
    SocketAddress remote() { return request.getConnectionMetaData().getRemoteSocketAddress(); }

    /** @return the client's IP address as text */
    String remoteHost() {
        SocketAddress a = remote();
        return a instanceof InetSocketAddress i && i.getAddress() != null ? i.getAddress().getHostAddress() : String.valueOf(a);
    }

    /** @return the request's {@code Content-Length}, or -1 when it has none (chunked, or no body) */
    long declaredLength() { return request.getLength(); }

    /**
     * Reads the whole body, never more than {@code limit} bytes, and not after the read timeout has passed since the
     * head arrived. Nothing is read when the {@code Content-Length} is over the limit.
     *
     * @param limit most bytes accepted
     * @return the body
     * @throws TooLargeException when it is over {@code limit}
     * @throws TimedOutException when it did not arrive in time
     * @throws IOException       when the connection failed
     */
    byte[] body(int limit) throws TooLargeException, TimedOutException, IOException, InterruptedException {
        long declared = request.getLength();
        if (declared > limit) throw new TooLargeException(declared);
        ByteArrayOutputStream out = new ByteArrayOutputStream(declared > 0 ? (int) declared : 1024);
        long deadline = headNanos + readTimeout.toNanos();
        while (true) {
            Content.Chunk chunk = request.read();
            if (chunk == null) {
                if (!awaitContent(deadline)) throw new TimedOutException(out.size());
                continue;
            }
            try {
                if (Content.Chunk.isFailure(chunk)) {
                    Throwable failure = chunk.getFailure();
                    if (failure instanceof TimeoutException) throw new TimedOutException(out.size());
                    throw failure instanceof IOException io ? io : new IOException(failure);
                }
                ByteBuffer b = chunk.getByteBuffer();
                if (out.size() + b.remaining() > limit) throw new TooLargeException(-1);
                byte[] bytes = new byte[b.remaining()];
                b.get(bytes);
                out.write(bytes);
                if (chunk.isLast()) {
                    bodyRead = true;
                    return out.toByteArray();
                }
            } finally {
                chunk.release();
            }
        }
    }

    /** @return true once {@link #send} was called */
    boolean answered() { return answered; }

    /**
     * Answers: status, {@code Content-Length} and body. When the request has a body that was not read (refused
     * before it was: 401, 403, 413, 408), the answer says {@code Connection: close} and, once it is written, what
     * still comes of the body is read and thrown away, until it ends, for at most the read timeout and
     * {@link HttpLimits#DISCARD_BYTES}: a server that closed a connection with a client still sending would make the
     * client's kernel reset it, and the client, still writing, would never read the answer (Jetty itself discards at
     * most 8 KiB after an answer before it closes so). Otherwise the answer is written without blocking this thread.
     *
     * @param status the HTTP status
     * @param bytes  the body
     */
    void send(int status, byte[] bytes) {
        if (answered) throw new IllegalStateException("answered twice");
        answered = true;
        response.setStatus(status);
        response.getHeaders().put("Content-Length", String.valueOf(bytes.length));
        boolean bodyLeft = !bodyRead && (request.getLength() > 0 || request.getHeaders().contains("Transfer-Encoding"));
        if (!bodyLeft) {
            response.write(true, ByteBuffer.wrap(bytes), callback);
            return;
        }
        response.getHeaders().put("Connection", "close");
        try (Blocker.Callback written = Blocker.callback()) {
            response.write(true, ByteBuffer.wrap(bytes), written);
            written.block();
        } catch (IOException e) {
            callback.failed(e);
            return;
        }
        try {
            discardBody();
        } finally {
            callback.succeeded();
        }
    }

    /**
     * Waits until Jetty has more of the body (or its end, or a failure) to read.
     *
     * @param deadline {@link System#nanoTime()} to give up at
     * @return false when the deadline passed first; the demand then stays registered (Jetty allows one at a time),
     *         and the next call waits on it
     */
    private boolean awaitContent(long deadline) throws InterruptedException {
        if (demand == null) {
            CountDownLatch ready = new CountDownLatch(1);
            demand = ready;
            request.demand(ready::countDown);
        }
        long left = deadline - System.nanoTime();
        if (left > 0 && demand.await(left, TimeUnit.NANOSECONDS)) {
            demand = null;
            return true;
        }
        return false;
    }

    /** Reads what comes of the body and drops it: until its end, a failure, the read timeout or the byte bound. */
    private void discardBody() {
        long deadline = System.nanoTime() + readTimeout.toNanos();
        long dropped = 0;
        try {
            while (dropped < HttpLimits.DISCARD_BYTES) {
                Content.Chunk chunk = request.read();
                if (chunk == null) {
                    if (!awaitContent(deadline)) return;
                    continue;
                }
                boolean end = chunk.isLast() || Content.Chunk.isFailure(chunk);
                dropped += chunk.remaining();
                chunk.release();
                if (end) return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
