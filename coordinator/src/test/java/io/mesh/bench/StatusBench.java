package io.mesh.bench;

import io.mesh.coordinator.HttpApi;
import io.mesh.coordinator.PushWriter;
import io.mesh.curator.MeshZk;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.client.FourLetterWordMain;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * B7: what an operator's status costs at fleet size. For 100 and 1,000 hosts × 10 modules of reports (written
 * straight into ZooKeeper, as agents would), times {@code GET /v1/fleet} (what {@code mesh status} prints) and
 * {@code GET /v1/pushes/<push>} (what {@code mesh push --wait} polls) against a running coordinator, next to the
 * floor: one {@code getData} of one report node. Also counts the ZooKeeper requests each HTTP request caused (the
 * server's {@code zk_packets_received}, read with the {@code mntr} command), which a status served from a cache keeps
 * at zero whatever the fleet's size.
 *
 * <p>Args: --results FILE [--hosts 100,1000] [--requests 30]
 */
public final class StatusBench {
    static final int MODULES = 10;

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        Path results = Path.of(a.getOrDefault("results", "target/bench-b7.properties"));
        int requests = Integer.parseInt(a.getOrDefault("requests", "30"));
        System.setProperty("zookeeper.4lw.commands.whitelist", "mntr");
        try (TestingServer zk = new TestingServer(true)) {
            for (String h : a.getOrDefault("hosts", "100,1000").split(",")) {
                Map<String, Object> out = new LinkedHashMap<>();
                run(zk, Integer.parseInt(h.trim()), requests, out);
                Bench.result(results, out);
            }
        }
    }

    private static void run(TestingServer zk, int hosts, int requests, Map<String, Object> out) throws Exception {
        ZkPaths paths = new ZkPaths("/bench-status-h" + hosts);
        try (CuratorFramework client = MeshZk.connect(zk.getConnectString(), Duration.ofSeconds(30))) {
            long t = System.nanoTime();
            PushWriter.Result push = fleet(client, paths, hosts);
            Bench.log("B7", hosts + " hosts x " + MODULES + " modules of reports written in " + Bench.f(Bench.ms(System.nanoTime() - t)) + " ms");

            HttpApi api = new HttpApi(client, paths, new InetSocketAddress("127.0.0.1", 0), null);
            api.start();
            try {
                HttpClient http = HttpClient.newHttpClient();
                String base = "http://127.0.0.1:" + api.port();
                List<Double> fleet = new ArrayList<>();
                List<Double> status = new ArrayList<>();
                List<Double> floor = new ArrayList<>();
                long fleetBytes = 0;
                for (int i = 0; i < 3; i++) { get(http, base + "/v1/fleet", new ArrayList<>()); get(http, base + "/v1/pushes/" + push.push(), new ArrayList<>()); }
                long zkBefore = packets(zk);
                for (int i = 0; i < requests; i++) fleetBytes = get(http, base + "/v1/fleet", fleet);
                long zkFleet = packets(zk) - zkBefore;
                zkBefore = packets(zk);
                for (int i = 0; i < requests; i++) get(http, base + "/v1/pushes/" + push.push(), status);
                long zkStatus = packets(zk) - zkBefore;
                for (int i = 0; i < requests * 10; i++) {
                    long s = System.nanoTime();
                    client.getData().forPath(paths.report(String.format("h%04d", i % hosts), "m" + (i % MODULES)));
                    floor.add(Bench.ms(System.nanoTime() - s));
                }
                String k = "b7.h" + hosts + ".";
                out.put(k + "fleet.p50_ms", Bench.median(fleet));
                out.put(k + "fleet.p99_ms", Bench.pct(fleet, 99));
                out.put(k + "fleet.bytes", fleetBytes);
                out.put(k + "fleet.zk_requests_per_call", zkFleet / (double) requests);
                out.put(k + "push_status.p50_ms", Bench.median(status));
                out.put(k + "push_status.p99_ms", Bench.pct(status, 99));
                out.put(k + "push_status.zk_requests_per_call", zkStatus / (double) requests);
                out.put(k + "floor_one_read.p50_ms", Bench.median(floor));
                out.put(k + "floor_one_read.p99_ms", Bench.pct(floor, 99));
            } finally {
                api.close();
            }
        }
    }

    /**
     * A fleet as its agents would leave it: a push of {@link #MODULES} modules for every host, then for hosts
     * {@code h0000}, {@code h0001}, ... an agent node and an {@code applied} report of every module. Also B9's
     * ({@link ClientBench}).
     *
     * @return the push
     */
    static PushWriter.Result fleet(CuratorFramework client, ZkPaths paths, int hosts) throws Exception {
        StringBuilder manifest = new StringBuilder();
        for (int m = 0; m < MODULES; m++) {
            manifest.append("---\nmodule: m").append(m).append("\nhosts: [\"*\"]\ncontainers:\n  web:\n    image: mesh-demo/busybox:1\n"
                    + "    command: [\"sleep\", \"3600\"]\n    network: none\n");
        }
        PushWriter.Result push = new PushWriter(client, paths, Clock.systemUTC()).write(manifest.toString(), "r1");
        List<CuratorOp> ops = new ArrayList<>();
        for (int i = 0; i < hosts; i++) {
            String host = String.format("h%04d", i);
            ensure(client, paths.reports(host));
            client.create().creatingParentsIfNeeded().forPath(paths.agent(host),
                    Json.bytes(new AgentRecord(host, "bench", 1, Instant.now())));
            for (int m = 0; m < MODULES; m++) {
                String module = "m" + m;
                ApplyReport r = ApplyReport.applied(host, module, "r1", push.push(), Instant.now(), null,
                        List.of(new ApplyReport.ContainerResult("web", module + "-web", ContainerAction.UNCHANGED, List.of(),
                                "0123456789ab", null, null)));
                ops.add(client.transactionOp().create().forPath(paths.report(host, module), Json.bytes(r)));
            }
            if (ops.size() >= 500) { client.transaction().forOperations(ops); ops.clear(); }
        }
        if (!ops.isEmpty()) client.transaction().forOperations(ops);
        return push;
    }

    private static void ensure(CuratorFramework client, String path) throws Exception {
        if (client.checkExists().forPath(path) == null) client.create().creatingParentsIfNeeded().forPath(path);
    }

    /** @return the response's size; its time in ms appended to {@code times} */
    private static long get(HttpClient http, String url, List<Double> times) throws Exception {
        long s = System.nanoTime();
        HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        times.add(Bench.ms(System.nanoTime() - s));
        if (r.statusCode() != 200) throw new IllegalStateException(url + ": " + r.statusCode() + " " + new String(r.body()));
        return r.body().length;
    }

    /** @return the server's count of packets received so far ({@code mntr}'s {@code zk_packets_received}) */
    static long packets(TestingServer zk) throws Exception {
        String mntr = FourLetterWordMain.send4LetterWord("127.0.0.1", zk.getPort(), "mntr");
        for (String line : mntr.split("\n")) {
            if (line.startsWith("zk_packets_received")) return Long.parseLong(line.split("\\s+")[1].trim());
        }
        throw new IllegalStateException("no zk_packets_received in mntr: " + mntr);
    }
}
