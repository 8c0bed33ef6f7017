package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.wire.Json;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

/** A running {@link HttpApi} on 127.0.0.1, port 0, and a JDK HTTP client to call it. */
public final class ApiFixture implements AutoCloseable {
    public final HttpApi api;
    final HttpClient http = HttpClient.newHttpClient();

    public ApiFixture(LoopbackZk zk, BearerToken token) throws Exception {
        this(zk, token, null);
    }

    public ApiFixture(LoopbackZk zk, BearerToken token, WebhookSecret webhook) throws Exception {
        api = new HttpApi(zk.client, zk.paths, new InetSocketAddress("127.0.0.1", 0), token, webhook);
        api.start();
    }

    public record Answer(int status, String body, JsonNode json, HttpResponse<byte[]> raw) {}

    Answer post(String path, byte[] body, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(api.uri() + path)).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(b::header);
        return send(b.build());
    }

    public Answer push(String yaml) throws Exception {
        return post("/v1/pushes", yaml.getBytes(java.nio.charset.StandardCharsets.UTF_8), Map.of());
    }

    public Answer get(String path) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(api.uri() + path)).GET().build());
    }

    Answer method(String method, String path) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(api.uri() + path)).method(method, HttpRequest.BodyPublishers.noBody()).build());
    }

    private Answer send(HttpRequest req) throws Exception {
        HttpResponse<byte[]> r = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
        String body = new String(r.body(), java.nio.charset.StandardCharsets.UTF_8);
        JsonNode json = null;
        try { json = Json.MAPPER.readTree(body); } catch (Exception ignored) { }
        return new Answer(r.statusCode(), body, json, r);
    }

    @Override
    public void close() { api.close(); }
}
