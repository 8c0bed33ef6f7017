package io.mesh.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.HttpApi;
import io.mesh.coordinator.PushWriter;
import io.mesh.curator.MeshZk;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.client.FourLetterWordMain;
import org.apache.zookeeper.server.persistence.FileTxnLog;
import org.apache.zookeeper.server.persistence.TxnLog;
import org.apache.zookeeper.txn.TxnHeader;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * B11: the ensemble and the coordinator at fleet size: 10,000 hosts × 10 modules by default. The fleet is written
 * into a 3-server ensemble of its own ({@link ZkEnsemble}, in its own JVM) as its agents would leave it: an agent
 * node per host, an {@code applied} report per host and module, an operator's hold on one host in a hundred. Then,
 * against a coordinator ({@link HttpApi}) running in this JVM (run it with {@code -Xmx512m}: the target's heap):
 * <ul>
 *   <li>{@code GET /v1/fleet} and the push status, p50/p99 over {@code --requests} calls each, with the ZooKeeper
 *       requests they caused (every server's {@code srvr} {@code Received}); the floor: Jetty sending as many bytes as
 *       the push status's answer from memory;</li>
 *   <li>the heap this JVM uses after a full GC, with the coordinator's caches loaded;</li>
 *   <li>one push through {@code POST /v1/pushes} to every host: the transactions it wrote, read from the leader's
 *       transaction log (ZooKeeper's {@link FileTxnLog}), not from mesh;</li>
 *   <li>a follower stopped while every host writes its report of that push (one {@code setData} each, as agents do),
 *       then restarted: the time until its last zxid is the leader's; and the time until the push status reads
 *       every host applied;</li>
 *   <li>the ensemble's data: znodes, {@code zk_approximate_data_size} and the newest snapshot file's size.</li>
 * </ul>
 * A rollout to every host ({@code rollout} on {@code hosts: ["*"]}) is pushed once too: its answer is printed (a
 * rollout writes a node per host in the push's one transaction, which ZooKeeper caps at 1 MB).
 *
 * <p>Args: --results FILE [--hosts 10000] [--requests 30] [--ensemble-heap 3g]
 */
public final class ScaleBench {
    static final int MODULES = 10;
    private static final String B = "B11";

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        Path results = Path.of(a.getOrDefault("results", "target/bench-b11.properties"));
        int hosts = Integer.parseInt(a.getOrDefault("hosts", "10000"));
        int requests = Integer.parseInt(a.getOrDefault("requests", "30"));
        Path dir = Files.createTempDirectory("mesh-bench-scale");
        Path zkFile = dir.resolve("zk.properties");
        Process ensemble = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx" + a.getOrDefault("ensemble-heap", "3g"), "-Dzookeeper.4lw.commands.whitelist=*",
                "-cp", System.getProperty("java.class.path"), ZkEnsemble.class.getName(), zkFile.toString())
                .redirectError(dir.resolve("ensemble.log").toFile()).start();
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            for (int i = 0; i < 120 && !Files.exists(zkFile); i++) Thread.sleep(500);
            if (!Files.exists(zkFile)) throw new IllegalStateException("the ensemble did not start: see " + dir.resolve("ensemble.log"));
            Properties zk = ZkEnsemble.read(zkFile.toString());
            out.put("scale.hosts", hosts);
            out.put("scale.modules", MODULES);
            run(zk, ensemble, hosts, requests, out);
        } finally {
            Bench.result(results, out); // what was measured, even when a later step failed
            ensemble.getOutputStream().close();
            if (!ensemble.waitFor(30, TimeUnit.SECONDS)) ensemble.destroyForcibly();
        }
    }

    private static void run(Properties zk, Process ensemble, int hosts, int requests, Map<String, Object> out) throws Exception {
        ZkPaths paths = new ZkPaths("/mesh");
        PrintStream control = new PrintStream(ensemble.getOutputStream(), true, StandardCharsets.UTF_8);
        BufferedReader answers = new BufferedReader(new InputStreamReader(ensemble.getInputStream(), StandardCharsets.UTF_8));
        try (CuratorFramework client = MeshZk.connect(zk.getProperty("all"), Duration.ofSeconds(30))) {
            long t = System.nanoTime();
            String first = fleet(client, paths, hosts);
            out.put("scale.write_fleet_s", Bench.ms(System.nanoTime() - t) / 1000);
            Bench.log(B, hosts + " hosts x " + MODULES + " modules written in " + Bench.f(Bench.ms(System.nanoTime() - t) / 1000) + " s");

            t = System.nanoTime();
            HttpApi api = new HttpApi(client, paths, new InetSocketAddress("127.0.0.1", 0), null);
            api.start();
            try {
                HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
                String base = "http://127.0.0.1:" + api.port();
                // The coordinator's caches load in the background: the first full fleet is when every host shows.
                while (hostsIn(get(http, base + "/v1/fleet", null)) < hosts) {
                    if (System.nanoTime() - t > TimeUnit.SECONDS.toNanos(300)) throw new IllegalStateException("the fleet did not load in 300 s");
                    Thread.sleep(200);
                }
                out.put("scale.coordinator_loaded_s", Bench.ms(System.nanoTime() - t) / 1000);
                measureReads(zk, http, base, first, requests, "scale.", out);

                heap(out);

                // One push to every host, through the API, its transactions counted from the leader's log.
                int leader = serverIn(zk, "leader");
                long before = zxid(zk, leader);
                t = System.nanoTime();
                JsonNode push = post(http, base + "/v1/pushes", manifest(1, false), 202);
                out.put("scale.push.ms", Bench.ms(System.nanoTime() - t));
                String pushId = push.path("push").asText();
                Thread.sleep(1000); // anything the push set off (the coordinator's own writes) lands in the log too
                long after = zxid(zk, leader);
                Map<String, Integer> kinds = txns(zk.getProperty("d" + leader), before, after);
                out.put("scale.push.txns", kinds.values().stream().mapToInt(Integer::intValue).sum());
                out.put("scale.push.txn_types", kinds.toString().replace(' ', '_'));
                Bench.log(B, "push " + pushId + ": " + kinds + " between zxid 0x" + Long.toHexString(before) + " and 0x" + Long.toHexString(after));
                measureReads(zk, http, base, pushId, requests, "scale.pending.", out);

                JsonNode rollout = post(http, base + "/v1/pushes", manifest(2, true), -1);
                out.put("scale.rollout_all.status", rollout.path("status").asInt());
                Bench.log(B, "a rollout to every host: " + rollout);

                // A follower down while every host reports the push; then its catch-up.
                int follower = serverIn(zk, "follower");
                control.println("kill " + follower);
                await(answers, "killed " + follower);
                t = System.nanoTime();
                reportAll(client, paths, hosts, pushId);
                out.put("scale.hosts_report_s", Bench.ms(System.nanoTime() - t) / 1000);
                long reported = System.nanoTime();
                long leaderZxid = zxid(zk, serverIn(zk, "leader"));
                t = System.nanoTime();
                control.println("restart " + follower);
                await(answers, "restarted " + follower);
                while (!caughtUp(zk, follower, leaderZxid)) {
                    if (System.nanoTime() - t > TimeUnit.SECONDS.toNanos(120)) throw new IllegalStateException("the follower did not catch up in 120 s");
                    Thread.sleep(20);
                }
                out.put("scale.follower.catchup_ms", Bench.ms(System.nanoTime() - t));
                while (!get(http, base + "/v1/pushes/" + pushId, null).path("done").asBoolean()) {
                    if (System.nanoTime() - reported > TimeUnit.SECONDS.toNanos(120)) throw new IllegalStateException("the push status did not read done in 120 s");
                    Thread.sleep(100);
                }
                out.put("scale.status_done_after_reports_ms", Bench.ms(System.nanoTime() - reported));
                measureReads(zk, http, base, pushId, requests, "scale.after.", out);

                String mntr = FourLetterWordMain.send4LetterWord("127.0.0.1", port(zk, leader), "mntr");
                out.put("scale.znodes", stat(mntr, "zk_znode_count"));
                out.put("scale.data_mb", Long.parseLong(stat(mntr, "zk_approximate_data_size")) / 1e6);
                out.put("scale.snapshot_mb", newestSnapshot(zk) / 1e6);
                heap(out);
            } finally {
                api.close();
            }
        }
    }

    /** GET /v1/fleet and the push status, {@code requests} times each, with the ZooKeeper packets they caused. */
    private static void measureReads(Properties zk, HttpClient http, String base, String push, int requests, String k,
                                     Map<String, Object> out) throws Exception {
        for (int i = 0; i < 3; i++) { get(http, base + "/v1/fleet", null); get(http, base + "/v1/pushes/" + push, null); }
        List<Double> fleet = new ArrayList<>(), status = new ArrayList<>();
        long zkBefore = packets(zk);
        long[] bytes = new long[2];
        for (int i = 0; i < requests; i++) bytes[0] = getBytes(http, base + "/v1/fleet", fleet);
        long zkFleet = packets(zk) - zkBefore;
        zkBefore = packets(zk);
        for (int i = 0; i < requests; i++) bytes[1] = getBytes(http, base + "/v1/pushes/" + push, status);
        long zkStatus = packets(zk) - zkBefore;
        out.put(k + "fleet.p50_ms", Bench.median(fleet));
        out.put(k + "fleet.p99_ms", Bench.pct(fleet, 99));
        out.put(k + "fleet.mb", bytes[0] / 1e6);
        out.put(k + "fleet.zk_requests_per_call", zkFleet / (double) requests);
        out.put(k + "push_status.p50_ms", Bench.median(status));
        out.put(k + "push_status.p99_ms", Bench.pct(status, 99));
        out.put(k + "push_status.mb", bytes[1] / 1e6);
        out.put(k + "push_status.zk_requests_per_call", zkStatus / (double) requests);
        // The floor: as many bytes as the push status's answer, held in memory and sent by Jetty as the coordinator's are.
        try (Floor floor = new Floor(bytes[1])) {
            List<Double> f = new ArrayList<>();
            for (int i = 0; i < 3; i++) getBytes(http, floor.url(), new ArrayList<>());
            for (int i = 0; i < requests; i++) getBytes(http, floor.url(), f);
            out.put(k + "floor_bytes.p50_ms", Bench.median(f));
            out.put(k + "floor_bytes.p99_ms", Bench.pct(f, 99));
            Bench.log(B, k + " floor, " + Bench.f(bytes[1] / 1e6) + " MB from memory: p50 " + Bench.f(Bench.median(f)) + " ms p99 " + Bench.f(Bench.pct(f, 99)) + " ms");
        }
        Bench.log(B, k + " fleet p50 " + Bench.f(Bench.median(fleet)) + " ms p99 " + Bench.f(Bench.pct(fleet, 99)) + " ms ("
                + Bench.f(bytes[0] / 1e6) + " MB); push status p50 " + Bench.f(Bench.median(status)) + " ms p99 "
                + Bench.f(Bench.pct(status, 99)) + " ms (" + Bench.f(bytes[1] / 1e6) + " MB)");
    }

    /** The heap in use after a full collection, MB (the coordinator's caches and this bench's little else). */
    private static void heap(Map<String, Object> out) {
        for (int i = 0; i < 3; i++) System.gc();
        var mem = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        out.put("scale.heap_used_mb", mem.getUsed() / 1e6);
        out.put("scale.heap_max_mb", Runtime.getRuntime().maxMemory() / 1e6);
        Bench.log(B, "heap after GC: " + Bench.f(mem.getUsed() / 1e6) + " MB of " + Bench.f(Runtime.getRuntime().maxMemory() / 1e6) + " MB");
    }

    /**
     * The fleet as its agents would leave it after a push of {@link #MODULES} modules to every host: per host an
     * agent node and an applied report of each module; an operator's hold on every hundredth host.
     *
     * @return the push
     */
    private static String fleet(CuratorFramework client, ZkPaths paths, int hosts) throws Exception {
        String push = new PushWriter(client, paths, Clock.systemUTC()).write(manifest(0, false), "r0").push();
        List<CuratorOp> ops = new ArrayList<>();
        for (String p : List.of(paths.reports(), paths.agents(), paths.held())) {
            if (client.checkExists().forPath(p) == null) client.create().creatingParentsIfNeeded().forPath(p);
        }
        ProcessRef by = ProcessRef.current("bench");
        for (int i = 0; i < hosts; i++) {
            String host = host(i);
            ops.add(client.transactionOp().create().forPath(paths.reports(host)));
            ops.add(client.transactionOp().create().forPath(paths.agent(host), Json.bytes(new AgentRecord(host, "bench", 1, Instant.now()))));
            for (int m = 0; m < MODULES; m++) {
                ops.add(client.transactionOp().create().forPath(paths.report(host, "m" + m), Json.bytes(report(host, "m" + m, "r0", push))));
            }
            if (i % 100 == 7) {
                ops.add(client.transactionOp().create().forPath(paths.held(host)));
                Instant now = Instant.now();
                ops.add(client.transactionOp().create().forPath(paths.held(host, "m3-web"), Json.bytes(HeldRecord.operator(host, "m3", "m3-web",
                        null, by, new HeldRecord.OperatorHold("bench", "a disk swap", now, now.plus(Duration.ofDays(1)), false, null, now)))));
            }
            if (ops.size() >= 480) { client.transaction().forOperations(ops); ops.clear(); }
        }
        if (!ops.isEmpty()) client.transaction().forOperations(ops);
        return push;
    }

    /** Every host's reports of {@code push}, one {@code setData} a report as agents write them, 2,000 in flight. */
    private static void reportAll(CuratorFramework client, ZkPaths paths, int hosts, String push) throws Exception {
        Semaphore inFlight = new Semaphore(2000);
        AtomicReference<String> failed = new AtomicReference<>();
        for (int i = 0; i < hosts; i++) {
            for (int m = 0; m < MODULES; m++) {
                inFlight.acquire();
                String host = host(i), module = "m" + m;
                client.setData().inBackground((c, e) -> {
                    if (e.getResultCode() != 0) failed.compareAndSet(null, e.getPath() + ": " + e.getResultCode());
                    inFlight.release();
                }).forPath(paths.report(host, module), Json.bytes(report(host, module, "r1", push)));
            }
        }
        inFlight.acquire(2000);
        if (failed.get() != null) throw new IllegalStateException("a report write failed: " + failed.get());
    }

    private static ApplyReport report(String host, String module, String revision, String push) {
        return ApplyReport.applied(host, module, revision, push, Instant.now(), null,
                List.of(new ApplyReport.ContainerResult("web", module + "-web", ContainerAction.UNCHANGED, List.of(), "0123456789ab", null, null)));
    }

    static String host(int i) { return String.format("h%05d", i); }

    /** Push {@code k}: {@link #MODULES} modules on every host; with {@code rollout}, one module more, rolled out. */
    static String manifest(int k, boolean rollout) {
        StringBuilder sb = new StringBuilder();
        for (int m = 0; m < MODULES; m++) {
            sb.append("---\nmodule: m").append(m).append("\nhosts: [\"*\"]\ncontainers:\n  web:\n    image: mesh-demo/busybox:1\n")
                    .append("    command: [\"sleep\", \"3600\"]\n    network: none\n    env: {PUSH: \"").append(k).append("\"}\n");
        }
        if (rollout) {
            sb.append("---\nmodule: rolled\nhosts: [\"*\"]\nrollout: {max-parallel: \"10%\"}\ncontainers:\n  web:\n")
                    .append("    image: mesh-demo/busybox:1\n    command: [\"sleep\", \"3600\"]\n    network: none\n");
        }
        return sb.toString();
    }

    /** @return the body of a 200; {@code times} gets the call's ms when given */
    private static JsonNode get(HttpClient http, String url, List<Double> times) throws Exception {
        long s = System.nanoTime();
        HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        if (times != null) times.add(Bench.ms(System.nanoTime() - s));
        if (r.statusCode() != 200) throw new IllegalStateException(url + ": " + r.statusCode() + " " + new String(r.body(), StandardCharsets.UTF_8));
        return Json.MAPPER.readTree(r.body());
    }

    /** @return the body's size; the call's ms appended to {@code times} (the body is read, not parsed) */
    private static long getBytes(HttpClient http, String url, List<Double> times) throws Exception {
        long s = System.nanoTime();
        HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        times.add(Bench.ms(System.nanoTime() - s));
        if (r.statusCode() != 200) throw new IllegalStateException(url + ": " + r.statusCode());
        return r.body().length;
    }

    /** @return the answer, with {@code status} added; throws unless its code is {@code want} ({@code -1}: any) */
    private static JsonNode post(HttpClient http, String url, String body, int want) throws Exception {
        HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/yaml").build(),
                HttpResponse.BodyHandlers.ofByteArray());
        if (want != -1 && r.statusCode() != want) throw new IllegalStateException(url + ": " + r.statusCode() + " " + new String(r.body(), StandardCharsets.UTF_8));
        var n = (com.fasterxml.jackson.databind.node.ObjectNode) Json.MAPPER.readTree(r.body());
        n.put("status", r.statusCode());
        return n;
    }

    private static int hostsIn(JsonNode fleet) {
        return fleet.path("hosts").size();
    }

    /** @return the index of a server in that mode ({@code leader} or {@code follower}) */
    private static int serverIn(Properties zk, String mode) throws Exception {
        for (int i = 0; i < 3; i++) {
            try {
                if (FourLetterWordMain.send4LetterWord("127.0.0.1", port(zk, i), "srvr").contains("Mode: " + mode)) return i;
            } catch (Exception down) {
                // a stopped server
            }
        }
        throw new IllegalStateException("no server in mode " + mode);
    }

    private static int port(Properties zk, int i) {
        String s = zk.getProperty("s" + i);
        return Integer.parseInt(s.substring(s.lastIndexOf(':') + 1));
    }

    /** @return server {@code i}'s last zxid ({@code srvr}'s {@code Zxid}) */
    private static long zxid(Properties zk, int i) throws Exception {
        for (String line : FourLetterWordMain.send4LetterWord("127.0.0.1", port(zk, i), "srvr").split("\n")) {
            if (line.startsWith("Zxid:")) return Long.decode(line.substring(5).trim());
        }
        throw new IllegalStateException("no Zxid from server " + i);
    }

    private static boolean caughtUp(Properties zk, int i, long zxid) {
        try {
            String srvr = FourLetterWordMain.send4LetterWord("127.0.0.1", port(zk, i), "srvr", false, 1000);
            return srvr.contains("Mode: follower") && zxid(zk, i) >= zxid;
        } catch (Exception notYet) {
            return false;
        }
    }

    /** @return the requests every server has received so far ({@link FanoutBench#packets}) */
    private static long packets(Properties zk) throws Exception {
        return FanoutBench.packets(zk);
    }

    private static String stat(String mntr, String key) {
        for (String line : mntr.split("\n")) {
            if (line.startsWith(key + "\t") || line.startsWith(key + " ")) return line.substring(key.length()).trim();
        }
        throw new IllegalStateException("no " + key + " in mntr: " + mntr);
    }

    /**
     * The transactions in {@code (from, to]} of the server whose data directory is {@code dataDir}, by type (and a
     * multi's operations), read with ZooKeeper's own {@link FileTxnLog}.
     */
    static Map<String, Integer> txns(String dataDir, long from, long to) throws Exception {
        Map<String, Integer> kinds = new TreeMap<>();
        try (FileTxnLog log = new FileTxnLog(new File(dataDir, "version-2")); TxnLog.TxnIterator it = log.read(from + 1)) {
            do {
                TxnHeader h = it.getHeader();
                if (h == null || h.getZxid() > to) break;
                if (h.getZxid() <= from) continue;
                String kind = org.apache.zookeeper.server.Request.op2String(h.getType());
                if (it.getTxn() instanceof org.apache.zookeeper.txn.MultiTxn multi) kind += "(" + multi.getTxns().size() + " ops)";
                kinds.merge(kind, 1, Integer::sum);
            } while (it.next());
        }
        return kinds;
    }

    /** @return the size of the newest snapshot file over the servers, bytes (0 when none was taken) */
    private static long newestSnapshot(Properties zk) throws Exception {
        File newest = null;
        for (int i = 0; i < 3; i++) {
            File[] snaps = new File(zk.getProperty("d" + i), "version-2").listFiles((d, n) -> n.startsWith("snapshot."));
            if (snaps == null) continue;
            for (File f : snaps) if (newest == null || f.lastModified() > newest.lastModified()) newest = f;
        }
        Bench.log(B, "newest snapshot: " + (newest == null ? "none" : newest + " " + newest.length() + " bytes"));
        return newest == null ? 0 : newest.length();
    }

    private static void await(BufferedReader answers, String line) throws Exception {
        for (String l; (l = answers.readLine()) != null; ) if (l.equals(line)) return;
        throw new IllegalStateException("the ensemble stopped before answering " + line);
    }

    /** A Jetty server, as the coordinator's, answering every GET with the same bytes from memory in one write. */
    private static final class Floor implements AutoCloseable {
        private final org.eclipse.jetty.server.Server server = new org.eclipse.jetty.server.Server();
        private final org.eclipse.jetty.server.ServerConnector connector = new org.eclipse.jetty.server.ServerConnector(server, 1, 1);

        Floor(long size) throws Exception {
            byte[] body = new byte[(int) size];
            Arrays.fill(body, (byte) ' ');
            connector.setHost("127.0.0.1");
            server.addConnector(connector);
            server.setHandler(new org.eclipse.jetty.server.Handler.Abstract() {
                @Override
                public boolean handle(org.eclipse.jetty.server.Request request, org.eclipse.jetty.server.Response response,
                                      org.eclipse.jetty.util.Callback callback) {
                    response.setStatus(200);
                    response.getHeaders().put("Content-Type", "application/json; charset=utf-8");
                    response.getHeaders().put("Content-Length", String.valueOf(body.length));
                    response.write(true, java.nio.ByteBuffer.wrap(body), callback);
                    return true;
                }
            });
            server.start();
        }

        String url() { return "http://127.0.0.1:" + connector.getLocalPort() + "/"; }

        @Override
        public void close() throws Exception { server.stop(); }
    }

    private ScaleBench() {}
}
