package io.mesh.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.agent.AuditRequests;
import io.mesh.coordinator.AuditStore;
import io.mesh.coordinator.HttpApi;
import io.mesh.curator.MeshZk;
import io.mesh.ledger.Ledger;
import io.mesh.ledger.LedgerFiles;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.AuditChecker;
import io.mesh.wire.AuditReport;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/**
 * B14: {@code mesh audit --since 24h} over a fleet of SIMULATED hosts (SPEC.md "Audit", decision 28), end to end:
 * {@link AuditStore#audit} writes the request, each host's real {@link AuditRequests} (its own Curator client and
 * session, its agent node up) reads its slice from the real {@link LedgerFiles} over a ledger written through the real
 * {@link Ledger}, writes its pages, and the coordinator reads them and runs {@link AuditChecker} per host. Each host's
 * ledger holds a day: per module one window (held open, the restart-policy update, a stop call with its kill, die and
 * stop events, a start call with its start event, the update back, held close) and one or two applies that recreate a
 * container (create, stop, rename ×2, start, remove, with their events), every call written as it begins and as it
 * ends, as the module section writes them. Every answer is checked: exit 0, every host answered, exactly one
 * {@code ok} window item per host and module, every apply item there; a round that is not is an error, not a figure.
 *
 * <p>The first {@value #WARM_UP} audits are a warm-up (the first one printed apart: the agents read their files for the
 * first time, the code is cold); then {@code --rounds} measured, the p50 reported.
 *
 * <p>Printed beside it, for where the time goes: the checker alone over the same slices (no ZooKeeper, no files), the
 * ZooKeeper requests an audit causes (with a server of its own: its {@code zk_packets_received}), and
 * with {@code --http true} the same audit through a coordinator's {@code GET /v1/audit?since=24h}.
 *
 * <p>Args: [--zk-file FILE] (else a ZooKeeper {@code TestingServer} of its own, random port) --results FILE
 * [--hosts 100] [--modules 10] [--rounds 5] [--http true]
 */
