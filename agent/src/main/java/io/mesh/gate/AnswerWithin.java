package io.mesh.gate;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One HTTP request to the operator's stack (a gate's Prometheus, Alertmanager) whose whole answer, body included, comes
 * within a time or not at all (SPEC.md, "The rest of the operator's stack": 5 s). {@link HttpRequest#timeout} alone
 * does not do it on Java 17: its timer ends with the response's headers, so a server that stalls in the body would hold
 * the caller (a window, with its lock and slot) with no end.
 */
public final class AnswerWithin {
    private AnswerWithin() {}

    /**
     * @return the one HTTP client of the operator's stack (gates, silences), made on first use: an agent with neither
     *         starts no HTTP thread. Its connect timeout is 5 s, the whole answer's bound ({@link #send}).
     */
    public static HttpClient client() { return Holder.CLIENT; }

    /** Made when {@link #client} is first called (the holder idiom: once, without a race). */
    private static final class Holder {
        static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    }

    /**
     * @param client  the client
     * @param request the request (its own timeout, if any, still bounds the headers)
     * @param within  how long the whole answer may take, connection included
     * @return the answer, its body read whole as text
     * @throws HttpTimeoutException when the answer did not come whole within {@code within} (the exchange is cancelled)
     * @throws IOException          when the request failed
     * @throws InterruptedException when interrupted while waiting (the exchange is cancelled)
     */
    public static HttpResponse<String> send(HttpClient client, HttpRequest request, Duration within) throws IOException, InterruptedException {
        CompletableFuture<HttpResponse<String>> answer = client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
        try {
            return answer.get(within.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            answer.cancel(true); // the client's exchange ends, and its connection is not kept for another request
            throw new HttpTimeoutException("no whole answer from " + request.uri() + " within " + within.toMillis() + " ms");
        } catch (InterruptedException e) {
            answer.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) throw io;
            throw new IOException(e.getCause());
        }
    }
}
