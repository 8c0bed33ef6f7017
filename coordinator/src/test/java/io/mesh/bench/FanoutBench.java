package io.mesh.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.PushWriter;
import io.mesh.curator.MeshZk;
import io.mesh.manifest.WireName;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * B5: push (the coordinator's {@link PushWriter}: one ZooKeeper transaction) until every SIMULATED host has written
 * its report for it, with 100, 300 and 1,000 hosts and 10 modules on every host ("*"). Each simulated host is the
 * real agent daemon with its own ZooKeeper session and a recording runtime instead of Docker ({@link FanoutHosts},
 * several hosts JVMs). The floor, up at the same time under another root, in the same JVM layout: as many hosts
 * doing only the ZooKeeper operations an apply needs ({@link FloorHosts}); pushes alternate between the two, the
 * side going first alternating too. A host's latency is the newest mtime of its 10 reports for the push minus the
 * time the push was written; reported p50/p99 over hosts and the slowest host (the median over pushes), each side.
 * Per module apply, each side: the ZooKeeper requests the ensemble received over the push ({@code srvr}, so the
 * ensemble must allow it) and the CPU its hosts JVMs used ({@code /proc}).
 *
 * <p>Args: --zk-file FILE --results FILE [--hosts 100,300,1000] [--per-jvm 250] [--pushes 3] [--wait-s 90]
 */
public final class FanoutBench {
    static final int MODULES = 10;

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        Properties zk = ZkEnsemble.read(a.get("zk-file"));
        String connect = zk.getProperty("all");
        Path results = Path.of(a.get("results"));
        int perJvm = Integer.parseInt(a.getOrDefault("per-jvm", "250"));
        int pushes = Integer.parseInt(a.getOrDefault("pushes", "3"));
        int waitS = Integer.parseInt(a.getOrDefault("wait-s", "90"));
        String tag = String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("b5.modules", MODULES);
        out.put("b5.runtime", "simulated (RecordingRuntime, no Docker)");
        Bench.result(results, out);
        for (String h : a.getOrDefault("hosts", "100,300,1000").split(",")) {
            int hosts = Integer.parseInt(h.trim());
            out = new LinkedHashMap<>();
            run(zk, hosts, perJvm, pushes, waitS, "/bench-fanout-" + tag + "-h" + hosts, out);
            Bench.result(results, out); // each host count as soon as it is measured
        }
    }

    private static void run(Properties zk, int hosts, int perJvm, int pushes, int waitS, String root, Map<String, Object> out)
            throws Exception {
        String connect = zk.getProperty("all");
        Path state = Files.createTempDirectory("mesh-bench-fanout");
        List<Process> jvms = new ArrayList<>();
        CuratorFramework obs = MeshZk.connect(connect, Duration.ofSeconds(30));
        List<CuratorCache> caches = new ArrayList<>();
        try {
            long t = System.nanoTime();
            Map<String, List<Process>> sides = new LinkedHashMap<>();
            sides.put("mesh", startHosts(FanoutHosts.class, connect, root, hosts, perJvm, state));
            jvms.addAll(sides.get("mesh"));
            Bench.log("B5", hosts + " simulated hosts up in " + jvms.size() + " JVM(s), " + Bench.f(Bench.ms(System.nanoTime() - t) / 1000) + " s");
            t = System.nanoTime();
            sides.put("floor", startHosts(FloorHosts.class, connect, root + "-floor", hosts, perJvm, state));
            jvms.addAll(sides.get("floor"));
            Bench.log("B5", hosts + " floor hosts up, " + Bench.f(Bench.ms(System.nanoTime() - t) / 1000) + " s");

            // per side: push -> host/module -> mtime of its first applied report for that push. Kept for every
            // push, so that a report written before the push's id is known here still counts.
            Map<String, Map<String, Map<String, Long>>> reported = new LinkedHashMap<>();
            Map<String, PushWriter> writers = new LinkedHashMap<>();
            for (String side : List.of("mesh", "floor")) {
                ZkPaths paths = new ZkPaths(side.equals("mesh") ? root : root + "-floor");
                Map<String, Map<String, Long>> seen = new ConcurrentHashMap<>();
                reported.put(side, seen);
                writers.put(side, new PushWriter(obs, paths, Clock.systemUTC()));
                CuratorCache cache = CuratorCache.build(obs, paths.reports());
                cache.listenable().addListener(CuratorCacheListener.builder().forCreatesAndChanges((before, after) -> {
                    if (after.getData() == null || after.getData().length == 0) return;
                    try {
                        JsonNode n = Json.MAPPER.readTree(after.getData());
                        String push = n.path("push").asText(null);
                        if (push == null || WireName.of(ApplyOutcome.class, n.path("outcome").asText()) != ApplyOutcome.APPLIED) return; // a failed apply is not delivered
                        String key = n.path("host").asText() + "/" + n.path("module").asText();
                        seen.computeIfAbsent(push, p -> new ConcurrentHashMap<>()).putIfAbsent(key, after.getStat().getMtime());
                    } catch (Exception ignored) {
                        // not a report
                    }
                }).build());
                cache.start();
                caches.add(cache);
            }

            Map<String, List<Double>> lat = new LinkedHashMap<>(), slowest = new LinkedHashMap<>();
            Map<String, List<Double>> requests = new LinkedHashMap<>(), cpu = new LinkedHashMap<>();
            for (int k = 0; k <= pushes; k++) {
                // the side that goes first alternates
                for (String side : k % 2 == 0 ? List.of("mesh", "floor") : List.of("floor", "mesh")) {
                    long packets = packets(zk), ticks = cpuTicks(sides.get(side));
                    List<Double> these = push(writers.get(side), reported.get(side), k, hosts, waitS, side);
                    double applies = hosts * (double) MODULES;
                    double perApply = (packets(zk) - packets) / applies, cpuMs = (cpuTicks(sides.get(side)) - ticks) * 10.0 / applies;
                    Bench.log("B5", side + ", " + hosts + " hosts, push " + k + ": " + Bench.f(perApply) + " ZooKeeper requests and "
                            + Bench.f(cpuMs) + " ms of the hosts JVMs' CPU per module apply");
                    if (k == 0) continue; // warm-up
                    requests.computeIfAbsent(side, x -> new ArrayList<>()).add(perApply);
                    cpu.computeIfAbsent(side, x -> new ArrayList<>()).add(cpuMs);
                    lat.computeIfAbsent(side, x -> new ArrayList<>()).addAll(these);
                    slowest.computeIfAbsent(side, x -> new ArrayList<>()).add(Bench.pct(these, 100));
                }
            }
            for (String side : List.of("mesh", "floor")) {
                String key = "b5.h" + hosts + "." + side;
                out.put(key + ".p50_ms", Bench.median(lat.get(side)));
                out.put(key + ".p99_ms", Bench.pct(lat.get(side), 99));
                out.put(key + ".all_hosts_ms", Bench.median(slowest.get(side)));
                out.put(key + ".zk_requests_per_apply", Bench.median(requests.get(side)));
                out.put(key + ".cpu_ms_per_apply", Bench.median(cpu.get(side)));
            }
            String key = "b5.h" + hosts;
            out.put(key + ".ratio.all_hosts", Bench.median(slowest.get("mesh")) / Bench.median(slowest.get("floor")));
            out.put(key + ".ratio.p99", Bench.pct(lat.get("mesh"), 99) / Bench.pct(lat.get("floor"), 99));
            out.put(key + ".pushes", pushes);
            out.put(key + ".jvms", jvms.size() / 2);
        } finally {
            for (CuratorCache c : caches) c.close();
            stopHosts(jvms);
            obs.close();
        }
    }

    /**
     * @return the requests every server of the ensemble has received so far: the sum of their {@code srvr}
     *         {@code Received} (pings and every client's requests, the bench's watcher included). Not {@code mntr}'s
     *         {@code zk_packets_received}: the three servers of one JVM share ZooKeeper's metrics, and each answers
     *         one server's count.
     */
    static long packets(Properties zk) throws Exception {
        long n = 0;
        for (int i = 0; zk.getProperty("s" + i) != null; i++) {
            String s = zk.getProperty("s" + i);
            String srvr = org.apache.zookeeper.client.FourLetterWordMain.send4LetterWord(s.substring(0, s.lastIndexOf(':')),
                    Integer.parseInt(s.substring(s.lastIndexOf(':') + 1)), "srvr");
            for (String line : srvr.split("\n")) {
                if (line.startsWith("Received:")) n += Long.parseLong(line.substring("Received:".length()).trim());
            }
        }
        return n;
    }

    /** @return the CPU the processes have used so far, in clock ticks (1/100 s): {@code /proc/<pid>/stat}'s utime + stime */
    static long cpuTicks(List<Process> jvms) throws Exception {
        long t = 0;
        for (Process p : jvms) {
            String stat = Files.readString(Path.of("/proc/" + p.pid() + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            t += Long.parseLong(f[11]) + Long.parseLong(f[12]); // fields 14 and 15 of proc(5)
        }
        return t;
    }

    /**
     * One push, then waits until every host has reported it applied.
     *
     * @return each host's latency: the newest mtime of its reports for the push minus the moment before the push (ms)
     */
    private static List<Double> push(PushWriter writer, Map<String, Map<String, Long>> reported, int k, int hosts, int waitS,
                                     String side) throws Exception {
        long t0 = System.currentTimeMillis();
        PushWriter.Result r = writer.write(manifest(k), "r" + k);
        Map<String, Long> done = reported.computeIfAbsent(r.push(), p -> new ConcurrentHashMap<>());
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(waitS);
        while (done.size() < hosts * MODULES && System.nanoTime() < end) Thread.sleep(20);
        if (done.size() < hosts * MODULES) {
            throw new IllegalStateException(side + ", " + hosts + " hosts, push " + k + ": only " + done.size() + " of " + hosts * MODULES
                    + " reports within " + waitS + " s");
        }
        Map<String, Long> newest = new LinkedHashMap<>(); // host -> newest of its 10 reports
        done.forEach((key, mtime) -> newest.merge(key.substring(0, key.indexOf('/')), mtime, Math::max));
        List<Double> these = new ArrayList<>();
        newest.values().forEach(m -> these.add((double) (m - t0)));
        Bench.log("B5", side + ", " + hosts + " hosts, push " + k + (k == 0 ? " (warm-up)" : "") + ": p50 " + Bench.f(Bench.median(these))
                + " ms, p99 " + Bench.f(Bench.pct(these, 99)) + " ms, every host " + Bench.f(Bench.pct(these, 100)) + " ms");
        return these;
    }

    /**
     * Starts {@code hosts} simulated hosts ({@link FanoutHosts}), {@code perJvm} per JVM, and waits until each JVM
     * says they run. The caller closes each process's stdin to stop it.
     *
     * @return the hosts JVMs
     */
    static List<Process> startHosts(Class<?> main, String connect, String root, int hosts, int perJvm, Path state) throws Exception {
        List<Process> jvms = new ArrayList<>();
        for (int from = 0; from < hosts; from += perJvm) {
            int count = Math.min(perJvm, hosts - from);
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx1g", "-Xss256k", "-XX:+UseParallelGC",
                    "-XX:TieredStopAtLevel=1")); // C1 only, as deploy/bin/mesh-agent; 250 agents share this heap, so parallel GC
            String extra = System.getenv("BENCH_HOSTS_JAVA_OPTS"); // e.g. a JFR recording while profiling
            if (extra != null && !extra.isBlank()) cmd.addAll(List.of(extra.replace("%from", main.getSimpleName() + "-" + from).split(" ")));
            cmd.addAll(List.of("-cp", System.getProperty("java.class.path"),
                    main.getName(), "--zk", connect, "--root", root, "--from", String.valueOf(from),
                    "--count", String.valueOf(count), "--state", state.toString()));
            ProcessBuilder pb = new ProcessBuilder(cmd);
            pb.environment().put("MESH_LOG_LEVEL", "WARN");
            pb.redirectError(state.resolve(main.getSimpleName() + "-" + from + ".log").toFile());
            jvms.add(pb.start());
        }
        for (Process p : jvms) {
            BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream()));
            String l;
            do l = r.readLine(); while (l != null && !l.startsWith("ready")); // (JFR says hello on stdout)
            if (l == null) throw new IllegalStateException("a hosts JVM did not start: see " + state);
        }
        return jvms;
    }

    /** Stops the hosts JVMs {@link #startHosts} started (stdin closed, then up to 60 s each). */
    static void stopHosts(List<Process> jvms) throws Exception {
        for (Process p : jvms) p.getOutputStream().close();
        for (Process p : jvms) {
            if (!p.waitFor(60, TimeUnit.SECONDS)) p.destroyForcibly();
        }
    }

    /**
     * 10 modules on every host, 2 containers each; push k changes every container (env), so every host recreates.
     * {@code ready: {min-healthy: 0s}}: a recreated container counts once it runs (the default waits 2 s; the floor none).
     */
    static String manifest(int k) {
        StringBuilder sb = new StringBuilder();
        for (int m = 0; m < MODULES; m++) {
            if (m > 0) sb.append("---\n");
            sb.append("module: fan").append(m).append("\nhosts: [\"*\"]\ncontainers:\n");
            for (String c : List.of("web", "worker")) {
                sb.append("  ").append(c).append(":\n    image: mesh-demo/busybox:1\n    command: [sleep, \"3600\"]\n")
                        .append("    env: {PUSH: \"").append(k).append("\"}\n    stop-timeout: 1s\n")
                        .append("    ready: {min-healthy: 0s}\n"); // the readiness wait is the operator's choice, not mesh's cost
            }
        }
        return sb.toString();
    }
}
