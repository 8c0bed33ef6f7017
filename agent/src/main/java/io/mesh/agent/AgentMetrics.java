package io.mesh.agent;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.mesh.section.ModuleLock;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import io.mesh.wire.PromText;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The agent's Prometheus metrics ({@code mesh-agent run --metrics-listen 127.0.0.1:PORT}, {@code GET /metrics}).
 *
 * <p>Applies and windows are counted from the reports this host's processes write (a {@link CuratorCache} on
 * {@code /mesh/reports/<host>}), so that windows of {@code mesh-agent window} count too and nothing inside the apply or
 * the window is instrumented (docs/design.md, "Metrics and logs"); reports that exist at start are not counted. Lock
 * waits come from {@link ModuleLock#observeWaits}; held containers and open windows are read at each scrape.
 *
 * <pre>
 * mesh_applies_total{module,outcome}                counter
 * mesh_apply_duration_seconds{outcome}              histogram
 * mesh_windows_total{module,outcome}                counter
 * mesh_window_duration_seconds{outcome}             histogram
 * mesh_lock_wait_seconds{purpose}                   histogram  (purpose: apply | window)
 * mesh_held_containers                              gauge      (/mesh/held/&lt;host&gt;)
 * mesh_open_windows                                 gauge      (/mesh/windows/&lt;host&gt;)
 * mesh_zookeeper_connected                          gauge      1 connected, 0 not
 * mesh_zookeeper_connection_events_total{state}     counter    CONNECTED, SUSPENDED, RECONNECTED, LOST, READ_ONLY
 * mesh_audit_violations_total{host,module,kind}     counter    the continuous audit of the host's ledger (decision 28)
 * </pre>
 */
public final class AgentMetrics implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AgentMetrics.class);

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final String host;
    private final Map<String, AtomicLong> applies = new ConcurrentHashMap<>();
    private final Map<String, Histogram> applyDurations = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> windows = new ConcurrentHashMap<>();
    private final Map<String, Histogram> windowDurations = new ConcurrentHashMap<>();
    private final Map<String, Histogram> lockWaits = new ConcurrentHashMap<>();
    private final Map<String, Double> waitingSoFar = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> zkEvents = new ConcurrentHashMap<>();
    /** By {@code module + "\0" + kind}: violations the continuous audit found. */
    private final Map<String, AtomicLong> auditViolations = new ConcurrentHashMap<>();
    private final Map<String, String> lastApply = new ConcurrentHashMap<>();
    private final Map<String, String> lastWindow = new ConcurrentHashMap<>();
    private final CuratorCache cache;
    private final ConnectionStateListener connectionListener;
    private final ModuleLock.WaitObserver waitObserver = this::lockWaited;
    private volatile boolean initialized;
    private HttpServer server;
    private ExecutorService serverThreads;

    /**
     * @param client a started Curator client
     * @param paths  the layout
     * @param host   this host's id
     */
    public AgentMetrics(CuratorFramework client, ZkPaths paths, String host) {
        this.client = client;
        this.paths = paths;
        this.host = host;
        this.cache = CuratorCache.build(client, paths.reports(host));
        this.connectionListener = (c, state) -> zkEvents.computeIfAbsent(state.name(), k -> new AtomicLong()).incrementAndGet();
    }

    /** Starts counting: the report cache, the connection listener and the lock observer. */
    public void start() {
        client.getConnectionStateListenable().addListener(connectionListener);
        ModuleLock.observeWaits(waitObserver);
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, after) -> reportChanged(after))
                .forInitialized(() -> initialized = true)
                .build());
        cache.start();
    }

    /**
     * Serves {@code GET /metrics} on a JDK {@link HttpServer}.
     *
     * @param listen address such as {@code 127.0.0.1:9100}; port 0 picks a free one
     * @return the base URL, such as {@code http://127.0.0.1:9100}
     * @throws IOException when the address cannot be bound
     */
    public URI serve(InetSocketAddress listen) throws IOException {
        server = HttpServer.create(listen, 16);
        serverThreads = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "mesh-metrics");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(serverThreads);
        server.createContext("/", this::handle);
        server.start();
        InetSocketAddress a = server.getAddress();
        String h = a.getAddress().getHostAddress();
        return URI.create("http://" + (h.contains(":") ? "[" + h + "]" : h) + ":" + a.getPort());
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getRawPath();
            byte[] body;
            int status;
            if (!ex.getRequestMethod().equals("GET")) {
                status = 405;
                body = "use GET\n".getBytes(StandardCharsets.UTF_8);
            } else if (path.equals("/metrics")) {
                status = 200;
                body = render().getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("Content-Type", PromText.CONTENT_TYPE);
            } else {
                status = 404;
                body = "mesh-agent serves GET /metrics only\n".getBytes(StandardCharsets.UTF_8);
            }
            ex.sendResponseHeaders(status, body.length);
            try (OutputStream os = ex.getResponseBody()) {
                os.write(body);
            }
        }
    }

    private void reportChanged(ChildData node) {
        String parent = ZKPaths.getPathAndNode(node.getPath()).getPath();
        if (!parent.equals(paths.reports(host)) || node.getData() == null || node.getData().length == 0) return;
        String module = ZKPaths.getNodeFromPath(node.getPath());
        ApplyReport r;
        try {
            r = Json.read(node.getData(), ApplyReport.class);
        } catch (UncheckedIOException e) {
            return;
        }
        boolean count = initialized;
        if (r.outcome() != null) {
            String key = r.outcome().wire() + "|" + r.push() + "|" + r.revision() + "|" + r.startedAt() + "|" + r.finishedAt();
            if (!key.equals(lastApply.put(module, key)) && count) applied(module, r);
        }
        WindowResult w = r.lastWindow();
        if (w != null && w.window() != null && !w.window().equals(lastWindow.put(module, w.window())) && count) {
            windowEnded(module, w);
        }
    }

    /**
     * Counts one apply report.
     *
     * @param module module name
     * @param r      the report
     */
    void applied(String module, ApplyReport r) {
        String outcome = r.outcome().wire();
        applies.computeIfAbsent(module + "\0" + outcome, k -> new AtomicLong()).incrementAndGet();
        if (r.startedAt() != null && r.finishedAt() != null) {
            applyDurations.computeIfAbsent(outcome, k -> new Histogram())
                    .observe(Duration.between(r.startedAt(), r.finishedAt()).toNanos() / 1e9);
        }
    }

    /**
     * Counts one window's result.
     *
     * @param module module name
     * @param w      the result
     */
    void windowEnded(String module, WindowResult w) {
        String outcome = (w.outcome() == null ? WindowOutcome.UNKNOWN : w.outcome()).wire();
        windows.computeIfAbsent(module + "\0" + outcome, k -> new AtomicLong()).incrementAndGet();
        if (w.startedAt() != null && w.finishedAt() != null) {
            windowDurations.computeIfAbsent(outcome, k -> new Histogram())
                    .observe(Duration.between(w.startedAt(), w.finishedAt()).toNanos() / 1e9);
        }
    }

    private void lockWaited(String module, String lockHost, String purpose, Duration waited, boolean acquired) {
        String kind = purpose != null && purpose.startsWith("window") ? "window" : "apply";
        String key = Thread.currentThread().getId() + "\0" + module + "\0" + purpose;
        double total = waitingSoFar.merge(key, waited.toNanos() / 1e9, Double::sum);
        if (acquired) {
            waitingSoFar.remove(key);
            lockWaits.computeIfAbsent(kind, k -> new Histogram()).observe(total);
        }
    }

    /** @return the exposition text */
    public String render() {
        PromText out = new PromText();
        byModuleAndOutcome(out, "mesh_applies_total", "Apply reports written on this host, by module and outcome (applied, deferred, failed).", applies);
        histograms(out, "mesh_apply_duration_seconds", "Duration of applies (report finishedAt - startedAt), by outcome.", "outcome", applyDurations);
        byModuleAndOutcome(out, "mesh_windows_total", "Windows ended on this host, by module and outcome (succeeded, step-failed, timed-out, failed).", windows);
        histograms(out, "mesh_window_duration_seconds", "Duration of windows, from opening to the held containers running again, by outcome.", "outcome", windowDurations);
        histograms(out, "mesh_lock_wait_seconds", "Time an apply or a window of this process waited for its module lock before getting it.", "purpose", lockWaits);
        boolean connected = client.getZookeeperClient().isConnected();
        if (connected) {
            try {
                int held = children(paths.held(host)), open = children(paths.windows(host));
                out.family("mesh_held_containers", "gauge", "Containers of this host held stopped by an open window (/mesh/held/<host>).");
                out.sample("mesh_held_containers", "", held);
                out.family("mesh_open_windows", "gauge", "Open windows on this host (/mesh/windows/<host>).");
                out.sample("mesh_open_windows", "", open);
            } catch (Exception e) {
                log.debug("metrics: cannot count held containers: {}", e.toString());
            }
        }
        out.family("mesh_zookeeper_connected", "gauge", "1 when this agent's ZooKeeper client is connected.");
        out.sample("mesh_zookeeper_connected", "", connected ? 1 : 0);
        out.family("mesh_zookeeper_connection_events_total", "counter", "ZooKeeper connection state changes seen by this agent, by new state.");
        new TreeMap<>(zkEvents).forEach((s, v) -> out.sample("mesh_zookeeper_connection_events_total", PromText.label("state", s), v.get()));
        out.family("mesh_audit_violations_total", "counter", "Violations the agent's continuous audit of its ledger found, by module and kind (SPEC.md, Audit).");
        new TreeMap<>(auditViolations).forEach((k, v) -> {
            String[] mk = k.split("\0", 2);
            out.sample("mesh_audit_violations_total", PromText.label("host", host) + "," + PromText.label("module", mk[0]) + ","
                    + PromText.label("kind", mk[1]), v.get());
        });
        return out.toString();
    }

    /**
     * Counts one new violation of the continuous audit.
     *
     * @param module its module ({@code null}, a gap: {@code -})
     * @param kind   its kind
     */
    public void auditViolation(String module, io.mesh.wire.AuditViolationKind kind) {
        auditViolations.computeIfAbsent((module == null ? "-" : module) + "\0" + kind, k -> new AtomicLong()).incrementAndGet();
    }

    /** A counter family whose keys are {@code module + "\0" + outcome}, in key order. */
    private static void byModuleAndOutcome(PromText out, String name, String help, Map<String, AtomicLong> counts) {
        out.family(name, "counter", help);
        new TreeMap<>(counts).forEach((k, v) -> {
            String[] mo = k.split("\0", 2);
            out.sample(name, PromText.label("module", mo[0]) + "," + PromText.label("outcome", mo[1]), v.get());
        });
    }

    /** A histogram family, one histogram a value of {@code label}, in value order. */
    private static void histograms(PromText out, String name, String help, String label, Map<String, Histogram> byValue) {
        out.family(name, "histogram", help);
        new TreeMap<>(byValue).forEach((v, h) -> h.render(out, name, PromText.label(label, v)));
    }

    private int children(String path) throws Exception {
        try {
            return client.getChildren().forPath(path).size();
        } catch (KeeperException.NoNodeException e) {
            return 0;
        }
    }

    /** Stops serving and counting. */
    @Override
    public void close() {
        if (server != null) server.stop(0);
        if (serverThreads != null) serverThreads.shutdownNow();
        ModuleLock.observeWaits(null);
        client.getConnectionStateListenable().removeListener(connectionListener);
        cache.close();
    }
}
