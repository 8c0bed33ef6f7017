package io.mesh.bench;

import io.mesh.curator.MeshZk;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/**
 * B8: the real agent ({@code deploy/bin/mesh-agent run}, the shaded jar, {@code JAVA_OPTS=-Xmx64m}) at rest with 10
 * modules of one {@code sleep} container each ({@code network: none}): once every module's report says
 * {@code applied} and a settle time has passed, its live threads ({@code /proc/<pid>/status} Threads, and the names
 * {@code jcmd <pid> Thread.print} lists, grouped with digits folded), {@code VmRSS}, and with {@code --nmt true} the
 * JVM's own account of its native memory ({@code jcmd <pid> VM.native_memory summary}). The floor, in the same run:
 * the same launcher, flags and settle time running {@link IdleMain}, a {@code main} that starts a Curator client on
 * the same ensemble and only sleeps.
 *
 * <p>Args: --results FILE --launcher deploy/bin/mesh-agent --jar agent/target/mesh-agent.jar [--zk-file FILE (else a
 * TestingServer in this JVM)] [--modules 10] [--settle-s 10] [--xmx 64m] [--java-opts "..." (after -Xmx)]
 * [--nmt false] [--prefix b8] [--module-prefix bench-b8]
 */
public final class AgentIdleBench {
    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        Path results = Path.of(a.get("results"));
        int modules = Integer.parseInt(a.getOrDefault("modules", "10"));
        int settle = Integer.parseInt(a.getOrDefault("settle-s", "10"));
        String xmx = a.getOrDefault("xmx", "64m");
        boolean nmt = Boolean.parseBoolean(a.getOrDefault("nmt", "false"));
        String b = a.getOrDefault("prefix", "b8");
        String tag = String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
        String host = "bench-b8-" + tag;
        String modPrefix = a.getOrDefault("module-prefix", "bench-b8") + "-" + tag + "-";
        ZkPaths paths = new ZkPaths("/bench-b8-" + tag);
        Path state = Files.createTempDirectory("mesh-bench-b8");
        TestingServer zkServer = a.containsKey("zk-file") ? null : new TestingServer(true);
        String connect = zkServer != null ? zkServer.getConnectString() : ZkEnsemble.read(a.get("zk-file")).getProperty("all");
        DockerEngine docker = new DockerEngine(null);
        CuratorFramework client = MeshZk.connect(connect, Duration.ofSeconds(30));
        Process agent = null;
        List<String> names = new ArrayList<>();
        try {
            for (int i = 0; i < modules; i++) {
                String m = String.format("%s%02d", modPrefix, i);
                names.add(m);
                ApplyBench.setDesired(client, paths, manifest(m, host), 0);
            }
            String opts = "-Xmx" + xmx + (nmt ? " -XX:NativeMemoryTracking=summary" : "") + " " + a.getOrDefault("java-opts", "");
            ProcessBuilder pb = new ProcessBuilder(a.get("launcher"), "run", "--host", host, "--zk", connect,
                    "--zk-root", paths.root(), "--state-dir", state.toString());
            pb.environment().put("JAVA_OPTS", opts.trim());
            pb.environment().put("MESH_AGENT_JAR", a.get("jar"));
            pb.redirectErrorStream(true).redirectOutput(state.resolve("agent.log").toFile());
            long t0 = System.nanoTime();
            agent = pb.start();
            long end = t0 + TimeUnit.SECONDS.toNanos(120);
            while (!allApplied(client, paths, host, names)) {
                if (System.nanoTime() > end || !agent.isAlive()) {
                    throw new IllegalStateException("not every module applied within 120 s: see " + state.resolve("agent.log"));
                }
                Thread.sleep(50);
            }
            double readyMs = Bench.ms(System.nanoTime() - t0);
            Bench.log("B8", modules + " modules applied after " + Bench.f(readyMs) + " ms; settling " + settle + " s");
            Thread.sleep(settle * 1000L);
            long pid = agent.pid();
            Map<String, String> status = status(pid);
            String dump = jcmd(pid, "Thread.print");
            Map<String, Integer> groups = threadGroups(dump);
            // Java threads carry "#<id>" in Thread.print (JDK 17); the JVM's own (VM Thread, compiler, GC ...) do not.
            // The Attach Listener is jcmd's own doing: not counted.
            long javaThreads = dump.lines().filter(l -> l.startsWith("\"") && l.matches("^\"[^\"]*\" #[0-9]+ .*")
                    && !l.startsWith("\"Attach Listener\"")).count();
            Bench.log("B8", "threads by name (digits folded), Thread.print: " + groups);
            Map<String, String> floor = idleJvm(a.get("launcher"), Path.of(a.get("jar")), connect, opts.trim(), state, settle);
            Bench.log("B8", "floor, a main that only sleeps through the same launcher: " + floor.get("Threads") + " threads, "
                    + floor.get("VmRSS") + " RSS");
            if (nmt) Bench.log("B8", "native memory:\n" + jcmd(pid, "VM.native_memory", "summary"));
            Map<String, Object> m = new LinkedHashMap<>();
            m.put(b + ".xmx", xmx);
            m.put(b + ".java_opts", opts.trim());
            m.put(b + ".modules", modules);
            m.put(b + ".all_applied_ms", readyMs);
            m.put(b + ".threads", status.get("Threads"));
            m.put(b + ".java_threads", javaThreads);
            m.put(b + ".rss_idle_mb", kb(status.get("VmRSS")) / 1024.0);
            m.put(b + ".rss_peak_mb", kb(status.get("VmHWM")) / 1024.0);
            m.put(b + ".thread_names", groups.toString().replace('=', ':'));
            m.put(b + ".floor_threads", floor.get("Threads"));
            m.put(b + ".floor_rss_mb", kb(floor.get("VmRSS")) / 1024.0);
            Bench.result(results, m);
        } finally {
            if (agent != null) {
                agent.destroy();
                if (!agent.waitFor(60, TimeUnit.SECONDS)) agent.destroyForcibly();
            }
            for (int pass = 0; pass < 2; pass++) { // twice: an agent's last apply may still have been landing
                for (String mod : names) for (String id : docker.containersWithLabel(Labels.MODULE, mod)) docker.remove(id);
                Thread.sleep(500);
            }
            try {
                client.delete().deletingChildrenIfNeeded().forPath(paths.root());
            } catch (Exception ignored) {
                // best effort
            }
            client.close();
            docker.close();
            if (zkServer != null) zkServer.close();
        }
    }

    /**
     * Runs {@link IdleMain} on {@code connect} from a jar of its own (whose class path is the agent's jar, for Curator
     * and ZooKeeper's client) through {@code launcher} (as {@code MESH_AGENT_JAR}, with the agent's {@code JAVA_OPTS}),
     * waits until it has started and {@code settle} seconds more, and reads its {@code /proc} status.
     */
    private static Map<String, String> idleJvm(String launcher, Path agentJar, String connect, String opts, Path dir, int settle)
            throws Exception {
        Path jar = dir.resolve("idle.jar");
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, IdleMain.class.getName());
        manifest.getMainAttributes().put(Attributes.Name.CLASS_PATH, agentJar.toAbsolutePath().toUri().toString());
        String entry = IdleMain.class.getName().replace('.', '/') + ".class";
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest);
             InputStream in = IdleMain.class.getClassLoader().getResourceAsStream(entry)) {
            out.putNextEntry(new JarEntry(entry));
            in.transferTo(out);
            out.closeEntry();
        }
        Path log = dir.resolve("idle.log");
        ProcessBuilder pb = new ProcessBuilder(launcher, connect);
        pb.environment().put("JAVA_OPTS", opts);
        pb.environment().put("MESH_AGENT_JAR", jar.toString());
        pb.redirectErrorStream(true).redirectOutput(log.toFile());
        Process idle = pb.start();
        try {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Files.readString(log).contains(IdleMain.STARTED)) {
                if (System.nanoTime() > end || !idle.isAlive()) throw new IllegalStateException("the idle JVM did not start: see " + log);
                Thread.sleep(50);
            }
            Thread.sleep(settle * 1000L); // the agent's settle time, the same for both
            return status(idle.pid());
        } finally {
            idle.destroy();
            if (!idle.waitFor(10, TimeUnit.SECONDS)) idle.destroyForcibly();
        }
    }

    /** One busybox {@code sleep}, no network: the smallest module an agent keeps. */
    static String manifest(String module, String host) {
        return "module: " + module + "\nhosts: [" + host + "]\ncontainers:\n  c:\n    image: mesh-demo/busybox:1\n"
                + "    command: [sleep, \"86400\"]\n    network: none\n    stop-timeout: 1s\n";
    }

    private static boolean allApplied(CuratorFramework client, ZkPaths paths, String host, List<String> modules) throws Exception {
        for (String m : modules) {
            if (client.checkExists().forPath(paths.report(host, m)) == null) return false;
            ApplyReport r = Json.readOrNull(client.getData().forPath(paths.report(host, m)), ApplyReport.class);
            if (r == null || r.outcome() != ApplyOutcome.APPLIED) return false;
        }
        return true;
    }

    /** @return the count of each thread name in a Thread.print, runs of digits folded to {@code N} */
    static Map<String, Integer> threadGroups(String dump) {
        Map<String, Integer> g = new TreeMap<>();
        for (String l : dump.split("\n")) {
            if (!l.startsWith("\"")) continue;
            String name = l.substring(1, l.indexOf('"', 1)).replaceAll("[0-9]+", "N");
            g.merge(name, 1, Integer::sum);
        }
        return g;
    }

    static String jcmd(long pid, String... command) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), String.valueOf(pid)));
        cmd.addAll(Arrays.asList(command));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS)) p.destroyForcibly();
        return out;
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
