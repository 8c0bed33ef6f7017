package io.mesh.coordinator;

import io.mesh.testing.ScopedFixture;
import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.Json;
import org.apache.zookeeper.data.Stat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static org.awaitility.Awaitility.await;

/**
 * A running coordinator ({@link HttpApi} on 127.0.0.1, a free port) on the ZooKeeper of a {@link ZooKeeperExtension}
 * registered before this one, and a JDK HTTP client to call it ({@link #post}, {@link #push}, {@link #get}; every
 * request bounded, 60 s).
 *
 * <pre>{@code
 * @RegisterExtension static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();
 * @RegisterExtension final CoordinatorExtension api = new CoordinatorExtension(zk);   // a coordinator per test
 * }</pre>
 *
 * A static field runs one coordinator for the class. By default it asks for no credentials and has
 * {@link HttpLimits#DEFAULTS}; {@link #restart} gives the running test another configuration, {@link #another} a
 * second coordinator on the same ZooKeeper. Everything it started is closed after the test (or the class).
 */
public final class CoordinatorExtension extends ScopedFixture {
    private final ZooKeeperExtension zk;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private BearerToken token;
    private WebhookSecret webhook;
    private HttpLimits limits = HttpLimits.DEFAULTS;
    private Duration noAgentExpiry = PushStatus.DEFAULT_NO_AGENT_EXPIRY;
    private HttpApi api;
    private final List<HttpApi> others = new ArrayList<>();

    /** @param zk the ZooKeeper the coordinator writes to (registered before this extension) */
    public CoordinatorExtension(ZooKeeperExtension zk) {
        this.zk = zk;
    }

    /** @return this, asking for that bearer token on pushes */
    public CoordinatorExtension withToken(String bearerToken) {
        token = BearerToken.of(bearerToken);
        return this;
    }

    /** @return this, with those HTTP limits */
    public CoordinatorExtension withLimits(HttpLimits l) {
        limits = l;
        return this;
    }

    /** @return this, with that {@code --no-agent-expiry} */
    public CoordinatorExtension withNoAgentExpiry(Duration d) {
        noAgentExpiry = d;
        return this;
    }

    @Override
    protected void afterEachTest() {
        closeOthers();
    }

    /** Starts the coordinator as configured (the callbacks do; fixtures that compose this one call it themselves). */
    @Override
    public void start() throws IOException {
        if (api == null) api = started(token, webhook, limits);
    }

    private HttpApi started(BearerToken t, WebhookSecret w, HttpLimits l) throws IOException {
        HttpApi a = new HttpApi(zk.client(), zk.paths(), new InetSocketAddress("127.0.0.1", 0), t, w, l, noAgentExpiry);
        a.start();
        RUNNING.add(a);
        return a;
    }

    /** Coordinators started by any instance and not closed yet, in this JVM. */
    private static final Set<HttpApi> RUNNING = ConcurrentHashMap.newKeySet();

    /**
     * Waits until every coordinator this JVM's tests run serves {@code path} as ZooKeeper holds it now: a status read
     * after a test wrote a report or an agent node by hand sees it, as an agent's own writes are seen a few
     * milliseconds later ({@link FleetCache}).
     *
     * @param zk   the ZooKeeper the node was written to
     * @param path the node written (or deleted)
     * @throws Exception from ZooKeeper
     */
    public static void awaitServed(ZooKeeperExtension zk, String path) throws Exception {
        Stat now = zk.client().checkExists().forPath(path);
        await().atMost(Duration.ofSeconds(10)).until(() -> RUNNING.stream().allMatch(a -> a.fleetCache().serves(path, now)));
    }

    /**
     * Stops the running coordinator and starts one that asks for these credentials, for the rest of the test.
     *
     * @param t a bearer token, or null
     * @param w a webhook secret, or null
     */
    public void restart(BearerToken t, WebhookSecret w) throws IOException {
        stop();
        api = started(t, w, limits);
    }

    /**
     * Stops the running coordinator and starts one with these HTTP limits (and the credentials configured here), for
     * the rest of the test.
     */
    public void restart(HttpLimits l) throws IOException {
        stop();
        api = started(token, webhook, l);
    }

    /** @return a second coordinator on the same ZooKeeper (no credentials), closed after the test */
    public HttpApi another() throws IOException {
        HttpApi a = started(null, null, HttpLimits.DEFAULTS);
        others.add(a);
        return a;
    }

    /** Stops the coordinator now (its port then refuses connections); {@link #api()} still names it. */
    public void stop() {
        if (api != null) api.close();
    }

    /** Stops every coordinator it started. */
    @Override
    public void close() {
        closeOthers();
        if (api != null) api.close();
        if (api != null) RUNNING.remove(api);
        api = null;
    }

    private void closeOthers() {
        others.forEach(HttpApi::close);
        RUNNING.removeAll(others);
        others.clear();
    }

    /** @return the coordinator */
    public HttpApi api() {
        if (api == null) throw new IllegalStateException("the coordinator was not started");
        return api;
    }

    /** @return its base URL, such as {@code http://127.0.0.1:43127} */
    public URI uri() { return api().uri(); }

    /** What the coordinator answered: status, body, the body as JSON (null when it is not), the whole response. */
    public record Answer(int status, String body, JsonNode json, HttpResponse<byte[]> raw) {}

    /** {@code POST path} with that body and those headers. */
    public Answer post(String path, byte[] body, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(uri() + path)).POST(HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(b::header);
        return send(b);
    }

    /** {@code POST /v1/pushes} of a manifest, without a revision or credentials. */
    public Answer push(String yaml) throws Exception {
        return post("/v1/pushes", yaml.getBytes(StandardCharsets.UTF_8), Map.of());
    }

    /** {@code GET path}. */
    public Answer get(String path) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(uri() + path)).GET());
    }

    /** {@code METHOD path} without a body. */
    public Answer method(String method, String path) throws Exception {
        return send(HttpRequest.newBuilder(URI.create(uri() + path)).method(method, HttpRequest.BodyPublishers.noBody()));
    }

    /** {@code METHOD path} with that body (empty: none) and those headers. */
    public Answer method(String method, String path, byte[] body, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(uri() + path))
                .method(method, body.length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(b::header);
        return send(b);
    }

    private Answer send(HttpRequest.Builder req) throws Exception {
        HttpResponse<byte[]> r = http.send(req.timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofByteArray());
        String body = new String(r.body(), StandardCharsets.UTF_8);
        JsonNode json = null;
        try {
            json = Json.MAPPER.readTree(body);
        } catch (Exception notJson) {
            // json stays null
        }
        return new Answer(r.statusCode(), body, json, r);
    }
}
