package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.mesh.wire.Json;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

/**
 * A webhook receiver for tests: the JDK's HTTP server on 127.0.0.1, answering 200 to every POST, keeping each one with
 * whether its {@code X-Mesh-Signature} verifies. {@link #stop} and {@link #start} take it down and up on the same port.
 */
final class WebhookReceiver implements AutoCloseable {
    /** One POST as received. */
    record Got(String id, String module, String type, byte[] body, boolean signed) {}

    private final WebhookSecret secret;
    private final List<Got> got = new CopyOnWriteArrayList<>();
    private int port;
    private volatile int holdAt = -1;
    /** Counted down when the POST {@link #holdNth} names has arrived (and waits for {@link #release}). */
    final java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
    private final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    private final java.util.concurrent.atomic.AtomicInteger posts = new java.util.concurrent.atomic.AtomicInteger();
    private HttpServer server;

    WebhookReceiver(WebhookSecret secret) { this.secret = secret; }

    /** Starts on a free port the first time, then on the same one. */
    synchronized WebhookReceiver start() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.createContext("/", ex -> {
            byte[] body = ex.getRequestBody().readAllBytes();
            boolean signed = secret != null && secret.verify(ex.getRequestHeaders().getFirst(Webhook.SIGNATURE), body);
            JsonNode n = Json.MAPPER.readTree(body);
            got.add(new Got(n.path("id").asText(null), n.path("module").asText(null), n.path("type").asText(null), body, signed));
            if (posts.incrementAndGet() == holdAt) { // kept, then answered 200 once the test releases it
                held.countDown();
                try {
                    release.await(20, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            ex.sendResponseHeaders(200, -1);
            ex.close();
        });
        server.start();
        port = server.getAddress().getPort();
        return this;
    }

    /** Stops at once: connections are refused until {@link #start}. */
    synchronized void stop() {
        server.stop(0);
        ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
        server = null;
    }

    /** The {@code n}th POST (from 1) is kept until {@link #release}; it is counted as received at once. */
    void holdNth(int n) { holdAt = n; }

    /** Answers the kept POST. */
    void release() { release.countDown(); }

    String url() { return "http://127.0.0.1:" + port + "/mesh"; }

    List<Got> got() { return List.copyOf(got); }

    /** @return each id once, in the order of its first arrival, by module */
    Map<String, List<String>> firstArrivalsByModule() {
        Map<String, List<String>> out = new LinkedHashMap<>();
        List<String> seen = new ArrayList<>();
        for (Got g : got) {
            if (seen.contains(g.id())) continue;
            seen.add(g.id());
            out.computeIfAbsent(g.module(), k -> new ArrayList<>()).add(g.id());
        }
        return out;
    }

    long distinctIds() { return got.stream().map(Got::id).distinct().count(); }

    @Override
    public synchronized void close() { if (server != null) stop(); }
}
