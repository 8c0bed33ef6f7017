package io.mesh.bench;

import io.mesh.curator.MeshZk;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * B6: the real agent ({@code deploy/bin/mesh-agent run}, the shaded jar, {@code JAVA_OPTS=-Xmx64m}) against the real
 * Docker engine and the ensemble: start until its first report of a 2-container module is in ZooKeeper (first launch
 * creates the containers; later launches find them unchanged), then, idle, its resident memory and CPU.
 *
 * <p>Args: --zk-file FILE --results FILE --launcher deploy/bin/mesh-agent --jar agent/target/mesh-agent.jar
 * [--launches 4] [--settle-s 10] [--idle-s 30] [--xmx 64m]
 */
public final class AgentFootprintBench {
    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        Properties zk = ZkEnsemble.read(a.get("zk-file"));
        Path results = Path.of(a.get("results"));
        int launches = Integer.parseInt(a.getOrDefault("launches", "4"));
        int settle = Integer.parseInt(a.getOrDefault("settle-s", "10"));
        int idle = Integer.parseInt(a.getOrDefault("idle-s", "30"));
        String xmx = a.getOrDefault("xmx", "64m");
        String tag = String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
        String module = "bench-agent-" + tag, host = "bench-b6";
        ZkPaths paths = new ZkPaths("/bench-agent-" + tag);
        Path state = Files.createTempDirectory("mesh-bench-agent");
        DockerEngine docker = new DockerEngine(null);
        CuratorFramework client = MeshZk.connect(zk.getProperty("all"), Duration.ofSeconds(30));
        Process agent = null;
        try {
            ApplyBench.setDesired(client, paths, ApplyBench.manifest(module, host, 2, 0), 0);
            String report = paths.report(host, module);
            List<Double> noop = new ArrayList<>();
            double firstMs = 0;
            long lastMzxid = 0;
            for (int i = 0; i < launches; i++) {
                // --plain true: "java JAVA_OPTS -jar", without the launcher's JVM defaults (the figure before them).
                List<String> cmd = new ArrayList<>(Boolean.parseBoolean(a.getOrDefault("plain", "false"))
                        ? List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx" + xmx, "-jar", a.get("jar"))
                        : List.of(a.get("launcher")));
                cmd.addAll(List.of("run", "--host", host, "--zk", zk.getProperty("all"), "--zk-root", paths.root(), "--state-dir", state.toString(),
                        io.mesh.testing.TestPolicy.HOST_NETWORK_FLAG)); // ApplyBench's manifest: network host
                ProcessBuilder pb = new ProcessBuilder(cmd);
                pb.environment().put("JAVA_OPTS", "-Xmx" + xmx);
                pb.environment().put("MESH_AGENT_JAR", a.get("jar"));
                pb.redirectErrorStream(true).redirectOutput(state.resolve("agent-" + i + ".log").toFile());
                long t0 = System.nanoTime();
                agent = pb.start();
                long end = t0 + TimeUnit.SECONDS.toNanos(60);
                double ms = -1;
                while (System.nanoTime() < end && agent.isAlive()) {
                    Stat st = client.checkExists().forPath(report);
                    if (st != null && st.getMzxid() != lastMzxid) {
                        ms = Bench.ms(System.nanoTime() - t0);
                        lastMzxid = st.getMzxid();
                        break;
                    }
                    Thread.sleep(5);
                }
                if (ms < 0) throw new IllegalStateException("no report from the agent within 60 s: see " + state.resolve("agent-" + i + ".log"));
                if (i == 0) firstMs = ms;
                else noop.add(ms);
                Bench.log("B6", "launch " + (i + 1) + ": first report after " + Bench.f(ms) + " ms");
                if (i < launches - 1) {
                    agent.destroy();
                    if (!agent.waitFor(60, TimeUnit.SECONDS)) agent.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
            long pid = agent.pid();
            Thread.sleep(settle * 1000L);
            long ticks0 = ticks(pid);
            long w0 = System.nanoTime();
            Thread.sleep(idle * 1000L);
            long ticks1 = ticks(pid);
            double wall = (System.nanoTime() - w0) / 1e9;
            Map<String, String> status = status(pid);
            Map<String, Object> m = new LinkedHashMap<>();
            String b = a.getOrDefault("prefix", "b6");
            m.put(b + ".xmx", xmx);
            m.put(b + ".first_report_create_ms", firstMs);
            m.put(b + ".first_report_p50_ms", Bench.median(noop));
            m.put(b + ".first_report_max_ms", Bench.pct(noop, 100));
            m.put(b + ".launches", launches);
            m.put(b + ".rss_idle_mb", kb(status.get("VmRSS")) / 1024.0);
            m.put(b + ".rss_peak_mb", kb(status.get("VmHWM")) / 1024.0);
            m.put(b + ".threads", status.get("Threads"));
            m.put(b + ".cpu_idle_pct", (ticks1 - ticks0) / 100.0 / wall * 100.0);
            m.put(b + ".idle_window_s", idle);
            Bench.result(results, m);
        } finally {
            if (agent != null) {
                agent.destroy();
                if (!agent.waitFor(60, TimeUnit.SECONDS)) agent.destroyForcibly();
            }
            for (int pass = 0; pass < 2; pass++) { // twice: an agent's last apply may still have been landing
                for (String id : docker.containersWithLabel(Labels.MODULE, module)) docker.remove(id);
                Thread.sleep(1000);
            }
            try {
                client.delete().deletingChildrenIfNeeded().forPath(paths.root());
            } catch (Exception ignored) {
                // best effort
            }
            client.close();
            docker.close();
        }
    }

    /** utime + stime of a process, in clock ticks (100 per second on Linux). */
    private static long ticks(long pid) throws Exception {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    private static Map<String, String> status(long pid) throws Exception {
        Map<String, String> m = new LinkedHashMap<>();
        for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            int c = l.indexOf(':');
            if (c > 0) m.put(l.substring(0, c), l.substring(c + 1).trim());
        }
        return m;
    }

    private static double kb(String v) { return Double.parseDouble(v.replace("kB", "").trim()); }
}