public final class AuditBench {
    /**
     * Audits before the measured rounds, the first printed apart: the agents read their files for the first time and
     * every JVM's code is cold then; a coordinator and agents that have run for a while have neither.
     */
    static final int WARM_UP = 3;

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        Path results = Path.of(a.getOrDefault("results", "target/bench-b14.properties"));
        int hosts = Integer.parseInt(a.getOrDefault("hosts", "100"));
        int modules = Integer.parseInt(a.getOrDefault("modules", "10"));
        int rounds = Integer.parseInt(a.getOrDefault("rounds", "5"));
        boolean http = Boolean.parseBoolean(a.getOrDefault("http", "true"));
        TestingServer own = null;
        String connect;
        if (a.containsKey("zk-file")) {
            connect = ZkEnsemble.read(a.get("zk-file")).getProperty("all");
        } else {
            System.setProperty("zookeeper.4lw.commands.whitelist", "mntr"); // the requests an audit causes, counted
            // a random free port; no cap on connections from one address (100 simulated hosts share 127.0.0.1)
            own = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, -1, 0), true);
            connect = own.getConnectString();
        }
        String tag = String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
        ZkPaths paths = new ZkPaths("/bench-audit-" + tag);
        Path state = Files.createTempDirectory("mesh-bench-audit");
        List<CuratorFramework> clients = Collections.synchronizedList(new ArrayList<>());
        List<AuditRequests> agents = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CuratorFramework coord = MeshZk.connect(connect, Duration.ofSeconds(30));
        HttpApi api = null;
        try {
            Instant now = Instant.now();
            long t = System.nanoTime();
            java.util.concurrent.atomic.AtomicLong lineCount = new java.util.concurrent.atomic.AtomicLong(), byteCount = new java.util.concurrent.atomic.AtomicLong();
            List<Future<?>> written = new ArrayList<>();
            for (int h = 0; h < hosts; h++) {
                int hh = h;
                written.add(pool.submit(() -> {  // each writer waits out its 200 ms batch: several at once
                    String host = String.format("sim-%04d", hh);
                    List<LedgerEntry> day = day(host, hh, modules, now, new Random(hh));
                    lineCount.addAndGet(day.size());
                    Path dir = state.resolve(host);
                    Ledger ledger = Ledger.open(dir);
                    for (LedgerEntry e : day) ledger.write(e); // a few hundred: well under the writer's queue
                    if (!ledger.flush(Duration.ofSeconds(30))) throw new IllegalStateException(host + ": its ledger did not write");
                    ledger.close();
                    try (Stream<Path> s = Files.list(dir.resolve(Ledger.DIR))) {
                        for (Path f : s.toList()) byteCount.addAndGet(Files.size(f));
                    }
                    return null;
                }));
            }
            for (Future<?> f : written) f.get();
            long[] lines = {lineCount.get()};
            long bytes = byteCount.get();
            Bench.log("B14", hosts + " hosts × " + modules + " modules: " + lines[0] + " ledger lines (" + bytes / 1024 + " KiB) written in "
                    + Bench.f(Bench.ms(System.nanoTime() - t)) + " ms");

            t = System.nanoTime();
            List<Future<?>> fs = new ArrayList<>();
            for (int h = 0; h < hosts; h++) {
                String host = String.format("sim-%04d", h);
                fs.add(pool.submit(() -> {
                    CuratorFramework c = MeshZk.connect(connect, Duration.ofSeconds(60));
                    clients.add(c);
                    c.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                            .forPath(paths.agent(host), Json.bytes(new AgentRecord(host, "bench", ProcessHandle.current().pid(), Instant.now())));
                    AuditRequests r = new AuditRequests(c, paths, host, LedgerFiles.of(state.resolve(host)), Clock.systemUTC());
                    agents.add(r);
                    r.start();
                    return null;
                }));
            }
            for (Future<?> f : fs) f.get();
            Bench.log("B14", hosts + " simulated agents up in " + Bench.f(Bench.ms(System.nanoTime() - t) / 1000) + " s");
            Thread.sleep(1000); // their watches set

            AuditStore store = new AuditStore(coord, paths, Clock.systemUTC());
            ProcessRef by = ProcessRef.current("mesh audit (bench)");
            int applies = modules + (modules + 1) / 2;
            List<Double> direct = new ArrayList<>();
            List<Double> requests = new ArrayList<>();
            double first = Double.NaN;
            List<AuditReport> lastReports = null;
            Instant since = null, until = null;
            for (int r = -WARM_UP + 1; r <= rounds; r++) {
                until = Instant.now();
                since = until.minus(Duration.ofHours(24));
                long packets = own == null ? 0 : StatusBench.packets(own);
                long s = System.nanoTime();
                AuditStore.Result res = store.audit(since, until, null, null, AuditStore.MAX_TIMEOUT, by);
                double ms = Bench.ms(System.nanoTime() - s);
                if (own != null && r > 0) requests.add((double) (StatusBench.packets(own) - packets));
                check(res.exit(), res.hosts(), hosts, modules, applies);
                lastReports = res.hosts();
                if (r == -WARM_UP + 1) first = ms;
                if (r > 0) direct.add(ms);
                Bench.log("B14", (r == -WARM_UP + 1 ? "first audit (the files read for the first time)" : r <= 0 ? "warm-up" : "round " + r + "/" + rounds) + ": "
                        + Bench.f(ms) + " ms, exit " + res.exit() + ", " + res.hosts().size() + " hosts");
            }

            // The checker alone over the same slices, as the coordinator ran it: no ZooKeeper, no pages, no files.
            List<List<LedgerEntry>> slices = new ArrayList<>();
            for (int h = 0; h < hosts; h++) slices.add(LedgerFiles.of(state.resolve(String.format("sim-%04d", h))).slice(since, until, null));
            List<Double> checker = new ArrayList<>();
            for (int r = 0; r < rounds + 2; r++) {
                long s = System.nanoTime();
                List<AuditReport> reps = new ArrayList<>();
                Instant checkNow = Instant.now();
                for (int h = 0; h < hosts; h++) reps.add(AuditChecker.check(String.format("sim-%04d", h), slices.get(h), since, until, null, checkNow));
                double ms = Bench.ms(System.nanoTime() - s);
                check(AuditReport.exitCode(reps), reps, hosts, modules, applies);
                if (r >= 2) checker.add(ms);
            }

            Map<String, Object> m = new LinkedHashMap<>();
            m.put("b14.hosts", hosts);
            m.put("b14.modules", modules);
            m.put("b14.ledger_lines", lines[0]);
            m.put("b14.ledger_kib", bytes / 1024);
            m.put("b14.rounds", direct.size());
            m.put("b14.window_items", lastReports.stream().mapToLong(rep -> rep.items().stream().filter(i -> i.type().equals("window")).count()).sum());
            m.put("b14.slice_lines_per_host", slices.stream().mapToInt(List::size).sum() / (double) hosts);
            m.put("b14.slice_kib_per_host", slices.stream().mapToLong(l -> Json.bytes(l).length).sum() / 1024.0 / hosts);
            m.put("b14.first_ms", first);
            m.put("b14.audit.p50_ms", Bench.median(direct));
            m.put("b14.audit.max_ms", Bench.pct(direct, 100));
            m.put("b14.checker_only.p50_ms", Bench.median(checker));
            // ZooKeeper requests per audit, all sessions (the agents' answers and the coordinator's reads); own server only
            if (!requests.isEmpty()) m.put("b14.zk_requests_per_audit", Bench.median(requests));

            if (http) {
                api = new HttpApi(coord, paths, new InetSocketAddress("127.0.0.1", 0), null);
                api.start();
                HttpClient hc = HttpClient.newHttpClient();
                URI uri = URI.create("http://127.0.0.1:" + api.port() + "/v1/audit?since=24h&timeout=25s");
                List<Double> viaHttp = new ArrayList<>();
                for (int r = 0; r <= rounds; r++) {
                    long s = System.nanoTime();
                    HttpResponse<byte[]> resp = hc.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(40)).GET().build(),
                            HttpResponse.BodyHandlers.ofByteArray());
                    double ms = Bench.ms(System.nanoTime() - s);
                    if (resp.statusCode() != 200) throw new IllegalStateException("GET /v1/audit: " + resp.statusCode() + " " + new String(resp.body()));
                    JsonNode body = Json.MAPPER.readTree(resp.body());
                    long windows = 0;
                    for (JsonNode hr : body.path("hosts")) for (JsonNode i : hr.path("items")) if ("window".equals(i.path("type").asText()) && "ok".equals(i.path("status").asText())) windows++;
                    if (body.path("exit").asInt(-1) != 0 || body.path("hosts").size() != hosts || windows != (long) hosts * modules) {
                        throw new IllegalStateException("GET /v1/audit: exit " + body.path("exit") + ", " + body.path("hosts").size() + " hosts, "
                                + windows + " ok windows; want exit 0, " + hosts + ", " + hosts * modules);
                    }
                    if (r > 0) viaHttp.add(ms);
                    Bench.log("B14", "GET /v1/audit?since=24h " + (r == 0 ? "(warm-up)" : "round " + r + "/" + rounds) + ": " + Bench.f(ms) + " ms, "
                            + resp.body().length / 1024 + " KiB");
                }
                m.put("b14.http.p50_ms", Bench.median(viaHttp));
                m.put("b14.http.max_ms", Bench.pct(viaHttp, 100));
            }
            Bench.result(results, m);
        } finally {
            if (api != null) api.close();
            for (AuditRequests r : agents) r.close();
            for (CuratorFramework c : clients) c.close();
            try {
                coord.delete().deletingChildrenIfNeeded().forPath(paths.root());
            } catch (Exception ignored) {
                // best effort
            }
            coord.close();
            pool.shutdownNow();
            if (own != null) own.close();
            try (Stream<Path> s = Files.walk(state)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /**
     * @throws IllegalStateException unless the audit is what the ledgers hold: exit 0, every host answered with no
     *                               violation, one {@code ok} window item per host and module, every apply item
     */
    static void check(int exit, List<AuditReport> reports, int hosts, int modules, int applies) {
        long windows = 0, applyItems = 0;
        for (AuditReport r : reports) {
            if (r.error() != null) throw new IllegalStateException(r.host() + " did not answer: " + r.error());
            if (!r.violations().isEmpty()) throw new IllegalStateException(r.host() + ": " + Json.text(r.violations().get(0)));
            for (AuditReport.Item i : r.items()) {
                if (i.type().equals("window") && i.status().equals("ok") && i.stops() == 1 && i.starts() == 1) windows++;
                if (i.type().equals("apply")) applyItems++;
            }
        }
        if (exit != AuditReport.CLEAN || reports.size() != hosts || windows != (long) hosts * modules || applyItems != (long) hosts * applies) {
            throw new IllegalStateException("the audit answered exit " + exit + ", " + reports.size() + " hosts, " + windows + " ok windows, "
                    + applyItems + " applies; want exit 0, " + hosts + ", " + hosts * modules + ", " + hosts * applies);
        }
    }

    /**
     * A day of one host's ledger, oldest first: the follower's first line 25 h ago, then per module its window and
     * its applies, spread over the day and ending over a minute before {@code now}.
     */
    static List<LedgerEntry> day(String host, int h, int modules, Instant now, Random rnd) {
        List<LedgerEntry> out = new ArrayList<>();
        Instant begin = now.minus(Duration.ofHours(25));
        out.add(LedgerEntry.follow(begin, "the ledger begins: no anchor; events from now on"));
        ProcessRef agent = new ProcessRef(1000 + h, "mesh-agent run");
        for (int m = 0; m < modules; m++) {
            String module = LedgerDiskBench.MODULES[m % LedgerDiskBench.MODULES.length] + (m < LedgerDiskBench.MODULES.length ? "" : "-" + m);
            String web = module + "-web", worker = module + "-worker";
            String webId = hexId(rnd), workerId = hexId(rnd);
            // the window, somewhere between 23 h and 2 h ago
            Instant w = now.minus(Duration.ofHours(2)).minus(Duration.ofMinutes(rnd.nextInt(21 * 60))).plusNanos(rnd.nextInt(1_000_000_000));
            String windowId = "w-" + host + "-" + m;
            String schedule = "0 3 * * *";
            ProcessRef win = new ProcessRef(50_000 + h * 100 + m, "mesh-agent window");
            String cause = "window:" + schedule;
            out.add(LedgerEntry.held(LedgerKind.HELD_OPEN, w, module, web, webId, LedgerEntry.WINDOW, windowId, schedule, null, null, null));
            call(out, w.plusMillis(20), w.plusMillis(45), module, web, webId, "update", cause, windowId, schedule, win,
                    event(w.plusMillis(40), module, web, webId, "update", null));
            call(out, w.plusMillis(60), w.plusMillis(1180), module, web, webId, "stop", cause, windowId, schedule, win,
                    event(w.plusMillis(70), module, web, webId, "kill", null), event(w.plusMillis(1100), module, web, webId, "die", "137"),
                    event(w.plusMillis(1150), module, web, webId, "stop", null));
            Instant back = w.plusSeconds(45);
            call(out, back, back.plusMillis(320), module, web, webId, "start", cause, windowId, schedule, win,
                    event(back.plusMillis(300), module, web, webId, "start", null));
            call(out, back.plusMillis(330), back.plusMillis(360), module, web, webId, "update", cause, windowId, schedule, win,
                    event(back.plusMillis(350), module, web, webId, "update", null));
            out.add(LedgerEntry.held(LedgerKind.HELD_CLOSE, back.plusMillis(400), module, web, webId, LedgerEntry.WINDOW, windowId, schedule,
                    null, null, null));
            // one apply per module (two on every other one), each recreating the worker
            int n = m % 2 == 0 ? 2 : 1;
            for (int k = 0; k < n; k++) {
                Instant ap = now.minus(Duration.ofHours(1)).minus(Duration.ofMinutes(rnd.nextInt(22 * 60))).plusNanos(rnd.nextInt(1_000_000_000));
                String push = "push-" + String.format("%010d", 100 + m * 2 + k);
                String newId = hexId(rnd);
                callMaking(out, ap, ap.plusMillis(40), module, worker, null, "create", push, null, null, agent, newId,
                        event(ap.plusMillis(35), module, worker + ".mesh-next", newId, "create", null));
                callMaking(out, ap.plusMillis(50), ap.plusMillis(1200), module, worker, workerId, "stop", push, null, null, agent, null,
                        event(ap.plusMillis(60), module, worker, workerId, "kill", null), event(ap.plusMillis(1100), module, worker, workerId, "die", "137"),
                        event(ap.plusMillis(1150), module, worker, workerId, "stop", null));
                callMaking(out, ap.plusMillis(1210), ap.plusMillis(1230), module, worker, workerId, "rename", push, null, null, agent, null,
                        event(ap.plusMillis(1220), module, worker + ".mesh-prev", workerId, "rename", null));
                callMaking(out, ap.plusMillis(1240), ap.plusMillis(1260), module, worker + ".mesh-next", newId, "rename", push, null, null, agent, null,
                        event(ap.plusMillis(1250), module, worker, newId, "rename", null));
                callMaking(out, ap.plusMillis(1270), ap.plusMillis(1600), module, worker, newId, "start", push, null, null, agent, null,
                        event(ap.plusMillis(1580), module, worker, newId, "start", null));
                callMaking(out, ap.plusMillis(1610), ap.plusMillis(1700), module, worker + ".mesh-prev", workerId, "remove", push, null, null, agent, null,
                        event(ap.plusMillis(1690), module, worker + ".mesh-prev", workerId, "destroy", null));
                workerId = newId;
            }
        }
        out.sort(Comparator.comparing(LedgerEntry::at));
        return out;
    }

    private static void call(List<LedgerEntry> out, Instant at, Instant end, String module, String container, String id, String op,
                             String cause, String window, String schedule, ProcessRef by, LedgerEntry... events) {
        callMaking(out, at, end, module, container, id, op, cause, window, schedule, by, null, events);
    }

    /** A call as the module section writes it: a line as it begins, a line as it ends; then the events it made. */
    private static void callMaking(List<LedgerEntry> out, Instant at, Instant end, String module, String container, String id, String op,
                                   String cause, String window, String schedule, ProcessRef by, String madeId, LedgerEntry... events) {
        LedgerEntry begun = LedgerEntry.call(at, module, container, id, op, cause, window, schedule, by);
        out.add(begun);
        out.add(begun.ended(end, madeId, null));
        Collections.addAll(out, events);
    }

    private static LedgerEntry event(Instant at, String module, String container, String id, String action, String exitCode) {
        return LedgerEntry.event(at, module, container, id, action, null, exitCode);
    }

    private static String hexId(Random rnd) {
        byte[] b = new byte[32];
        rnd.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }
}
