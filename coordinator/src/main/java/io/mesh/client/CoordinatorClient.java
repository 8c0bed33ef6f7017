package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.mesh.wire.Json;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.HttpURLConnection;
import java.net.Proxy;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLHandshakeException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The HTTP calls the {@code mesh} client makes to the coordinator: GETs over {@link HttpURLConnection}, the others
 * over {@link HttpClient}, made on the first of them.
 *
 * <p>Why two: most commands only GET, and {@code HttpClient} costs a short-lived JVM a quarter of a second before its
 * first request (it sets up TLS and its own threads even for {@code http://}); {@code HttpURLConnection} asks in a
 * tenth of that. A POST or DELETE stays on {@code HttpClient}, which sends and reads at once (a push refused while
 * still being sent reads its 413: decision 7) and never sends a request again by itself, where
 * {@code HttpURLConnection} may send a POST twice; a GET it sends again at most once, which a GET may.
 *
 * <p>It may be given several coordinators (they share one ZooKeeper, so any of them answers the same): a request
 * goes to the one that answered last, and to the next, in order, when that one does not answer. Which failures move
 * on depends on whether the request may already have been done: a GET moves on for any I/O failure (refused, timed
 * out, connection lost); a POST or DELETE only when its connection could not be made (refused, connect timeout), so
 * that a push whose answer was lost is never written twice. An HTTP answer, errors included, never moves on.
 */
public final class CoordinatorClient {
    /** Connect timeout of each request. */
    public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /** Overall timeout of each request. */
    public static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
    /**
     * Reads and prints answers as trees. Not {@link Json#MAPPER}: a tree needs no record types, and that mapper's
     * {@code JavaTimeModule} is about 100 classes a {@code mesh status} would load for nothing (docs/benchmark-notes.md, B9).
     */
    static final ObjectMapper TREES = new ObjectMapper();

    private final List<URI> bases;
    private final String token;
    /** TLS of {@code https://} URLs; made at the first one's request when no option gave it ({@link #tls()}). */
    private volatile ClientTls tls;
    /** Made by the first POST or DELETE ({@link #http()}). */
    private HttpClient http;
    /** Index in {@link #bases} of the coordinator that answered last: the first one asked next time. */
    private volatile int current;
    private volatile Consumer<String> onFailover = m -> { };

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
        this(List.of(base), token);
    }

    /**
     * @param bases coordinator URLs such as {@code http://127.0.0.1:7171}, in the order they are tried; at least one
     * @param token bearer token for pushes, or {@code null}
     */
    public CoordinatorClient(List<URI> bases, String token) {
        this(bases, token, null);
    }

    /**
     * @param bases coordinator URLs, in the order they are tried; at least one
     * @param token bearer token for pushes, or {@code null}
     * @param tls   the CAs trusted and the client certificate for {@code https://} URLs ({@code --ca}, {@code --cert},
     *              {@code --key}), or {@code null} for the system's CAs and no client certificate
     */
    CoordinatorClient(List<URI> bases, String token, ClientTls tls) {
        this.tls = tls;
        if (bases.isEmpty()) throw new IllegalArgumentException("no coordinator URL");
        List<URI> trimmed = new ArrayList<>();
        for (URI base : bases) {
            String b = base.toString();
            trimmed.add(URI.create(b.endsWith("/") ? b.substring(0, b.length() - 1) : b));
        }
        this.bases = List.copyOf(trimmed);
        this.token = token;
    }

    /** The request could not be sent: no connection was made. */
    private static final class NotSentException extends IOException {
        NotSentException(IOException cause) { super(cause); }
    }

    /** @return the URL of the coordinator asked first: the one that answered last */
    public URI base() { return bases.get(current); }

    /** @return every coordinator URL, in the order given */
    public List<URI> bases() { return bases; }

    /**
     * @param notice told, in one line, each time a coordinator does not answer and the next one is asked
     * @return this client
     */
    public CoordinatorClient onFailover(Consumer<String> notice) {
        this.onFailover = notice == null ? m -> { } : notice;
        return this;
    }

    /**
     * {@code POST /v1/pushes}, with {@code X-Mesh-User} (this OS user, for the push's {@code by}).
     *
     * @param manifest the manifest YAML
     * @param revision the revision, or {@code null} for the coordinator's content hash
     * @return the answer (202, 400, 401, 413, ...)
     * @throws UnreachableException when the coordinator cannot be reached
     * @throws InterruptedException when interrupted
     */
    public Response push(String manifest, String revision) throws IOException, InterruptedException {
        return push(manifest, revision, false);
    }

    /**
     * As {@link #push(String, String)}; with {@code force}, fields some targeted agent does not know are sent anyway
     * ({@code ?force=true}).
     */
    public Response push(String manifest, String revision, boolean force) throws IOException, InterruptedException {
        return sendOverHttpClient(false, base -> {
            HttpRequest.Builder b = request(base, "/v1/pushes" + (force ? "?force=true" : ""))
                    .header("Content-Type", "application/yaml; charset=utf-8")
                    .header("X-Mesh-User", String.valueOf(System.getProperty("user.name")))
                    .POST(HttpRequest.BodyPublishers.ofString(manifest, StandardCharsets.UTF_8));
            if (revision != null && !revision.isBlank()) b.header("X-Mesh-Revision", revision);
            if (token != null) b.header("Authorization", "Bearer " + token);
            return b.build();
        });
    }

    /**
     * {@code POST /v1/plans}: a push's request, planned by the agents and pushed nowhere.
     *
     * @param manifest the manifest YAML
     * @param revision the revision, or {@code null} for the coordinator's content hash
     * @return the answer (202, 400, 401, 413, ...)
     * @throws UnreachableException when the coordinator cannot be reached
     * @throws InterruptedException when interrupted
     */
    public Response plan(String manifest, String revision) throws IOException, InterruptedException {
        return sendOverHttpClient(false, base -> {
            HttpRequest.Builder b = request(base, "/v1/plans")
                    .header("Content-Type", "application/yaml; charset=utf-8")
                    .header("X-Mesh-User", String.valueOf(System.getProperty("user.name")))
                    .POST(HttpRequest.BodyPublishers.ofString(manifest, StandardCharsets.UTF_8));
            if (revision != null && !revision.isBlank()) b.header("X-Mesh-Revision", revision);
            if (token != null) b.header("Authorization", "Bearer " + token);
            return b.build();
        });
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
        return send(true, base -> get(URI.create(base + path), null));
    }

    /**
     * {@code GET path} with the token, for a read the coordinator guards as the writes beside it (such as
     * {@code /v1/holds/{host}/{container}}).
     *
     * @param path such as {@code /v1/holds/host-a/store-registry}
     * @return the answer (200, 401, 403, 404, ...)
     * @throws UnreachableException when the coordinator cannot be reached
     * @throws InterruptedException when interrupted
     */
    public Response getWithToken(String path) throws IOException, InterruptedException {
        return send(true, base -> get(URI.create(base + path), token));
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
        return postDocument(path, Json.text(body).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * {@code POST path} with a JSON document as it is (a backup), the token and {@code X-Mesh-User}.
     *
     * @param path such as {@code /v1/restore}
     * @param body the document's bytes, sent unchanged
     * @return the answer
     * @throws UnreachableException when the coordinator cannot be reached
     * @throws InterruptedException when interrupted
     */
    public Response postDocument(String path, byte[] body) throws IOException, InterruptedException {
        return sendOverHttpClient(false, base -> {
            HttpRequest.Builder b = request(base, path)
                    .header("Content-Type", "application/json; charset=utf-8")
                    .header("X-Mesh-User", String.valueOf(System.getProperty("user.name")))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body));
            if (token != null) b.header("Authorization", "Bearer " + token);
            return b.build();
        });
    }

    /**
     * {@code DELETE path} with the token and {@code X-Mesh-User} (this OS user, for the request's record).
     *
     * @param path such as {@code /v1/hosts/host-a/windows/window-0000000003}
     * @return the answer
     * @throws UnreachableException when the coordinator cannot be reached
     * @throws InterruptedException when interrupted
     */
    public Response delete(String path) throws IOException, InterruptedException {
        return sendOverHttpClient(false, base -> {
            HttpRequest.Builder b = request(base, path).header("X-Mesh-User", String.valueOf(System.getProperty("user.name"))).DELETE();
            if (token != null) b.header("Authorization", "Bearer " + token);
            return b.build();
        });
    }

    private static HttpRequest.Builder request(URI base, String path) {
        return HttpRequest.newBuilder(URI.create(base + path)).timeout(REQUEST_TIMEOUT).header("Accept", "application/json");
    }

    private synchronized HttpClient http() {
        if (http == null) {
            HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(CONNECT_TIMEOUT).followRedirects(HttpClient.Redirect.NEVER);
            if (bases.stream().anyMatch(CoordinatorClient::https)) b.sslContext(tls().context());
            http = b.build();
        }
        return http;
    }

    /** @return the TLS of {@code https://} URLs: the options', else the system's CAs and no client certificate */
    private synchronized ClientTls tls() {
        if (tls == null) tls = ClientTls.of(null, null, null);
        return tls;
    }

    private static boolean https(URI base) { return "https".equalsIgnoreCase(base.getScheme()); }

    /** One coordinator's answer to one request; throws {@link NotSentException} when no connection was made. */
    @FunctionalInterface
    private interface Exchange {
        Response with(URI base) throws IOException, InterruptedException;
    }

    /** {@link #send} of a request made for {@link HttpClient}. */
    private Response sendOverHttpClient(boolean repeatable, Function<URI, HttpRequest> request) throws IOException, InterruptedException {
        return send(repeatable, base -> {
            HttpResponse<String> r;
            try {
                r = http().send(request.apply(base), HttpResponse.BodyHandlers.ofString());
            } catch (ConnectException | HttpConnectTimeoutException | SSLHandshakeException e) {
                // A refused handshake sent nothing: the request is written only once TLS is up.
                throw new NotSentException(e);
            }
            return response(r.statusCode(), r.body());
        });
    }

    /**
     * A GET as {@link HttpClient} makes it here: the same timeouts, no redirect followed, no proxy, the body decoded
     * by its charset (UTF-8 when it names none); with {@code Authorization: Bearer token} unless {@code token} is null.
     */
    private Response get(URI url, String token) throws IOException {
        HttpURLConnection c = (HttpURLConnection) url.toURL().openConnection(Proxy.NO_PROXY);
        // The default hostname verifier is kept: with it the JDK checks the host in the handshake (endpoint identification).
        if (c instanceof HttpsURLConnection s) s.setSSLSocketFactory(tls().context().getSocketFactory());
        c.setConnectTimeout((int) CONNECT_TIMEOUT.toMillis());
        c.setReadTimeout((int) REQUEST_TIMEOUT.toMillis());
        c.setInstanceFollowRedirects(false);
        c.setUseCaches(false);
        c.setRequestProperty("Accept", "application/json");
        if (token != null) c.setRequestProperty("Authorization", "Bearer " + token);
        try {
            c.connect();
        } catch (IOException e) {
            throw new NotSentException(e);
        }
        int status = c.getResponseCode();
        byte[] body;
        try (InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream()) {
            body = in == null ? new byte[0] : in.readAllBytes();
        }
        return response(status, new String(body, charset(c.getContentType())));
    }

    /** @return the charset a {@code Content-Type} names, else UTF-8 */
    private static Charset charset(String contentType) {
        if (contentType != null) {
            for (String param : contentType.split(";")) {
                String p = param.strip();
                if (p.regionMatches(true, 0, "charset=", 0, 8)) {
                    try {
                        return Charset.forName(p.substring(8).replace("\"", "").strip());
                    } catch (IllegalArgumentException e) {
                        break;
                    }
                }
            }
        }
        return StandardCharsets.UTF_8;
    }

    /**
     * Sends the request to the coordinator that answered last, then to the next ones in order while they do not answer.
     *
     * @param repeatable true when the request may be sent again after it may have arrived (a GET); false when only a
     *                   request that never left (its connection could not be made) may go to another coordinator
     * @param exchange   the request to one coordinator, and its answer
     * @throws UnreachableException when no coordinator answered (naming each URL and why), or when a request that is
     *                              not repeatable was sent and its answer lost
     */
    private Response send(boolean repeatable, Exchange exchange) throws IOException, InterruptedException {
        int first = current;
        List<String> failures = new ArrayList<>();
        UnreachableException last = null;
        for (int k = 0; k < bases.size(); k++) {
            int i = (first + k) % bases.size();
            URI base = bases.get(i);
            Response r;
            if (tls != null) tls.reset();
            try {
                r = exchange.with(base);
            } catch (NotSentException notSent) {
                // Never connected: nothing was sent, any other coordinator may take the request.
                IOException e = (IOException) notSent.getCause();
                last = new UnreachableException("cannot reach the coordinator at " + base + ": " + describe(e, base), e);
                failures.add(base + ": " + describe(e, base));
                failover(k, base, describe(e, base), bases.get((i + 1) % bases.size()));
                continue;
            } catch (HttpTimeoutException | SocketTimeoutException e) {
                last = new UnreachableException("cannot reach the coordinator at " + base + ": no answer within "
                        + REQUEST_TIMEOUT.toSeconds() + "s" + (repeatable ? "" : lostNote()), e);
                if (!repeatable) throw last;
                failures.add(base + ": no answer within " + REQUEST_TIMEOUT.toSeconds() + "s");
                failover(k, base, "no answer within " + REQUEST_TIMEOUT.toSeconds() + "s", bases.get((i + 1) % bases.size()));
                continue;
            } catch (IOException e) {
                String tlsRefusal = tls == null ? null : tls.explain(e, base);
                if (tlsRefusal != null && !repeatable && !tls.surelyNotSent(e)) {
                    // A connection closed after the handshake asked for a certificate: a refusal, or a request taken and
                    // then lost. One that may not be sent twice is not sent elsewhere.
                    throw new UnreachableException("lost the coordinator at " + base + ": " + tlsRefusal
                            + ", or it took the request and lost the connection" + lostNote(), e);
                }
                if (tlsRefusal != null) {
                    // TLS refused before the request reached the API (a client certificate is checked in the handshake,
                    // which TLS 1.3 finishes after the client has written): it was not done there.
                    last = new UnreachableException("cannot reach the coordinator at " + base + ": " + tlsRefusal, e);
                    failures.add(base + ": " + tlsRefusal);
                    failover(k, base, tlsRefusal, bases.get((i + 1) % bases.size()));
                    continue;
                }
                last = new UnreachableException("lost the coordinator at " + base + ": " + describe(e, base) + (repeatable ? "" : lostNote()), e);
                if (!repeatable) throw last;
                failures.add(base + ": " + describe(e, base));
                failover(k, base, describe(e, base), bases.get((i + 1) % bases.size()));
                continue;
            }
            current = i;
            return r;
        }
        if (bases.size() == 1) throw last;
        throw new UnreachableException("cannot reach any coordinator: " + String.join("; ", failures), last);
    }

    /** Tells {@link #onFailover} that {@code base} did not answer and {@code next} is asked, unless it was the last. */
    private void failover(int attempt, URI base, String why, URI next) {
        if (attempt < bases.size() - 1) onFailover.accept(base + " does not answer (" + why + "); asking " + next);
    }

    private String lostNote() {
        return bases.size() == 1 ? "" : " (the request may have been done there, so it was not sent to another coordinator)";
    }

    private static Response response(int status, String body) {
        JsonNode json = null;
        try {
            if (!body.isEmpty()) json = TREES.readTree(body);
        } catch (IOException ignored) {
            // not JSON: keep the text
        }
        return new Response(status, body, json);
    }

    /** @return why a request to {@code base} failed: TLS's reason in its fix's words ({@link ClientTls#explain}), else the I/O error's */
    private String describe(IOException e, URI base) {
        String tlsRefusal = tls == null ? null : tls.explain(e, base);
        return tlsRefusal != null ? tlsRefusal : describe(e);
    }

    private static String describe(Exception e) {
        if (e instanceof UnknownHostException) return "unknown host " + e.getMessage();
        String m = e.getMessage();
        if (m == null || m.isBlank()) m = e.getCause() != null && e.getCause().getMessage() != null ? e.getCause().getMessage() : e.getClass().getSimpleName();
        return m;
    }
}
