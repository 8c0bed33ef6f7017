package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.curator.ZkClock;
import io.mesh.manifest.ManifestError;
import io.mesh.manifest.ManifestException;
import io.mesh.manifest.ModuleName;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.Printable;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.HistoryRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.PushRecord;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.Times;
import io.mesh.wire.WindowRequest;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.DetectorConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The coordinator's HTTP API on Jetty's server, with {@link HttpLimits} (SPEC.md, "Coordinator HTTP API";
 * docs/decisions/0007-coordinator-http-limits.md). JSON in and out
 * through {@link Json#MAPPER}; every error is {@code {"error": "..."}} (or {@code {"errors": [...]}} for an invalid
 * manifest or audit query). A request refused, nothing written, is a {@link Refusal} that the stores and the handlers
 * throw and {@code handle} alone answers: {@code {"error"}}, with {@code "field"} when it names one.
 *
 * <ul>
 *   <li>{@code POST /v1/pushes}: body = manifest YAML (at most {@link HttpLimits#maxPushBytes()}, UTF-8), optional header
 *       {@code X-Mesh-Revision}. {@code 202 {"push","revision","modules","hosts"}}; {@code 400 {"errors":[{"document",
 *       "field","message"}]}} with nothing written; {@code 401} without credentials when a token or webhook secret
 *       is configured, {@code 403} with a wrong token or signature ({@link WebhookSecret}), both before any of the
 *       body is read; {@code 413 {"error","limit"}} when too large, by its {@code Content-Length} (nothing read) or as
 *       it streams; {@code 408} when the body is slower than the read timeout; {@code 409} when racing writers won
 *       every attempt; {@code 503} when ZooKeeper is unreachable.</li>
 *   <li>{@code GET /v1/pushes}: {@code {"pushes":[PushRecord...]}}, newest first, at most {@code ?limit=N}
 *       (default {@value #DEFAULT_LIST}, at most {@value #MAX_LIST}).</li>
 *   <li>{@code GET /v1/pushes/{push}}: {@link PushStatus.View}; 404 for an unknown push.</li>
 *   <li>{@code POST /v1/pushes/{push}/cancel} (token as pushes, no body): drops the push ({@link PushCancels}): its
 *       pending, deferred and waiting targets read {@code cancelled}. {@code 200 {"cancelled","already"}}; {@code 404}
 *       for an unknown push, {@code 409} when nothing is left to cancel (docs/decisions/0030-cancel-and-expire-pushes.md).</li>
 *   <li>{@code GET /v1/held}: {@code {"held":[HeldRecord...],"windows":[WindowRecord...],"holds":[OperatorHoldView...],
 *       "offline":[{host, module, lastKnown}]}}: window holds, open windows, operator holds (each with whether it
 *       expired), then the window each host without an agent was running when it went, as last known
 *       ({@link FleetStatus.LastKnownWindow}): its held nodes went with its session.</li>
 *   <li>{@code POST /v1/holds}: body {@code {"host","container","reason","for"?,"stop"?}}, token as window requests:
 *       an operator hold ({@link HoldStore}). {@code 201} with the held node written; {@code 400}/{@code 404}
 *       {@code {"error","field"}} naming the field at fault, nothing written; {@code 409} when a window or another
 *       operator holds the container. The hold's {@code by} is the named token's name, {@code X-Mesh-User} only a
 *       claim beside it. {@code GET /v1/holds/{host}/{container}} (token): {@code 200} with the held node (with
 *       {@code hold.confirmed} once its host's agent confirmed it), {@code "agent"} (the host's agent node exists) and
 *       {@code "expired"}; {@code 400} for a bad name, {@code 404} when no operator hold is there.
 *       {@code DELETE /v1/holds/{host}/{container}}: {@code 200 {"released"}}; 404 when there is no operator hold,
 *       409 for a window's. {@code DELETE /v1/holds/{host}/{container}?stale=true} (an admin's token, {@code --admin}):
 *       removes a held node nothing owns, {@code 200 {"released","stale":true}}; 409 for an operator's hold or a live
 *       session's node, 404 for none, 401/403 without an admin's token.</li>
 *   <li>{@code GET /v1/hosts}: {@code {"hosts":[FleetView.Host...]}}.</li>
 *   <li>{@code GET /healthz}: {@code 200 {"status":"ok","zookeeper":"connected"}}, else 503.</li>
 *   <li>{@code GET /metrics}: Prometheus text ({@link Metrics}).</li>
 *   <li>{@code GET /v1/openapi.json}: this API as an OpenAPI 3.1 document (the resource {@code openapi.json} beside this
 *       class; docs/reference/http.md).</li>
 *   <li>{@code GET /v1/fleet}: {@link FleetStatus.Fleet}: hosts &times; modules, open windows, held containers,
 *       pending pushes.</li>
 *   <li>{@code GET /v1/windows}: {@code {"windows":[FleetStatus.OpenWindow...],"slots":[FleetStatus.Slot...]}}: open
 *       windows with when each should end and the push waiting on it; fleet-wide slots with who runs and who waits.</li>
 *   <li>{@code GET /v1/locks}: {@code {"locks":[FleetStatus.Lock...]}}: who holds and who waits for each module lock.</li>
 *   <li>{@code POST /v1/hosts/{host}/windows}: body {@code {"module","schedule"}}; asks that host's agent to run a
 *       window now ({@link WindowRequestStore}). Same token as pushes. {@code 202 {"request","host","path"}};
 *       {@code 400} for a module, schedule or host that does not fit; {@code 409} when the host has no agent.</li>
 *   <li>{@code GET /v1/hosts/{host}/windows/{request}}: the {@link WindowRequest}; 404 when gone.
 *       {@code DELETE} (token) deletes it: once read, or to cancel it before it runs.</li>
 *   <li>{@code GET /v1/modules/{module}/history}: {@code {"module","history":[HistoryRecord...]}}, newest first (at
 *       most {@value HistoryRecord#KEPT}); 404 for a module never pushed.</li>
 *   <li>{@code POST /v1/modules/{module}/rollback}: optional body {@code {"to":"push-..."}}; pushes that push's spec
 *       again (default: the revision before the current one), a push whose record carries {@code rollbackOf}. Same
 *       token as pushes. {@code 202 {"push","revision","modules","hosts","rollbackOf"}}; {@code 404} for an unknown
 *       module or a {@code to} not in its history, {@code 400} for a bad {@code to} or nothing to roll back to, each
 *       {@code {"error","field"}}; {@code 400 {"errors"}} when the spec is no longer valid.</li>
 *   <li>{@code DELETE /v1/modules/{module}}: removes the module from every host (a tombstone desired node), recorded
 *       like a push. Same token as pushes. {@code 202 {"push","revision","modules","hosts"}}; {@code 404} for a module
 *       with no desired node, or deleted already.</li>
 *   <li>{@code POST /v1/plans}: body and credentials as a push; the manifest is validated as a push (400 with the
 *       same errors, nothing written), then planned by each targeted host's agent, which changes nothing
 *       ({@link PlanStore}). {@code 202 {"plan","revision","modules","hosts","noAgent","schedules"}}: {@code schedules}
 *       lists each schedule the push would add, change (with the fields) or remove ({@link ScheduleDiff}).</li>
 *   <li>{@code GET /v1/plans/{plan}}: {@link PlanStore.View}: per host {@code pending}, {@code no-agent}, the agent's
 *       answer, or {@code failed}; 404 for an unknown (or trimmed) plan.</li>
 *   <li>{@code GET /v1/rollouts/{module}}: the module's {@link io.mesh.wire.RolloutRecord} as its hosts' children say
 *       ({@link io.mesh.curator.RolloutNodes}), without the spec it replaces; 404 when it has none. {@code POST /v1/rollouts/{module}/resume}, {@code .../abort} and {@code .../promote} (token as
 *       pushes), optional body {@code {"push":"push-..."}}: {@code 200} with the record as written; {@code 409} when it
 *       is not paused (resume), has ended (abort), is not a {@code promote: manual} rollout waiting for its promote
 *       (promote), or is of another push than the body names (docs/decisions/0013-rollouts.md).</li>
 *   <li>{@code POST /v1/freezes} (token as pushes), body {@code {"module": M | "all": true, "for": "2h" | "until": ISO,
 *       "reason": R}}: {@code 201} with the freeze as written ({@link FreezeStore.Freeze}), {@code replaced} (the freeze it
 *       replaced) and {@code applying} (each {@code {module, host, since, process}} whose apply holds the module lock
 *       now: the container changes it has begun still land), when any; {@code 400 {"error","field"}}
 *       naming the field and the fix, nothing written. {@code GET /v1/freezes}: {@code {"freezes":[...]}}.
 *       {@code DELETE /v1/freezes/{module}} or {@code /v1/freezes/_all} (token): {@code 200}, or {@code 404} when there
 *       is none (docs/decisions/0014-freezes.md).</li>
 *   <li>{@code POST /v1/drains} (token as holds), body {@code {"host", "reason", "for"?, "stop"?}}: {@code 201} with the
 *       drain as written ({@link DrainStore.Drain}); the host's agent then holds every container of its modules.
 *       {@code GET /v1/drains}: {@code {"drains":[...]}}. {@code DELETE /v1/drains/{host}} (token): {@code 200} with
 *       {@code released}, the drain's holds deleted with it; {@code 404} when the host is not drained (decision 37).</li>
 *   <li>{@code GET /v1/audit?since=&until=&host=&module=&timeout=}: {@code {from, to, exit, hosts:[AuditReport...]}}, each
 *       host's ledger over the span judged by {@link io.mesh.wire.AuditChecker} (SPEC.md "Audit"; {@link AuditStore});
 *       {@code 400 {"errors":[{"field","message"}]}} naming each field at fault and the fix ({@link AuditQuery}, an
 *       unknown host or module). Open as the other GETs.</li>
 *   <li>{@code GET /v1/why/{host}/{container}}: {@link WhyStore.Why}, the chain of reasons the container is as it is
 *       (held, deferred, rollout, freeze, slot, last apply, today's audit violations, asking the host's ledger for up to
 *       5 s); {@code 404 {"error","field"}} for an unknown host or container, naming the fix.</li>
 *   <li>{@code GET /}: the page ({@link Dashboard}); {@code /ui/fragment}, {@code /ui/mesh.css}, {@code /ui/mesh.js}. Its
 *       "Last 24 hours" shows the audit {@link #auditSource(AuditSource)} gives it, else "audit unavailable".</li>
 * </ul>
 * A known path with another method is 405 (with {@code Allow}); any other path is 404.
 */
public final class HttpApi implements AutoCloseable {
    /** Largest push body accepted by default, in bytes (1 MiB): {@link HttpLimits#MAX_PUSH_BYTES}. */
    public static final int MAX_BODY = HttpLimits.MAX_PUSH_BYTES;
    /** How long {@link #start()} waits for the {@link FleetCache} to load before it serves anyway. */
    static final Duration CACHE_LOAD_WAIT = Duration.ofSeconds(10);
    /** Largest body of a window request ({@code {"module","schedule"}}), in bytes. */
    public static final int MAX_REQUEST_BODY = 4096;
    /** Default number of pushes {@code GET /v1/pushes} lists. */
    public static final int DEFAULT_LIST = 50;
    /** Most pushes {@code GET /v1/pushes} lists. */
    public static final int MAX_LIST = 500;
    /** Most audits ({@code GET /v1/audit}, {@code GET /v1/why}) served at once; one more is answered 503. */
    public static final int MAX_AUDITS = 4;
    /** Header carrying the revision of a push. */
    public static final String REVISION_HEADER = "X-Mesh-Revision";
    /** Header carrying the source of a push (such as a commit id): its {@code source}. */
    public static final String SOURCE_HEADER = "X-Mesh-Source";

    private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final RolloutStore rollouts;
    /** Folds the rollouts' hosts' children into their rollout nodes (decision 13). */
    private final RolloutFold rolloutFold;
    private final FreezeStore freezes;
    private final BearerToken token;
    private final WebhookSecret webhook;
    private final PushWriter writer;
    private final PushStatus status;
    /** {@code POST /v1/pushes/{push}/cancel}. */
    private final PushCancels cancels;
    private final FleetView fleet;
    /** The fleet-sized subtrees the status reads are served from. */
    private final FleetCache cache;
    /** Window nodes seen to go: an offline host's last known window ({@link FleetStatus.LastKnownWindow}). */
    private final VanishedWindows vanished;
    private final FleetStatus fleetStatus;
    private final WindowRequestStore requests;
    private final HoldStore holds;
    private final DrainStore drains;
    private final PlanStore plans;
    private final AuditStore audits;
    private final BackupStore backups;
    private final WhyStore whys;
    /**
     * Audits ({@code /v1/audit}, {@code /v1/why}) running now: each holds a serving thread while the agents answer (up
     * to its timeout), so at most {@link #MAX_AUDITS} of the {@link HttpLimits#THREADS} serve them at once, and the rest
     * of the API keeps answering.
     */
    private final java.util.concurrent.Semaphore auditSlots = new java.util.concurrent.Semaphore(MAX_AUDITS);
    private final Metrics metrics = new Metrics();
    /** The events of holds and freezes for webhooks (decision 34). */
    private final CoordinatorEvents events;
    private final FreezeBoundaries freezeBoundaries;
    /** What other parts of the coordinator add to {@code GET /metrics} (the webhooks' {@link Notifier}). */
    private volatile java.util.function.Supplier<String> moreMetrics = () -> "";
    /** The page; its "Last 24 hours" has an audit once {@link #auditSource} gives one. */
    private final Dashboard dashboard = new Dashboard();
    private final HttpLimits limits;
    /** The certificate and key it serves HTTPS with; {@code null} for plain HTTP. */
    private final ServerTls tls;
    private final Server server;
    private final ServerConnector connector;
    private final NetworkConnectionLimit connectionLimit;
    private final HeadDeadline heads;
    /** The address the listening socket is bound to. */
    private final InetSocketAddress bound;

    /**
     * Binds the listening socket (nothing is served until {@link #start()}), with {@link HttpLimits#DEFAULTS}.
     *
     * @param client a started Curator client
     * @param paths  the layout under the configured root
     * @param listen address to bind, such as {@code 127.0.0.1:7070}; port 0 picks a free port
     * @param token  the token {@code POST /v1/pushes} requires, or {@code null} for none
     * @throws IOException when the address cannot be bound
     */
    public HttpApi(CuratorFramework client, ZkPaths paths, InetSocketAddress listen, BearerToken token) throws IOException {
        this(client, paths, listen, token, null);
    }

    /**
     * Binds the listening socket (nothing is served until {@link #start()}), with {@link HttpLimits#DEFAULTS}.
     *
     * @param client  a started Curator client
     * @param paths   the layout under the configured root
     * @param listen  address to bind, such as {@code 127.0.0.1:7070}; port 0 picks a free port
     * @param token   the bearer token, or {@code null}
     * @param webhook the webhook secret, or {@code null}
     * @throws IOException when the address cannot be bound
     * @see #HttpApi(CuratorFramework, ZkPaths, InetSocketAddress, BearerToken, WebhookSecret, HttpLimits)
     */
    public HttpApi(CuratorFramework client, ZkPaths paths, InetSocketAddress listen, BearerToken token, WebhookSecret webhook) throws IOException {
        this(client, paths, listen, token, webhook, HttpLimits.DEFAULTS);
    }

    /**
     * Binds the listening socket (nothing is served until {@link #start()}). With a token or a webhook secret (or
     * both), {@code POST /v1/pushes} needs one of them: {@code Authorization: Bearer <token>}, or
     * {@code X-Hub-Signature-256: sha256=<HMAC-SHA256 of the body>}. Neither header: {@code 401}; a wrong token:
     * {@code 403}; both answered before any of the body is read. A wrong signature: {@code 403} once the body is read.
     * The server is Jetty's, with {@code limits} (docs/decisions/0007-coordinator-http-limits.md).
     *
     * @param client  a started Curator client
     * @param paths   the layout under the configured root
     * @param listen  address to bind, such as {@code 127.0.0.1:7070}; port 0 picks a free port
     * @param token   the bearer token, or {@code null}
     * @param webhook the webhook secret, or {@code null}
     * @param limits  what one client gets at most
     * @throws IOException when the address cannot be bound
     */
    public HttpApi(CuratorFramework client, ZkPaths paths, InetSocketAddress listen, BearerToken token, WebhookSecret webhook,
                   HttpLimits limits) throws IOException {
        this(client, paths, listen, token, webhook, limits, PushStatus.DEFAULT_NO_AGENT_EXPIRY);
    }

    /**
     * As {@link #HttpApi(CuratorFramework, ZkPaths, InetSocketAddress, BearerToken, WebhookSecret, HttpLimits)}, with
     * how long a push waits for a host without an agent before that target reads {@code expired}
     * ({@code --no-agent-expiry}; docs/decisions/0030-cancel-and-expire-pushes.md).
     *
     * @param noAgentExpiry a positive duration
     * @throws IOException when the address cannot be bound
     */
    public HttpApi(CuratorFramework client, ZkPaths paths, InetSocketAddress listen, BearerToken token, WebhookSecret webhook,
                   HttpLimits limits, Duration noAgentExpiry) throws IOException {
        this(client, paths, listen, token, webhook, limits, noAgentExpiry, null);
    }

    /**
     * As {@link #HttpApi(CuratorFramework, ZkPaths, InetSocketAddress, BearerToken, WebhookSecret, HttpLimits, Duration)},
     * serving HTTPS only when {@code tls} is given ({@code --tls-cert}, {@code --tls-key}, {@code --tls-client-ca};
     * docs/decisions/0040-tls.md): the one port speaks TLS, and a request sent there in plain text is answered
     * {@code 400} (naming {@code https://}) and its connection closed, without reaching the API.
     *
     * @param tls the certificate, key and client CAs, or {@code null} for plain HTTP
     * @throws IOException when the address cannot be bound
     */
    public HttpApi(CuratorFramework client, ZkPaths paths, InetSocketAddress listen, BearerToken token, WebhookSecret webhook,
                   HttpLimits limits, Duration noAgentExpiry, ServerTls tls) throws IOException {
        this.tls = tls;
        this.webhook = webhook;
        this.client = client;
        this.paths = paths;
        this.token = token;
        this.limits = limits;
        this.writer = new PushWriter(client, paths, Clock.systemUTC());
        this.cache = new FleetCache(client, List.of(paths.reports(), paths.agents(), paths.rollouts(), paths.pushes(), paths.progress(),
                paths.desired(), paths.drains()));
        this.status = new PushStatus(client, paths, cache, noAgentExpiry, Clock.systemUTC()); // receivedAt is the system clock's
        this.cancels = new PushCancels(client, paths, Clock.systemUTC(), noAgentExpiry);
        this.fleet = new FleetView(client, paths, cache);
        // freezes' ends by ZooKeeper's clock
        this.vanished = new VanishedWindows(client, paths);
        this.fleetStatus = new FleetStatus(client, paths, ZkClock.clock(), cache, noAgentExpiry, vanished);
        this.requests = new WindowRequestStore(client, paths);
        this.holds = new HoldStore(client, paths);
        this.drains = new DrainStore(client, paths);
        this.plans = new PlanStore(client, paths, writer, Clock.systemUTC());
        this.audits = new AuditStore(client, paths, Clock.systemUTC());
        this.backups = new BackupStore(client, paths);
        writer.checkingAgents(new AgentFieldCheck(cache, paths));
        this.rollouts = new RolloutStore(client, paths, Clock.systemUTC());
        this.rolloutFold = new RolloutFold(client, paths, new io.mesh.curator.EventOutbox(client, paths, ZkPaths.COORDINATOR_EVENTS));
        this.freezes = new FreezeStore(client, paths, ZkClock.clock()); // since and until by ZooKeeper's clock
        this.events = new CoordinatorEvents(new io.mesh.curator.EventOutbox(client, paths, ZkPaths.COORDINATOR_EVENTS));
        this.freezeBoundaries = new FreezeBoundaries(client, paths, new io.mesh.curator.EventOutbox(client, paths, ZkPaths.COORDINATOR_EVENTS),
                java.time.Duration.ofSeconds(1));
        this.whys = new WhyStore(client, paths, audits, freezes, rollouts, fleetStatus);
        // The page's last 24 hours: every host's ledger as GET /v1/audit judges it (SPEC.md, "Audit").
        ProcessRef page = ProcessRef.current("mesh-coordinator page");
        dashboard.auditSource((from, to) -> audits.audit(from, to, null, null, AuditStore.DEFAULT_TIMEOUT, page).hosts());

        // Threads: one accepting, one selecting, the rest serving. Requests beyond them wait in the pool's queue,
        // which the connection limit bounds (Jetty warns against a bounded queue: it would drop its own tasks).
        QueuedThreadPool threads = new QueuedThreadPool(HttpLimits.THREADS + 2, 2, 60_000);
        threads.setName("mesh-http");
        threads.setDaemon(true);
        this.server = new Server(threads, new ScheduledExecutorScheduler("mesh-http-scheduler", true), null);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        // Jetty's parser caches header fields per connection, by default ignoring the case of their values: a
        // connection's "Authorization: Bearer s3cret-tokeN" would then read as the "Bearer s3cret-token" it saw before.
        http.setHeaderCacheSize(0);
        http.setHeaderCacheCaseSensitive(true);
        if (tls == null) {
            this.connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
        } else {
            SecureRequestCustomizer secure = new SecureRequestCustomizer();
            // Jetty would answer 400 to a request whose Host is not a name of the certificate: the client has checked the
            // name already (hostname verification stays on), and a coordinator has one certificate.
            secure.setSniHostCheck(false);
            http.addCustomizer(secure);
            HttpConnectionFactory h1 = new HttpConnectionFactory(http);
            // TLS is detected by its first bytes; anything else goes on to the HTTP factory only to be answered 400 and
            // closed in handle (no route is reached), so that a client given http:// learns to use https://.
            SslConnectionFactory ssl = new SslConnectionFactory(tls.sslContextFactory(), h1.getProtocol());
            this.connector = new ServerConnector(server, 1, 1, new DetectorConnectionFactory(ssl), h1);
        }
        connector.setHost(listen.getHostString());
        connector.setPort(listen.getPort());
        connector.setIdleTimeout(limits.readTimeout().toMillis());
        connector.setAcceptQueueSize(HttpLimits.ACCEPT_QUEUE);
        this.heads = new HeadDeadline(server.getScheduler(), limits.readTimeout());
        connector.addBean(heads);
        server.addConnector(connector);
        this.connectionLimit = new NetworkConnectionLimit(limits.maxConnections(), connector);
        long atLimitIdle = Math.min(HttpLimits.AT_LIMIT_IDLE.toMillis(), limits.readTimeout().toMillis());
        connectionLimit.setEndPointIdleTimeout(atLimitIdle);
        server.addBean(connectionLimit);
        connector.addBean(new Connection.Listener() {
            // NetworkConnectionLimit shortens the idle timeout of the connections it knows when it reaches the
            // limit; one accepted then but opened after (the one that reached it, often) would keep the long one.
            @Override
            public void onOpened(Connection connection) {
                if (connectionLimit.getNetworkConnectionCount() + connectionLimit.getPendingNetworkConnectionCount() >= limits.maxConnections()) {
                    connection.getEndPoint().setIdleTimeout(atLimitIdle);
                }
            }
        });
        server.setErrorHandler(new JsonErrors());
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                HttpApi.this.handle(request, response, callback);
                return true;
            }
        });
        try {
            connector.open();
            this.bound = (InetSocketAddress) ((ServerSocketChannel) connector.getTransport()).getLocalAddress();
        } catch (IOException e) {
            throw new IOException("cannot listen on " + listen + ": " + e.getMessage(), e);
        }
        client.getConnectionStateListenable().addListener((c, state) -> metrics.connectionEvent(state.name()));
    }

    /**
     * Starts the {@link FleetCache} and, once it has loaded (or after {@link #CACHE_LOAD_WAIT}), serving.
     *
     * @throws IllegalStateException when the server cannot start
     */
    public void start() {
        cache.start();
        vanished.start();
        freezeBoundaries.start();
        rolloutFold.start();
        try {
            // Served from ZooKeeper until it has loaded; a fleet of 1,000 hosts loads in a few seconds.
            if (!cache.awaitLoaded(CACHE_LOAD_WAIT)) LOG.warn("the fleet cache has not loaded within {}s; status is read from ZooKeeper until it has", CACHE_LOAD_WAIT.toSeconds());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            server.start();
        } catch (Exception e) {
            throw new IllegalStateException("cannot start the HTTP server: " + e.getMessage(), e);
        }
    }

    /** @return the bound port (the real one when constructed with port 0), also after {@link #close()} */
    public int port() { return bound.getPort(); }

    /**
     * @return the base URL, such as {@code http://127.0.0.1:7070} ({@code https://} with TLS), also after
     *         {@link #close()}
     */
    public URI uri() {
        String host = bound.getAddress().getHostAddress();
        if (host.contains(":")) host = "[" + host + "]";
        return URI.create((tls == null ? "http://" : "https://") + host + ":" + bound.getPort());
    }

    /** @return the copy of the fleet-sized subtrees that status requests read */
    FleetCache fleetCache() { return cache; }

    /** @return the counters served at {@code /metrics} */
    public Metrics metrics() { return metrics; }

    /** @param text Prometheus text appended to {@code GET /metrics} at each request, such as {@link Notifier#metrics} */
    public void moreMetrics(java.util.function.Supplier<String> text) { this.moreMetrics = text; }

    /** @return the limits this server keeps */
    public HttpLimits limits() { return limits; }

    /**
     * The hook that gives the page its "Last 24 hours" (SPEC.md, "Audit": "the page shows the last 24 hours";
     * {@link Timeline}): the coordinator calls it once, after construction, with the audit that answers
     * {@code GET /v1/audit}, such as {@code api.auditSource((from, to) -> audits.audit(from, to))}. The page asks it
     * at most once a minute, for every host and module over the last 24 hours, and waits for it at most
     * {@link Dashboard#AUDIT_WAIT} per request. Until it is called (or with {@code null}) the section says
     * "audit unavailable".
     *
     * @param source every host's audit report over a span, or {@code null} for none
     */
    public void auditSource(AuditSource source) { dashboard.auditSource(source); }

    /** @return connections open now (for tests: never above {@link HttpLimits#maxConnections()}) */
    int openConnections() { return connectionLimit.getNetworkConnectionCount(); }

    /** Stops at once: closes the listening socket and open connections, and stops the worker threads. */
    @Override
    public void close() { close(0); }

    /**
     * Stops accepting, waits up to {@code graceSeconds} for requests in flight, closes every connection and stops
     * the worker threads.
     *
     * @param graceSeconds seconds to wait, &gt;= 0
     */
    public void close(int graceSeconds) {
        server.setStopTimeout(graceSeconds * 1000L);
        try {
            server.stop();
        } catch (Exception e) {
            LOG.warn("stopping the HTTP server: {}", e.toString());
        }
        cache.close();
        vanished.close();
        freezeBoundaries.close();
        rolloutFold.close();
    }

    private void handle(Request request, Response response, Callback callback) {
        Connection connection = request.getConnectionMetaData().getConnection();
        heads.headReceived(connection);
        // The next head's deadline is armed before Jetty learns that this answer is written, so before it can read one.
        Callback answered = new Callback() {
            @Override
            public void succeeded() {
                heads.answered(connection);
                callback.succeeded();
            }

            @Override
            public void failed(Throwable x) { callback.failed(x); }

            @Override
            public InvocationType getInvocationType() { return callback.getInvocationType(); }
        };
        Exchange ex = new Exchange(request, response, answered, limits.readTimeout());
        if (tls != null && !request.getConnectionMetaData().isSecure()) {
            response.getHeaders().put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString());
            String host = request.getHeaders().get(HttpHeader.HOST);
            send(ex, 400, error("the coordinator speaks HTTPS: use https://" + (host == null ? "" : host)
                    + " (and --ca FILE, or MESH_CA, when its certificate's CA is not in the system's)"));
            return;
        }
        try {
            route(ex);
        } catch (Refusal r) {
            if (!ex.answered()) send(ex, r.status(), r.body());
        } catch (KeeperException.ConnectionLossException | KeeperException.SessionExpiredException
                 | KeeperException.OperationTimeoutException e) {
            if (!ex.answered()) send(ex, 503, error("ZooKeeper is unavailable (" + e.code() + "): try again when the coordinator's /healthz is ok"));
        } catch (Exception | Error e) {
            LOG.error("{} {} failed", ex.method(), ex.path(), e);
            if (!ex.answered()) send(ex, 500, error("internal error: " + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage())));
        } finally {
            if (!ex.answered()) send(ex, 500, error("internal error: no answer"));
        }
    }

    /** Jetty's own errors (a bad request line, headers over the size limit, ...) as mesh's {@code {"error": "..."}}. */
    private static final class JsonErrors extends ErrorHandler {
        @Override
        protected void generateResponse(Request request, Response response, int code, String message, Throwable cause, Callback callback) {
            String reason = HttpStatus.getMessage(code);
            String text = message == null || message.isBlank() || message.equals(reason) ? reason : reason + ": " + message;
            byte[] bytes;
            try {
                bytes = Json.MAPPER.writeValueAsBytes(error(code + " " + text + " (see GET / and docs/design.md for the API)"));
            } catch (IOException e) {
                bytes = "{\"error\":\"bad request\"}".getBytes(StandardCharsets.UTF_8);
            }
            response.getHeaders().put("Content-Type", "application/json; charset=utf-8");
            response.getHeaders().put("Content-Length", String.valueOf(bytes.length));
            response.write(true, ByteBuffer.wrap(bytes), callback);
        }
    }

    private void route(Exchange ex) throws Exception {
        String path = ex.path();
        String method = ex.method();
        switch (path) {
            case "/v1/pushes" -> {
                if (method.equals("POST")) push(ex);
                else if (method.equals("GET")) listPushes(ex);
                else notAllowed(ex, "GET, POST");
            }
            case "/v1/held" -> { if (get(ex)) held(ex); }
            case "/v1/hosts" -> { if (get(ex)) send(ex, 200, Map.of("hosts", fleet.hosts())); }
            case "/healthz" -> { if (get(ex)) health(ex); }
            case "/metrics" -> { if (get(ex)) metrics(ex); }
            case "/v1/openapi.json" -> { if (get(ex)) openApi(ex); }
            case "/", "/index.html" -> { if (get(ex)) sendText(ex, 200, "text/html; charset=utf-8", dashboard.page(fleetStatus.fleet())); }
            case "/ui/fragment" -> { if (get(ex)) sendText(ex, 200, "text/html; charset=utf-8", dashboard.fragment(fleetStatus.fleet())); }
            case "/ui/mesh.css" -> { if (get(ex)) resource(ex, "mesh.css", "text/css; charset=utf-8"); }
            case "/ui/mesh.js" -> { if (get(ex)) resource(ex, "mesh.js", "text/javascript; charset=utf-8"); }
            case "/v1/fleet" -> { if (get(ex)) sendJson(ex, fleetStatus.fleetJson()); }
            case "/v1/windows" -> {
                if (get(ex)) {
                    Map<String, Object> out = new LinkedHashMap<>();
                    out.put("windows", fleetStatus.windows());
                    out.put("slots", fleetStatus.slots());
                    out.put("gates", fleetStatus.gateWaits()); // windows waiting for their gate (decision 35)
                    send(ex, 200, out);
                }
            }
            case "/v1/locks" -> { if (get(ex)) send(ex, 200, Map.of("locks", fleetStatus.locks())); }
            case "/v1/plans" -> { if (ex.method().equals("POST")) planRequest(ex); else notAllowed(ex, "POST"); }
            case "/v1/freezes" -> {
                if (method.equals("POST")) freeze(ex);
                else if (method.equals("GET")) send(ex, 200, Map.of("freezes", freezes.list()));
                else notAllowed(ex, "GET, POST");
            }
            case "/v1/holds" -> { if (ex.method().equals("POST")) hold(ex); else notAllowed(ex, "POST"); }
            case "/v1/drains" -> {
                if (method.equals("POST")) drain(ex);
                else if (method.equals("GET")) send(ex, 200, Map.of("drains", drains.list()));
                else notAllowed(ex, "GET, POST");
            }
            case "/v1/audit" -> { if (get(ex)) audit(ex); }
            case "/v1/backup" -> { if (get(ex)) backup(ex); }
            case "/v1/restore" -> { if (ex.method().equals("POST")) restore(ex); else notAllowed(ex, "POST"); }
            default -> {
                Matcher req;
                if ((req = PUSH_CANCEL.matcher(path)).matches()) {
                    if (ex.method().equals("POST")) cancelPush(ex, req.group(1));
                    else notAllowed(ex, "POST");
                } else if (path.startsWith("/v1/pushes/") && path.length() > "/v1/pushes/".length()) {
                    if (get(ex)) pushStatus(ex, path.substring("/v1/pushes/".length()));
                } else if ((req = MODULE_HISTORY.matcher(path)).matches()) {
                    if (get(ex)) moduleHistory(ex, req.group(1));
                } else if ((req = MODULE_ROLLBACK.matcher(path)).matches()) {
                    if (ex.method().equals("POST")) rollback(ex, req.group(1));
                    else notAllowed(ex, "POST");
                } else if ((req = ROLLOUT.matcher(path)).matches()) {
                    if (get(ex)) rollout(ex, req.group(1));
                } else if ((req = ROLLOUT_MOVE.matcher(path)).matches()) {
                    if (ex.method().equals("POST")) moveRollout(ex, req.group(1), req.group(2));
                    else notAllowed(ex, "POST");
                } else if ((req = DRAIN.matcher(path)).matches()) {
                    if (ex.method().equals("DELETE")) undrain(ex, req.group(1));
                    else notAllowed(ex, "DELETE");
                } else if ((req = FREEZE.matcher(path)).matches()) {
                    if (ex.method().equals("DELETE")) thaw(ex, req.group(1));
                    else notAllowed(ex, "DELETE");
                } else if ((req = MODULE.matcher(path)).matches()) {
                    if (ex.method().equals("DELETE")) deleteModule(ex, req.group(1));
                    else notAllowed(ex, "DELETE");
                } else if (path.startsWith("/v1/plans/") && path.length() > "/v1/plans/".length()) {
                    if (get(ex)) planView(ex, path.substring("/v1/plans/".length()));
                } else if ((req = WHY.matcher(path)).matches()) {
                    if (get(ex)) why(ex, req.group(1), req.group(2));
                } else if ((req = HOLD.matcher(path)).matches()) {
                    if (ex.method().equals("GET")) holdView(ex, req.group(1), req.group(2));
                    else if (ex.method().equals("DELETE")) release(ex, req.group(1), req.group(2));
                    else notAllowed(ex, "GET, DELETE");
                } else if ((req = REQUESTS.matcher(path)).matches()) {
                    windowRequests(ex, req.group(1));
                } else if ((req = REQUEST.matcher(path)).matches()) {
                    windowRequest(ex, req.group(1), req.group(2));
                } else {
                    throw Refusal.notFound(null, "no such path: " + Printable.cut(path) + " (see GET /, /v1/fleet, /v1/pushes, /v1/pushes/{push}, /v1/modules/{module}/history, /v1/plans/{plan}, /v1/freezes, /v1/held, /v1/audit, /v1/why/{host}/{container}, /v1/holds/{host}/{container}, /v1/drains, /v1/windows, /v1/locks, /v1/hosts, /healthz, /metrics, /v1/openapi.json)");
                }
            }
        }
    }

    private static final Pattern PUSH_CANCEL = Pattern.compile("/v1/pushes/([^/]+)/cancel");
    private static final Pattern HOLD = Pattern.compile("/v1/holds/([^/]+)/([^/]+)");
    private static final Pattern WHY = Pattern.compile("/v1/why/([^/]+)/([^/]+)");
    private static final Pattern REQUESTS = Pattern.compile("/v1/hosts/([^/]+)/windows");
    private static final Pattern MODULE = Pattern.compile("/v1/modules/([^/]+)");
    private static final Pattern MODULE_HISTORY = Pattern.compile("/v1/modules/([^/]+)/history");
    private static final Pattern ROLLOUT = Pattern.compile("/v1/rollouts/([^/]+)");
    private static final Pattern ROLLOUT_MOVE = Pattern.compile("/v1/rollouts/([^/]+)/(resume|abort|promote)");
    private static final Pattern MODULE_ROLLBACK = Pattern.compile("/v1/modules/([^/]+)/rollback");
    private static final Pattern FREEZE = Pattern.compile("/v1/freezes/([^/]+)");
    private static final Pattern DRAIN = Pattern.compile("/v1/drains/([^/]+)");
    /** Largest body of a freeze ({@code {"module","for","reason"}}), in bytes. */
    public static final int MAX_FREEZE_BODY = 4096;
    /** Largest body of a rollback ({@code {"to":"push-..."}}), in bytes. */
    public static final int MAX_ROLLBACK_BODY = 4096;
    private static final Pattern REQUEST = Pattern.compile("/v1/hosts/([^/]+)/windows/([^/]+)");

    /**
     * Window requests (create, delete), rollbacks and deletes need the bearer token when one is configured; with only
     * a webhook secret (which signs push bodies, not requests: a signature of an empty body or of {@code {"to":...}}
     * would be replayable against any module) they are refused; with neither they are open, like pushes.
     */
    private boolean authorized(Exchange ex) { return authorized(ex, "window requests"); }

    /** {@link #authorized(Exchange)}, naming {@code what} needs the token in the 403 of a webhook-only coordinator. */
    private boolean authorized(Exchange ex, String what) {
        if (token == null && webhook == null) return true;
        String authorization = ex.header("Authorization");
        if (token != null && authorization != null && token.matches(authorization)) return true;
        ex.responseHeader("WWW-Authenticate", "Bearer realm=\"mesh\"");
        if (token == null) {
            send(ex, 403, error("this coordinator takes only signed pushes (--webhook-secret-file): " + what + " need a bearer token (--token-file)"));
        } else if (authorization == null) {
            send(ex, 401, error("missing token: send Authorization: Bearer <token> (mesh --token-file F, or MESH_TOKEN)"));
        } else {
            send(ex, 403, error("wrong token: send Authorization: Bearer <token> (mesh --token-file F, or MESH_TOKEN)"));
        }
        return false;
    }

    /**
     * Reads a small JSON body (a window request, a rollback), answering 413 or 408 itself.
     *
     * @param limit the most bytes taken
     * @param shape what to send instead, for the 413's message
     * @return the body, or {@code null} when the answer was sent
     */
    private byte[] smallBody(Exchange ex, int limit, String shape) throws Exception {
        try {
            return ex.body(limit);
        } catch (Exchange.TooLargeException e) {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("error", "the body is over " + limit + " bytes: send only " + shape);
            out.put("limit", limit);
            send(ex, 413, out);
            return null;
        } catch (Exchange.TimedOutException e) {
            timedOut(ex, e);
            return null;
        }
    }

    /** @return the body as a JSON object, or {@code null} when it is not one */
    private static JsonNode jsonObject(byte[] body) {
        try {
            JsonNode json = Json.MAPPER.readTree(body);
            return json != null && json.isObject() ? json : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** {@code POST /v1/hosts/{host}/windows}: a window request. */
    private void windowRequests(Exchange ex, String host) throws Exception {
        if (!ex.method().equals("POST")) {
            notAllowed(ex, "POST");
            return;
        }
        if (!authorized(ex)) return;
        byte[] body = smallBody(ex, MAX_REQUEST_BODY, "{\"module\":\"store\",\"schedule\":\"garbage-collect\"}");
        if (body == null) return;
        JsonNode json = jsonObject(body);
        if (json == null) throw Refusal.badRequest(null, "the body must be JSON such as {\"module\":\"store\",\"schedule\":\"garbage-collect\"}");
        String caller = caller(ex);
        String who = "mesh window run" + (caller == null ? "" : " by " + caller) + " from " + ex.remoteHost() + " via mesh-coordinator";
        String name = requests.create(host, json.path("module").asText(null), json.path("schedule").asText(null), ProcessRef.current(who));
        LOG.info("window request {} host={} module={} schedule={} by \"{}\"", name, host, json.path("module").asText(), json.path("schedule").asText(), who);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("request", name);
        out.put("host", host);
        out.put("path", paths.request(host, name));
        send(ex, 202, out);
    }

    /** {@code POST /v1/holds}: an operator hold ({@link HoldStore#hold}); token as window requests. */
    private void hold(Exchange ex) throws Exception {
        if (!authorized(ex, "holds")) return;
        byte[] body = smallBody(ex, MAX_REQUEST_BODY, "{\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"...\",\"for\":\"2h\"}");
        if (body == null) return;
        JsonNode json = jsonObject(body);
        if (json == null) {
            throw Refusal.badRequest("body", "the body must be JSON such as {\"host\":\"host-a\",\"container\":\"store-registry\",\"reason\":\"disk swap\",\"for\":\"2h\",\"stop\":false}");
        }
        // The hold records where it came from too, as a window request does.
        String by = identity(ex, false);
        HeldRecord h = holds.hold(json, by, ProcessRef.current("mesh-coordinator for " + ex.remoteHost()));
        LOG.info("operator hold host={} container={} by \"{}\" reason=\"{}\" until={} stop={}", h.host(), h.container(), by,
                h.hold().reason(), h.hold().until(), h.hold().stops());
        events.holdPlaced(h);
        send(ex, 201, h);
    }

    /** {@code POST /v1/drains}: a host in maintenance ({@link DrainStore#drain}); token as holds. */
    private void drain(Exchange ex) throws Exception {
        if (!authorized(ex, "holds")) return;
        byte[] body = smallBody(ex, MAX_REQUEST_BODY, "{\"host\":\"host-a\",\"reason\":\"...\",\"for\":\"2h\",\"stop\":true}");
        if (body == null) return;
        String by = identity(ex, false);
        DrainStore.Drain d = drains.drain(jsonObject(body), by);
        awaitCached(paths.drain(d.host()));
        events.drained(d);
        LOG.info("drain of host {} by \"{}\" reason=\"{}\" until={} stop={}", d.host(), by, Printable.cut(d.drain().reason()),
                d.drain().until(), d.drain().stops());
        send(ex, 201, d);
    }

    /** {@code DELETE /v1/drains/{host}}: the drain and its holds go ({@link DrainStore#undrain}). */
    private void undrain(Exchange ex, String host) throws Exception {
        if (!authorized(ex, "holds")) return;
        DrainStore.Undrained u = drains.undrain(host);
        awaitCached(paths.drain(host));
        events.undrained(u, identity(ex, false));
        LOG.info("drain of host {} ended by \"{}\"; released {}", host, identity(ex, false), u.released());
        send(ex, 200, u);
    }

    /**
     * {@code DELETE /v1/holds/{host}/{container}}: ends an operator hold ({@link HoldStore#release}); with
     * {@code ?stale=true}, an admin's token removes a held node nothing owns instead ({@link HoldStore#releaseStale}).
     */
    private void release(Exchange ex, String host, String container) throws Exception {
        if (ex.flag("stale")) {
            releaseStale(ex, host, container);
            return;
        }
        if (!authorized(ex, "holds")) return;
        HeldRecord h = holds.release(host, container);
        LOG.info("operator hold host={} container={} released (was by \"{}\": {})", host, container, h.hold().by(), h.hold().reason());
        events.holdReleased(h, identity(ex, false));
        send(ex, 200, Map.of("released", h));
    }

    /**
     * {@code DELETE /v1/holds/{host}/{container}?stale=true} ({@code mesh release HOST CONTAINER --stale}, SPEC.md
     * "Operator holds"): an admin's token only ({@link #adminAuthorized}); {@code 200 {"released", "stale": true}},
     * 404 when there is no held node, 409 naming what owns it.
     */
    private void releaseStale(Exchange ex, String host, String container) throws Exception {
        String who = adminAuthorized(ex, "mesh release --stale");
        if (who == null) return;
        HeldRecord h = holds.releaseStale(host, container);
        LOG.warn("stale held node removed host={} container={} by \"{}\" from {} (it read: {})", host, container, who, ex.remoteHost(), h.reason());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("released", h);
        out.put("stale", true);
        send(ex, 200, out);
    }

    /** The most bytes {@code POST /v1/restore} takes: a backup of a large fleet's history is tens of megabytes. */
    static final int MAX_RESTORE_BYTES = 256 << 20;

    /**
     * {@code GET /v1/backup} ({@code mesh backup FILE}; SPEC.md "Running it for real"): an admin's token only; {@code 200}
     * and the backup document (docs/decisions/0039-backups-and-an-empty-ensemble.md).
     */
    private void backup(Exchange ex) throws Exception {
        String who = adminAuthorized(ex, "mesh backup");
        if (who == null) return;
        BackupDocument doc = backups.take();
        LOG.info("backup taken by \"{}\" from {}: {} nodes", who, ex.remoteHost(), doc.nodes().size());
        send(ex, 200, doc);
    }

    /**
     * {@code POST /v1/restore[?force=true]} ({@code mesh restore FILE [--force]}): an admin's token only; body the backup
     * document. {@code 200 {created, updated, unchanged, desired, holds, sequences}}; {@code 400} for a document that is
     * not whole, edited, or from a newer mesh; {@code 409} for a tree that is not empty without {@code force}: nothing
     * written in either case (decision 39 items 2 to 4).
     */
    private void restore(Exchange ex) throws Exception {
        String who = adminAuthorized(ex, "mesh restore");
        if (who == null) return;
        byte[] body = smallBody(ex, MAX_RESTORE_BYTES, "a backup that mesh backup wrote");
        if (body == null) return;
        BackupDocument doc = BackupDocument.parse(body);
        boolean force = ex.flag("force");
        BackupStore.Restored r;
        try {
            r = backups.restore(doc, force);
        } catch (IllegalStateException failed) { // ZooKeeper failed mid-way: what was written is put back, and said
            LOG.warn("restore by \"{}\" from {} failed: {}", who, ex.remoteHost(), failed.getMessage());
            send(ex, 500, error(failed.getMessage()));
            return;
        }
        LOG.warn("restore by \"{}\" from {} of a backup taken {}: {} nodes", who, ex.remoteHost(), doc.takenAt(), doc.nodes().size());
        send(ex, 200, r);
    }

    /**
     * What only an admin may do (SPEC.md "Operator holds": {@code --stale} takes admin credentials) needs the bearer
     * token of a name the coordinator lists with {@code --admin NAME} ({@link BearerToken#isAdmin}): no token is
     * {@code 401}, a wrong one or one that is no admin's {@code 403}, each naming the fix. A coordinator with no
     * credentials at all takes it from anyone, as it takes every write (it warns at start that it runs open).
     *
     * @param what what is asked, for the answer
     * @return who asked (the token's name, or {@code anonymous} on an open coordinator); {@code null} when refused
     *         (the answer was sent)
     */
    private String adminAuthorized(Exchange ex, String what) {
        if (token == null && webhook == null) return HistoryRecord.BY_ANONYMOUS;
        ex.responseHeader("WWW-Authenticate", "Bearer realm=\"mesh\"");
        String authorization = ex.header("Authorization");
        String name = token == null ? null : token.nameOf(authorization).orElse(null);
        String fix = "start the coordinator with --token-file FILE and --admin NAME naming an admin's line of it, and send that "
                + "token (mesh --token-file F, or MESH_TOKEN)";
        if (token == null) {
            send(ex, 403, error(what + " needs an admin's bearer token, and this coordinator takes only signed pushes "
                    + "(--webhook-secret-file): " + fix));
        } else if (authorization == null) {
            send(ex, 401, error("missing token: " + what + " needs an admin's token: send Authorization: Bearer <token> "
                    + "(mesh --token-file F, or MESH_TOKEN)"));
        } else if (name == null) {
            send(ex, 403, error("wrong token: " + what + " needs an admin's token: send Authorization: Bearer <token> "
                    + "(mesh --token-file F, or MESH_TOKEN)"));
        } else if (!token.isAdmin(name)) {
            send(ex, 403, error("token " + name + " is not an admin's: " + what + " needs the token of a name the coordinator "
                    + "lists with --admin NAME" + (token.admins().isEmpty() ? " (it lists none: " + fix + ")" : " (" + token.admins() + ")")));
        } else {
            return name;
        }
        return null;
    }

    /**
     * {@code GET /v1/holds/{host}/{container}}: the hold as {@code POST /v1/holds} returned it ({@code hold.confirmed}
     * once its host confirmed it), with {@code agent} (the host's agent node exists) and {@code expired}; token as the
     * other hold requests. {@code mesh hold} follows it until the hold is confirmed.
     */
    private void holdView(Exchange ex, String host, String container) throws Exception {
        if (!authorized(ex, "holds")) return;
        HoldStore.View v = holds.view(host, container);
        com.fasterxml.jackson.databind.node.ObjectNode out = Json.MAPPER.valueToTree(v.held());
        out.put("agent", v.agent());
        out.put("expired", v.expired());
        send(ex, 200, out);
    }

    /** {@code GET} or {@code DELETE /v1/hosts/{host}/windows/{request}}. */
    private void windowRequest(Exchange ex, String host, String name) throws Exception {
        switch (ex.method()) {
            case "GET" -> {
                WindowRequest r = requests.read(host, name);
                if (r == null) throw Refusal.notFound(null, "no window request " + Printable.cut(name) + " on host " + Printable.cut(host) + " (done and deleted, or never made)");
                send(ex, 200, r);
            }
            case "DELETE" -> {
                if (!authorized(ex)) return;
                if (!requests.delete(host, name)) throw Refusal.notFound(null, "no window request " + Printable.cut(name) + " on host " + Printable.cut(host));
                send(ex, 200, Map.of("deleted", paths.request(host, name)));
            }
            default -> notAllowed(ex, "GET, DELETE");
        }
    }

    private void resource(Exchange ex, String name, String type) throws IOException {
        try (InputStream in = HttpApi.class.getResourceAsStream("ui/" + name)) {
            if (in == null) {
                send(ex, 404, error("missing resource " + name));
                return;
            }
            ex.responseHeader("Cache-Control", "no-cache");
            ex.responseHeader("Content-Type", type);
            sendBytes(ex, 200, in.readAllBytes());
        }
    }

    /** {@code GET /v1/openapi.json}: the API's OpenAPI document, as committed beside this class. */
    private void openApi(Exchange ex) throws IOException {
        try (InputStream in = HttpApi.class.getResourceAsStream("openapi.json")) {
            if (in == null) {
                send(ex, 404, error("missing resource openapi.json: this coordinator was built without its OpenAPI document"));
                return;
            }
            ex.responseHeader("Content-Type", "application/json; charset=utf-8");
            sendBytes(ex, 200, in.readAllBytes());
        }
    }

    private static void sendText(Exchange ex, int status, String type, String text) {
        ex.responseHeader("Content-Type", type);
        ex.responseHeader("Cache-Control", "no-store");
        sendBytes(ex, status, text.getBytes(StandardCharsets.UTF_8));
    }

    private boolean get(Exchange ex) {
        if (ex.method().equals("GET")) return true;
        notAllowed(ex, "GET");
        return false;
    }

    private void notAllowed(Exchange ex, String allow) {
        ex.responseHeader("Allow", allow);
        send(ex, 405, error("method " + Printable.cut(ex.method()) + " is not allowed on " + Printable.cut(ex.path()) + ": use " + allow));
    }

    /** A manifest body that passed a push's checks, and how its request was authorised. */
    private record Manifest(String text, String tokenName, boolean bySignature) {}

    /**
     * What {@code POST /v1/pushes} and {@code POST /v1/plans} both take: a push's credentials, then a manifest body of at
     * most {@code --max-push-bytes} in UTF-8. Answers 401, 403, 413, 408 or 400 itself, and logs the refusal.
     *
     * @param what     {@code push} or {@code plan}, for the log
     * @param rejected counts a refusal by its {@link Metrics} reason: {@code metrics::rejected} for a push; a plan
     *                 writes no push, so the push metrics do not count it
     * @return the manifest; {@code null} when the answer was sent
     */
    private Manifest manifest(Exchange ex, String what, Consumer<String> rejected) throws Exception {
        String authorization = ex.header("Authorization");
        String signature = ex.header(WebhookSecret.HEADER);
        boolean protectedPush = token != null || webhook != null;
        String tokenName = token == null ? null : token.nameOf(authorization).orElse(null);
        boolean byToken = tokenName != null;
        boolean bySignature = !byToken && webhook != null && signature != null;
        if (protectedPush && !byToken && !bySignature) {
            if (authorization == null && signature == null) refuse(ex, what, rejected, 401, Metrics.UNAUTHORIZED, "no credentials");
            else refuse(ex, what, rejected, 403, Metrics.FORBIDDEN, authorization != null ? "a wrong bearer token" : "a webhook signature, which this coordinator does not take");
            return null;
        }
        int limit = limits.maxPushBytes();
        byte[] body;
        try {
            body = ex.body(limit);
        } catch (Exchange.TooLargeException e) {
            rejected.accept(Metrics.TOO_LARGE);
            String size = e.declared >= 0 ? e.declared + " bytes" : "more than " + limit + " bytes";
            LOG.warn("{} refused (413) from {}: {}, over the limit of {} bytes", what, ex.remote(), size, limit);
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("error", "the manifest is " + size + ", over this coordinator's limit of " + limit
                    + " bytes (mesh-coordinator serve --max-push-bytes, at most " + HttpLimits.MAX_PUSH_BYTES
                    + ", since a push is one ZooKeeper transaction): split it into several pushes of a few modules each"
                    + " (a push changes only the modules it names)");
            out.put("limit", limit);
            send(ex, 413, out);
            return null;
        } catch (Exchange.TimedOutException e) {
            rejected.accept(Metrics.ERROR);
            timedOut(ex, e);
            return null;
        }
        if (bySignature && !webhook.verify(signature, body)) {
            refuse(ex, what, rejected, 403, Metrics.FORBIDDEN, "a wrong webhook signature");
            return null;
        }
        try {
            String text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body)).toString();
            return new Manifest(text, tokenName, bySignature);
        } catch (CharacterCodingException e) {
            rejected.accept(Metrics.INVALID);
            send(ex, 400, Map.of("errors", List.of(new ManifestError(1, "", "the body is not UTF-8: save the manifest as UTF-8 and push again"))));
            return null;
        }
    }

    /** {@code POST /v1/pushes}: the manifest, checked as {@link #manifest} says, is written as a push ({@link PushWriter}). */
    private void push(Exchange ex) throws Exception {
        Manifest m = manifest(ex, "push", metrics::rejected);
        if (m == null) return;
        PushWriter.Result result;
        try {
            result = writer.write(m.text(), ex.header(REVISION_HEADER), new PushWriter.Origin(identity(ex, m.bySignature()), ex.header(SOURCE_HEADER)), ex.flag("force"));
        } catch (ManifestException e) {
            metrics.rejected(Metrics.INVALID);
            send(ex, 400, Map.of("errors", e.errors()));
            return;
        } catch (PushWriter.TooLargeException e) {
            metrics.rejected(Metrics.TOO_LARGE);
            transactionTooLarge(ex, e);
            return;
        } catch (PushWriter.ConflictException e) {
            metrics.rejected(Metrics.ERROR);
            send(ex, 409, error(e.getMessage()));
            return;
        } catch (Exception e) {
            metrics.rejected(Metrics.ERROR);
            throw e;
        }
        metrics.accepted();
        LOG.info("push {} revision {} modules {} hosts {} from {} ({})", result.push(), result.revision(), result.modules(),
                result.hosts(), ex.remote(), m.tokenName() != null ? "bearer token" + (m.tokenName().equals(HistoryRecord.BY_TOKEN) ? "" : " " + m.tokenName()) : m.bySignature() ? "webhook signature" : "no credentials required");
        send(ex, 202, accepted(result));
    }

    /**
     * Who pushed: a push's {@code by} ({@link HistoryRecord#by()}): the name of the bearer token the request carried
     * ({@link BearerToken}: {@code --token-file} with {@code name:token} lines, SPEC.md "History and rollback"; the
     * older single token is {@value HistoryRecord#BY_TOKEN}), else {@value HistoryRecord#BY_WEBHOOK} for a signed push,
     * else {@value HistoryRecord#BY_ANONYMOUS}.
     *
     * @param tokenName   the name of the token the request carried, or {@code null}
     * @param bySignature the request was signed with the webhook secret
     */
    static String by(String tokenName, boolean bySignature) {
        if (tokenName != null) return tokenName;
        if (bySignature) return HistoryRecord.BY_WEBHOOK;
        return HistoryRecord.BY_ANONYMOUS;
    }

    /** @return {@link #by(String, boolean)} of a request that passed {@link #authorized}: its token's name */
    private String by(Exchange ex) {
        return by(token == null ? null : token.nameOf(ex.header("Authorization")).orElse(null), false);
    }

    /**
     * Who did a write, as every record of one says it (a push's, rollback's, delete's and cancel's {@code by}, a
     * freeze's, an operator hold's), by one rule so that the same caller reads the same everywhere: a named token's
     * name and nothing else (SPEC.md, "History and rollback": the name is the push's {@code by}); without one,
     * {@code X-Mesh-User} (the client's word, unproven), else {@code webhook} or {@code anonymous}, then {@code from}
     * and the address the request came from, such as {@code root from 127.0.0.1} or {@code anonymous from 10.0.0.7}
     * (docs/design.md, "History, rollback and delete").
     *
     * @param bySignature the request was a push signed with the webhook secret
     */
    private String identity(Exchange ex, boolean bySignature) {
        String named = token == null ? null : token.nameOf(ex.header("Authorization")).orElse(null);
        if (named != null && !named.equals(HistoryRecord.BY_TOKEN)) return named;
        String caller = caller(ex);
        String name = caller != null ? caller : by(named, bySignature);
        return name + " from " + ex.remoteHost();
    }

    /**
     * Who asks, for the record of a hold, a window request or a plan: the name of the named token the request carried
     * (SPEC.md "History and rollback"), with {@code X-Mesh-User} after it as a claim when that names someone else
     * ({@code ops (says alice)}). {@code X-Mesh-User} is the client's word, not proven: it stands alone only when no
     * named token identifies the caller (no token configured, or the older single token).
     *
     * @return the identity; {@code null} when neither a named token nor {@code X-Mesh-User} gives one
     */
    private String caller(Exchange ex) {
        String name = token == null ? null : token.nameOf(ex.header("Authorization")).orElse(null);
        String user = ex.header("X-Mesh-User");
        String claim = user == null || user.isBlank() ? null : Printable.cut(user.strip()).replaceAll("\\p{Cntrl}", "?"); // one line in logs and tables
        if (name == null || name.equals(HistoryRecord.BY_TOKEN)) return claim;
        return claim == null || claim.equals(name) ? name : name + " (says " + claim + ")";
    }

    /** {@code GET /v1/modules/{module}/history}. */
    private void moduleHistory(Exchange ex, String module) throws Exception {
        List<HistoryRecord> history = ModuleName.matches(module) ? writer.history(module) : List.of();
        if (history.isEmpty() && (!ModuleName.matches(module) || client.checkExists().forPath(paths.desired(module)) == null)) {
            throw Refusal.notFound(null, "no module " + Printable.cut(module) + " has been pushed (no history): check the name (mesh status lists the modules)");
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("module", module);
        out.put("history", history);
        send(ex, 200, out);
    }

    /** {@code GET /v1/rollouts/{module}}. */
    private void rollout(Exchange ex, String module) throws Exception {
        Optional<RolloutRecord> r = ModuleName.matches(module) ? rollouts.read(module) : Optional.empty();
        send(ex, 200, r.orElseThrow(() -> Refusal.notFound(null, "module " + Printable.cut(module)
                + " has no rollout: a push of a module with rollout: starts one (mesh status lists the modules)")));
    }

    /** {@code POST /v1/rollouts/{module}/resume|abort|promote}. */
    private void moveRollout(Exchange ex, String module, String move) throws Exception {
        if (!authorized(ex, "rollout changes")) return;
        PushField body = pushField(ex, "push", "for the rollout the module has now", "(mesh rollout status " + Printable.cut(module) + " shows it)");
        if (!body.read()) return;
        RolloutRecord r = rollouts.move(module, RolloutStore.Move.valueOf(move.toUpperCase(Locale.ROOT)), identity(ex, false), body.push());
        LOG.info("rollout of module {} push {}: {} from {}, now {}", module, r.push(), move, ex.remote(), r.state());
        send(ex, 200, r);
    }

    /**
     * The optional body of a rollback ({@code {"to": PUSH}}) or a rollout move ({@code {"push": PUSH}}): one field
     * naming a push, read once ({@link #smallBody}); every refusal is answered here, naming the field.
     *
     * @param read false when the request was answered (refused); {@code push} is then meaningless
     * @param push the push named, or {@code null} for an empty body or a null field
     */
    private record PushField(boolean read, String push) {}

    /**
     * @param field     the one field the body takes
     * @param whenEmpty what an empty body means, for the refusal of a body that is not JSON
     * @param listedBy  where the operator finds push ids, for the refusal of a field that is not text
     */
    private PushField pushField(Exchange ex, String field, String whenEmpty, String listedBy) throws Exception {
        String example = "{\"" + field + "\":\"push-0000000002\"}";
        byte[] body = smallBody(ex, MAX_ROLLBACK_BODY, example + ", or nothing");
        if (body == null) return new PushField(false, null);
        if (body.length == 0 || new String(body, StandardCharsets.UTF_8).isBlank()) return new PushField(true, null);
        JsonNode json = jsonObject(body);
        if (json == null) throw Refusal.badRequest("body", "the body must be JSON such as " + example + ", or empty " + whenEmpty);
        for (Iterator<String> f = json.fieldNames(); f.hasNext(); ) {
            String name = f.next();
            if (!name.equals(field)) {
                throw Refusal.badRequest(name, "unknown field '" + Printable.cut(name) + "': the body takes only \"" + field + "\", such as " + example);
            }
        }
        JsonNode t = json.get(field);
        if (t == null || t.isNull()) return new PushField(true, null);
        if (!t.isTextual()) throw Refusal.badRequest(field, field + ": must be a push id as a string, such as \"push-0000000002\" " + listedBy);
        return new PushField(true, t.asText());
    }

    /** {@code POST /v1/freezes}: freezes a module or every module (docs/decisions/0014-freezes.md). */
    private void freeze(Exchange ex) throws Exception {
        if (!authorized(ex, "freezes")) return;
        byte[] body = smallBody(ex, MAX_FREEZE_BODY, "{\"module\":\"store\",\"for\":\"2h\",\"reason\":\"...\"}");
        if (body == null) return;
        FreezeStore.Frozen f = freezes.freeze(jsonObject(body), identity(ex, false));
        FreezeStore.Freeze written = f.freeze(), replaced = f.replaced();
        LOG.info("freeze of {} {} by {} from {}: \"{}\"{}", written.all() ? "every module" : "module " + written.module(),
                written.cron() == null ? "until " + written.until() : written.rule() + (written.until() == null ? "" : " until " + written.until()),
                written.by(), ex.remote(), Printable.cut(written.reason()),
                replaced == null ? "" : " (replaces the freeze until " + replaced.until() + " by " + replaced.by() + ")");
        events.freezeStarted(written);
        com.fasterxml.jackson.databind.node.ObjectNode out = Json.MAPPER.valueToTree(written);
        if (replaced != null) out.set("replaced", Json.MAPPER.valueToTree(replaced));
        if (!f.applying().isEmpty()) out.set("applying", Json.MAPPER.valueToTree(f.applying()));
        send(ex, 201, out);
    }

    /** {@code DELETE /v1/freezes/{module}} or {@code /v1/freezes/_all}: a thaw. */
    private void thaw(Exchange ex, String target) throws Exception {
        if (!authorized(ex, "thaws")) return;
        if (!target.equals(FreezeRecord.ALL) && !ModuleName.matches(target)) {
            throw Refusal.badRequest("module", "'" + Printable.cut(target) + "' is not a module name: DELETE /v1/freezes/{module} or /v1/freezes/_all");
        }
        FreezeRecord was = freezes.thaw(target);
        if (was == null) {
            throw Refusal.notFound(null, (target.equals(FreezeRecord.ALL) ? "no freeze of every module" : "module " + target + " has no freeze of its own")
                    + " (GET /v1/freezes, mesh freezes, lists them)");
        }
        LOG.info("thaw of {} from {}", target.equals(FreezeRecord.ALL) ? "every module" : "module " + target, ex.remote());
        // A one-span freeze past its until had ended (its freeze.ended was written then): the node goes, no second end
        boolean ended = !was.recurring() && was.until() != null && !was.activeAt(ZkClock.earliest());
        if (!ended) events.thawed(target, identity(ex, false));
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        out.put("thawed", paths.freeze(target));
        if (ended) out.put("ended", was.until().toString());
        send(ex, 200, out);
    }

    /** {@code POST /v1/modules/{module}/rollback}. */
    private void rollback(Exchange ex, String module) throws Exception {
        if (!authorized(ex, "rollbacks")) return;
        PushField body = pushField(ex, PushWriter.TO_FIELD, "to roll back to the revision before the current one",
                "(mesh history " + Printable.cut(module) + " lists them)");
        if (!body.read()) return;
        String target = body.push();
        PushWriter.Result result = written(ex, () -> writer.rollback(module, target, new PushWriter.Origin(identity(ex, false), ex.header(SOURCE_HEADER))));
        if (result == null) return;
        metrics.accepted();
        LOG.info("push {} rollback of module {} to {} (revision {}) hosts {} from {}", result.push(), module, result.rollbackOf(),
                result.revision(), result.hosts(), ex.remote());
        Map<String, Object> out = accepted(result);
        out.put("rollbackOf", result.rollbackOf());
        send(ex, 202, out);
    }

    /** {@code DELETE /v1/modules/{module}}. */
    private void deleteModule(Exchange ex, String module) throws Exception {
        if (!authorized(ex, "deletes")) return;
        PushWriter.Result result = written(ex, () -> writer.delete(module, ex.header(REVISION_HEADER),
                new PushWriter.Origin(identity(ex, false), ex.header(SOURCE_HEADER))));
        if (result == null) return;
        metrics.accepted();
        LOG.info("push {} deletes module {} (revision {}) from hosts {} from {}", result.push(), module, result.revision(), result.hosts(), ex.remote());
        send(ex, 202, accepted(result));
    }

    /** A write of a rollback or a delete. */
    private interface Write {
        PushWriter.Result run() throws Exception;
    }

    /**
     * Runs a rollback's or a delete's write and answers its refusals (the field and the fix, the manifest's errors, too
     * large, a lost race) as a push's are answered.
     *
     * @return what was written, or {@code null} when the answer was sent
     */
    private PushWriter.Result written(Exchange ex, Write write) throws Exception {
        try {
            return write.run();
        } catch (ManifestException e) {
            metrics.rejected(Metrics.INVALID);
            send(ex, 400, Map.of("errors", e.errors()));
            return null;
        } catch (PushWriter.TooLargeException e) {
            metrics.rejected(Metrics.TOO_LARGE);
            transactionTooLarge(ex, e);
            return null;
        } catch (PushWriter.ConflictException e) {
            metrics.rejected(Metrics.ERROR);
            send(ex, 409, error(e.getMessage()));
            return null;
        }
    }

    /** Answers 413: the push fits the body limit but not one ZooKeeper request once written as nodes. */
    private void transactionTooLarge(Exchange ex, PushWriter.TooLargeException e) {
        LOG.warn("push refused (413) from {}: {} bytes as one transaction, over {}", ex.remote(), e.bytes, PushWriter.MAX_TRANSACTION_BYTES);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("error", e.getMessage());
        out.put("limit", PushWriter.MAX_TRANSACTION_BYTES);
        send(ex, 413, out);
    }

    /**
     * @return the 202 answer of a push, rollback or delete: {@code {push, revision, modules, hosts}}, and
     *         {@code warnings} naming the hosts without an agent
     */
    private Map<String, Object> accepted(PushWriter.Result result) throws Exception {
        for (String m : result.modules()) awaitCached(paths.desired(m)); // a status asked next shows the desired revision
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("push", result.push());
        out.put("revision", result.revision());
        out.put("modules", result.modules());
        out.put("hosts", result.hosts());
        List<String> warnings = noAgent(result.hosts());
        if (!warnings.isEmpty()) out.put("warnings", warnings);
        return out;
    }

    /**
     * @param hosts the hosts a push names ({@code *} for every host)
     * @return one warning per named host without an agent node: the push lands there only when its agent starts (a typo
     *         in {@code hosts} shows here, not as a push that never finishes)
     */
    private List<String> noAgent(List<String> hosts) {
        List<String> out = new ArrayList<>();
        try {
            java.util.Set<String> agents = new java.util.HashSet<>(ZkReads.children(client, paths.agents()));
            for (String h : hosts) {
                if (h.equals(ModuleSpec.ALL_HOSTS) || agents.contains(h)) continue;
                out.add("host " + h + " has no agent (no " + paths.agent(h) + "): the push lands there when an agent runs with --host " + h
                        + "; check the name in hosts");
            }
        } catch (Exception e) {
            LOG.debug("agents not read for the push's warnings: {}", e.toString());
        }
        return out;
    }

    /** Answers 408: the body did not arrive within the read timeout after the head. */
    private void timedOut(Exchange ex, Exchange.TimedOutException e) {
        LOG.warn("{} {} from {}: the body did not arrive within {} ({} bytes came); answered 408", ex.method(), Printable.cut(ex.path()),
                ex.remote(), limits.readTimeout(), e.received);
        send(ex, 408, error("the request body did not arrive within " + limits.readTimeout().toSeconds() + "s of its headers ("
                + e.received + " bytes came; mesh-coordinator serve --http-read-timeout): send the body at once, or check the network between client and coordinator"));
    }

    /**
     * Answers a push's or plan's 401 or 403; logs who was refused and why, never a token, secret or signature.
     *
     * @param request  {@code push} or {@code plan}
     * @param rejected counts the refusal by {@code reason} ({@link #manifest})
     * @param what     what was wrong, such as {@code a wrong bearer token}
     */
    private void refuse(Exchange ex, String request, Consumer<String> rejected, int status, String reason, String what) {
        rejected.accept(reason);
        LOG.warn("{} refused ({}) from {}: {}", request, status, ex.remote(), what);
        if (status == 401) ex.responseHeader("WWW-Authenticate", "Bearer realm=\"mesh\"");
        String how = "send Authorization: Bearer <token> (mesh push --token-file F, or MESH_TOKEN)"
                + (webhook == null ? "" : ", or " + WebhookSecret.HEADER + ": sha256=<HMAC-SHA256 of the body with the webhook secret>");
        send(ex, status, error((status == 401 ? "missing credentials: " : "wrong credentials (" + what + "): ") + how));
    }

    private void listPushes(Exchange ex) throws Exception {
        int limit = DEFAULT_LIST;
        String q = ex.query();
        if (q != null) {
            for (String kv : q.split("&")) {
                if (kv.startsWith("limit=")) {
                    try {
                        limit = Math.max(1, Math.min(MAX_LIST, Integer.parseInt(kv.substring(6))));
                    } catch (NumberFormatException e) {
                        throw Refusal.badRequest(null, "limit must be a number from 1 to " + MAX_LIST);
                    }
                }
            }
        }
        List<String> names = new ArrayList<>(ZkReads.children(client, paths.pushes()).stream()
                .filter(n -> ZkPaths.pushSeq(n) >= 0)
                .sorted(Comparator.comparingLong(ZkPaths::pushSeq).reversed())
                .limit(limit)
                .toList());
        List<PushRecord> pushes = new ArrayList<>();
        for (String n : names) {
            PushRecord r = ZkReads.read(client, paths.push(n), PushRecord.class);
            if (r != null) pushes.add(r);
        }
        send(ex, 200, Map.of("pushes", pushes));
    }

    /**
     * {@code POST /v1/pushes/{push}/cancel} ({@code mesh push cancel}): token as pushes; {@code 200} with the cancel
     * ({@code already} when it was cancelled before), 404 for an unknown push, 409 for one with nothing left to cancel
     * (docs/decisions/0030-cancel-and-expire-pushes.md).
     */
    private void cancelPush(Exchange ex, String push) throws Exception {
        if (!authorized(ex, "push cancels")) return;
        PushCancels.Result r = cancels.cancel(push, identity(ex, false));
        if (!r.already()) {
            LOG.info("push {} cancelled on hosts {} by {} from {}", push, r.cancel().hosts(), r.cancel().by(), ex.remote());
            awaitCached(paths.pushCancel(push));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("cancelled", r.cancel());
        out.put("already", r.already());
        send(ex, 200, out);
    }

    /** The longest a write's answer waits for this coordinator's cache to hold the write ({@link #awaitCached}). */
    private static final Duration CACHE_CATCH_UP = Duration.ofSeconds(2);

    /**
     * Waits, at most {@link #CACHE_CATCH_UP}, until this coordinator's reads give the node as ZooKeeper holds it now, so
     * that a caller's next read here sees its own write (a {@code mesh status} right after {@code mesh push cancel}).
     * Another coordinator's cache may lag further; a wait that runs out answers all the same.
     */
    private void awaitCached(String path) throws Exception {
        org.apache.zookeeper.data.Stat now = client.checkExists().forPath(path);
        long until = System.nanoTime() + CACHE_CATCH_UP.toNanos();
        while (!cache.serves(path, now) && System.nanoTime() < until) Thread.sleep(5);
    }

    private void pushStatus(Exchange ex, String push) throws Exception {
        send(ex, 200, status.of(push).orElseThrow(() -> Refusal.notFound(null, "no push " + Printable.cut(push)
                + " (push ids look like push-0000000002; GET /v1/pushes lists them)")));
    }

    private void held(Exchange ex) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        // Window holds and operator holds apart (decision 0015): an operator's carries hold and whether it expired.
        List<HeldRecord> all = fleet.held();
        Instant now = ZkClock.now();
        out.put("held", all.stream().filter(h -> !h.operatorHold()).toList());
        out.put("holds", all.stream().filter(HeldRecord::operatorHold).map(h -> OperatorHoldView.of(h, now)).toList());
        out.put("windows", fleet.windows());
        out.put("drains", drains.list()); // each drained host's agent holds its containers (decision 37)
        // What an agent that went mid-window left held, as last known: its held nodes went with its session.
        List<Map<String, Object>> lastKnown = new ArrayList<>();
        for (FleetStatus.HostRow h : fleetStatus.fleet().hosts()) {
            for (FleetStatus.Cell c : h.modules()) {
                if (c.lastKnown() == null) continue;
                Map<String, Object> k = new LinkedHashMap<>();
                k.put("host", h.host());
                k.put("module", c.module());
                k.put("lastKnown", c.lastKnown());
                lastKnown.add(k);
            }
        }
        out.put("offline", lastKnown);
        send(ex, 200, out);
    }

    /**
     * An operator hold as {@code GET /v1/held} lists it.
     *
     * @param expired true when its {@code until} has passed: it holds nothing, its agent deletes it
     */
    public record OperatorHoldView(String host, String module, String container, HeldRecord.OperatorHold hold, boolean expired) {
        static OperatorHoldView of(HeldRecord h, Instant now) {
            return new OperatorHoldView(h.host(), h.module(), h.container(), h.hold(), h.expiredAt(now));
        }
    }

    private void health(Exchange ex) {
        boolean connected = client.getZookeeperClient().isConnected();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("status", connected ? "ok" : "unavailable");
        out.put("zookeeper", connected ? "connected" : "disconnected");
        send(ex, connected ? 200 : 503, out);
    }

    private void metrics(Exchange ex) {
        boolean connected = client.getZookeeperClient().isConnected();
        int held = -1;
        if (connected) {
            try {
                held = fleet.heldCount();
            } catch (Exception e) {
                LOG.warn("cannot count held containers for /metrics: {}", e.toString());
            }
        }
        String fleetText = "";
        if (connected) {
            try {
                fleetText = Metrics.renderFleet(fleetStatus.fleet(), fleetStatus.locks());
            } catch (Exception e) {
                LOG.warn("cannot read the fleet for /metrics: {}", e.toString());
            }
        }
        String more = "";
        try {
            more = moreMetrics.get();
        } catch (RuntimeException e) {
            LOG.warn("cannot render the webhooks' metrics: {}", e.toString());
        }
        byte[] text = (metrics.render(held, connected) + fleetText + more).getBytes(StandardCharsets.UTF_8);
        ex.responseHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
        sendBytes(ex, 200, text);
    }

    private static Map<String, String> error(String message) { return Map.of("error", message); }

    private void send(Exchange ex, int status, Object body) {
        byte[] bytes;
        try {
            bytes = Json.MAPPER.writeValueAsBytes(body);
        } catch (IOException e) {
            LOG.error("cannot serialise a response", e);
            status = 500;
            bytes = "{\"error\":\"internal error: cannot serialise the response\"}".getBytes(StandardCharsets.UTF_8);
        }
        ex.responseHeader("Content-Type", "application/json; charset=utf-8");
        sendBytes(ex, status, bytes);
    }

    private static void sendBytes(Exchange ex, int status, byte[] bytes) { ex.send(status, bytes); }

    /** Sends JSON already serialised, with status 200. */
    private static void sendJson(Exchange ex, byte[] json) {
        ex.responseHeader("Content-Type", "application/json; charset=utf-8");
        sendBytes(ex, 200, json);
    }

    /**
     * {@code POST /v1/plans}: a push's credentials, body limits and validation; then the plan is written
     * ({@link PlanStore#create}) and nothing else.
     */
    private void planRequest(Exchange ex) throws Exception {
        Manifest m = manifest(ex, "plan", reason -> {});
        if (m == null) return;
        String caller = caller(ex);
        String who = "mesh push --plan" + (caller == null ? "" : " by " + caller) + " from " + ex.remoteHost() + " via mesh-coordinator";
        PlanStore.Created c;
        try {
            c = plans.create(m.text(), ex.header(REVISION_HEADER), ProcessRef.current(who));
        } catch (ManifestException e) {
            send(ex, 400, Map.of("errors", e.errors()));
            return;
        }
        LOG.info("plan {} revision {} modules {} hosts {} from {}", c.plan(), c.revision(), c.modules(), c.hosts(), ex.remote());
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("plan", c.plan());
        out.put("revision", c.revision());
        out.put("modules", c.modules());
        out.put("hosts", c.hosts());
        out.put("schedules", c.schedules());
        out.put("noAgent", c.noAgent());
        out.put("path", paths.plan(c.plan()));
        send(ex, 202, out);
    }

    /** {@code GET /v1/plans/{plan}}. */
    private void planView(Exchange ex, String plan) throws Exception {
        send(ex, 200, plans.view(plan).orElseThrow(() -> Refusal.notFound(null, "no plan " + Printable.cut(plan)
                + " (plan ids look like plan-0000000003; plans older than " + PlanStore.MAX_AGE.toMinutes() + "m or beyond the newest "
                + PlanStore.KEEP + " are deleted)")));
    }

    /**
     * {@code GET /v1/audit}: asks the hosts for their ledgers' slices and judges them ({@link AuditStore#audit}); blocks
     * up to the query's {@code timeout} (default 10 s) while the agents answer.
     */
    private void audit(Exchange ex) throws Exception {
        Instant now = audits.clock().instant();
        AuditQuery q;
        try {
            q = AuditQuery.parse(ex.query(), now);
        } catch (AuditQuery.InvalidException e) {
            send(ex, 400, Map.of("errors", e.errors));
            return;
        }
        List<AuditQuery.FieldError> errors = new ArrayList<>();
        if (!q.hosts().isEmpty()) {
            java.util.Set<String> known = audits.knownHosts();
            for (String h : q.hosts()) {
                if (!known.contains(h)) {
                    errors.add(new AuditQuery.FieldError("host", "no host " + h + " is known (no " + paths.agent(h) + " and no "
                            + paths.reports(h) + "): check the name (mesh status lists the hosts), or leave host out for every host"));
                }
            }
        }
        for (String m : q.modules()) {
            // a module removed since keeps its push history, and its lines in the ledgers: it can be audited
            if (client.checkExists().forPath(paths.desired(m)) == null && client.checkExists().forPath(paths.history(m)) == null) {
                errors.add(new AuditQuery.FieldError("module", "no module " + m + " was pushed (no " + paths.desired(m) + " and no "
                        + paths.history(m) + "): check the name (mesh status lists the modules), or leave module out for every module"));
            }
        }
        if (!errors.isEmpty()) {
            send(ex, 400, Map.of("errors", errors));
            return;
        }
        String caller = caller(ex);
        ProcessRef by = ProcessRef.current("mesh audit" + (caller == null ? "" : " by " + caller) + " from " + ex.remoteHost() + " via mesh-coordinator");
        if (!auditSlots.tryAcquire()) {
            busyAudits(ex);
            return;
        }
        AuditStore.Result r;
        try {
            r = audits.audit(q.since(), q.until(), q.hosts(), q.modules().isEmpty() ? null : new java.util.HashSet<>(q.modules()), q.timeout(), by);
        } finally {
            auditSlots.release();
        }
        LOG.info("audit {}..{} hosts {} modules {} from {}: exit {}", r.from(), r.to(), r.hosts().size(), q.modules(), ex.remote(), r.exit());
        send(ex, 200, r);
    }

    /** {@code GET /v1/why/{host}/{container}} ({@code mesh why}). */
    private void why(Exchange ex, String host, String container) throws Exception {
        try {
            ZkPaths.checkHost(host);
        } catch (IllegalArgumentException e) {
            throw Refusal.notFound("host", "'" + Printable.cut(host) + "' is not a host id (such as host-a): check the name (mesh status lists the hosts)");
        }
        if (!container.matches("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")) {
            throw Refusal.notFound("container", "'" + Printable.cut(container) + "' is not a container's Docker name: give <module>-<name>, such as store-registry");
        }
        String caller = caller(ex);
        ProcessRef by = ProcessRef.current("mesh why" + (caller == null ? "" : " by " + caller) + " from " + ex.remoteHost() + " via mesh-coordinator");
        if (!auditSlots.tryAcquire()) {
            busyAudits(ex);
            return;
        }
        try {
            send(ex, 200, whys.why(host, container, by));
        } finally {
            auditSlots.release();
        }
    }

    /** Answers 503: {@link #MAX_AUDITS} audits are waiting for their hosts already. */
    private void busyAudits(Exchange ex) {
        ex.responseHeader("Retry-After", "10");
        send(ex, 503, error(MAX_AUDITS + " audits are waiting for their hosts on this coordinator already: ask again in a few seconds"));
    }

}
