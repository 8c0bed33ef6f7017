package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.zk.Json;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;

/**
 * The HTTP calls the {@code mesh} client makes to the coordinator, over {@link HttpClient}.
 */
public final class CoordinatorClient {
    /** Connect timeout of each request. */
    public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /** Overall timeout of each request. */
    public static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private final URI base;
    private final String token;
    private final HttpClient http;

    /** The coordinator could not be reached (connection refused, timed out, closed). */
    public static final class UnreachableException extends IOException {
        /**
         * @param message what failed, naming the URL
         * @param cause   the I/O error
         */
        public UnreachableException(String message, Throwable cause) { super(message, cause); }
    }

    /**
     * An answer.
     *
     * @param status HTTP status
     * @param body   the body as text
     * @param json   the body as JSON, or {@code null} when it is not JSON
     */
    public record Response(int status, String body, JsonNode json) {
        /** @return the {@code error} field of a JSON error, else the body */
        public String error() {
            return json != null && json.hasNonNull("error") ? json.get("error").asText() : body;
        }
    }

    /**
     * @param base  coordinator URL such as {@code http://127.0.0.1:7070}
     * @param token bearer token for pushes, or {@code null}
     */
    public CoordinatorClient(URI base, String token) {
        String b = base.toString();
        this.base = URI.create(b.endsWith("/") ? b.substring(0, b.length() - 1) : b);
        this.token = token;
        this.http = HttpClient.newBuilder().connectTimeout(CONNECT_TIMEOUT).followRedirects(HttpClient.Redirect.NEVER).build();
    }

    /** @return the coordinator URL */
    public URI base() { return base; }

    /**
     * {@code POST /v1/pushes}.
     *
     * @param manifest the manifest YAML
     * @param revision the revision, or {@code null} for the coordinator's content hash
     * @return the answer (202, 400, 401, 413, ...)
     * @throws UnreachableException when the coordinator cannot be reached
     * @throws InterruptedException when interrupted
     */
    public Response push(String manifest, String revision) throws IOException, InterruptedException {
        HttpRequest.Builder b = request("/v1/pushes")
                .header("Content-Type", "application/yaml; charset=utf-8")
                .POST(HttpRequest.BodyPublishers.ofString(manifest, java.nio.charset.StandardCharsets.UTF_8));
        if (revision != null && !revision.isBlank()) b.header("X-Mesh-Revision", revision);
        if (token != null) b.header("Authorization", "Bearer " + token);
        return send(b.build());
    }

    /**
     * {@code GET path}.
     *
     * @param path such as {@code /v1/hosts}
     * @return the answer
     * @throws UnreachableException when the coordinator cannot be reached
     * @throws InterruptedException when interrupted
     */
    public Response get(String path) throws IOException, InterruptedException {
        return send(request(path).GET().build());
    }

    /**
     * {@code POST path} with a JSON body, the token and {@code X-Mesh-User} (this OS user, for the request's record).
     *
     * @param path such as {@code /v1/hosts/host-a/windows}
     * @param body a value {@link Json#MAPPER} writes
     * @return the answer
     * @throws UnreachableException when the coordinator cannot be reached
     * @throws InterruptedException when interrupted
     */
    public Response postJson(String path, Object body) throws IOException, InterruptedException {
        HttpRequest.Builder b = request(path)
                .header("Content-Type", "application/json; charset=utf-8")
                .header("X-Mesh-User", String.valueOf(System.getProperty("user.name")))
                .POST(HttpRequest.BodyPublishers.ofString(Json.text(body), java.nio.charset.StandardCharsets.UTF_8));
        if (token != null) b.header("Authorization", "Bearer " + token);
        return send(b.build());
    }

    /**
     * {@code DELETE path} with the token.
     *
     * @param path such as {@code /v1/hosts/host-a/windows/window-0000000003}
     * @return the answer
     * @throws UnreachableException when the coordinator cannot be reached
     * @throws InterruptedException when interrupted
     */
    public Response delete(String path) throws IOException, InterruptedException {
        HttpRequest.Builder b = request(path).DELETE();
        if (token != null) b.header("Authorization", "Bearer " + token);
        return send(b.build());
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(base + path)).timeout(REQUEST_TIMEOUT).header("Accept", "application/json");
    }

    private Response send(HttpRequest req) throws IOException, InterruptedException {
        HttpResponse<String> r;
        try {
            r = http.send(req, HttpResponse.BodyHandlers.ofString());
        } catch (ConnectException | HttpTimeoutException e) {
            throw new UnreachableException("cannot reach the coordinator at " + base + ": " + describe(e), e);
        } catch (IOException e) {
            throw new UnreachableException("lost the coordinator at " + base + ": " + describe(e), e);
        }
        JsonNode json = null;
        try {
            if (!r.body().isEmpty()) json = Json.MAPPER.readTree(r.body());
        } catch (IOException ignored) {
            // not JSON: keep the text
        }
        return new Response(r.statusCode(), r.body(), json);
    }

    private static String describe(Exception e) {
        String m = e.getMessage();
        if (m == null || m.isBlank()) m = e.getCause() != null && e.getCause().getMessage() != null ? e.getCause().getMessage() : e.getClass().getSimpleName();
        return m;
    }
}
