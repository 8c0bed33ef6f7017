package io.mesh.bench;

import io.mesh.coordinator.HttpApi;
import io.mesh.curator.MeshZk;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * B9: what an operator waits for a {@code mesh status} and a {@code mesh held}, the whole process through the
 * launcher ({@code deploy/bin/mesh}, its class-data archive made before the measured runs), against a coordinator
 * serving 10 hosts × 10 modules of reports and one held container. Floor: {@code curl} of the same endpoint, run the
 * same way, with no proxy. The four commands alternate run by run; each must exit 0 and print the fleet (the last
 * host's name; for held, the held container's), so a command that failed fast is never counted as a fast one, and a
 * {@code mesh} quicker than its {@code curl} fails the bench. JVM flags, proxies and {@code BASH_ENV} in this JVM's
 * environment are not passed on ({@link #ONE_SIDED}); {@code PATH} is this JVM's {@code bin} and the system's.
 *
 * <p>Args: --zk-file FILE --results FILE [--launcher deploy/bin/mesh] [--jar coordinator/target/mesh-coordinator.jar]
 * [--runs 20] [--hosts 10]
 */
public final class ClientBench {
    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        Properties zk = ZkEnsemble.read(a.get("zk-file"));
        Path results = Path.of(a.getOrDefault("results", "target/bench-b9.properties"));
        String launcher = Path.of(a.getOrDefault("launcher", "deploy/bin/mesh")).toAbsolutePath().toString();
        String jar = Path.of(a.getOrDefault("jar", "coordinator/target/mesh-coordinator.jar")).toAbsolutePath().toString();
        int runs = Integer.parseInt(a.getOrDefault("runs", "20"));
        int hosts = Integer.parseInt(a.getOrDefault("hosts", "10"));
        ZkPaths paths = new ZkPaths("/bench-client");
        Path cache = Files.createTempDirectory("mesh-b9-cache");
        try (CuratorFramework client = MeshZk.connect(zk.getProperty("all"), Duration.ofSeconds(30))) {
            fleet(client, paths, hosts);
            HttpApi api = new HttpApi(client, paths, new InetSocketAddress("127.0.0.1", 0), null);
            api.start();
            try {
                String base = "http://127.0.0.1:" + api.port();
                Map<String, String> env = Map.of("MESH_COORDINATOR", base, "MESH_CLIENT_CACHE", cache.toString(),
                        "MESH_COORDINATOR_JAR", jar);
                String[] curl = {"curl", "-sf", "--noproxy", "*"};
                // The first use makes the class-data archive (once per jar and JVM); not what an operator waits for
                // afterwards, so it is printed apart.
                String last = String.format("h%04d", hosts - 1);
                double first = run(env, last, launcher, "status");
                run(env, last, launcher, "status");
                Map<String, List<Double>> t = new LinkedHashMap<>();
                for (String k : new String[] {"status", "curl_fleet", "held", "curl_held"}) t.put(k, new ArrayList<>());
                for (int i = 0; i < runs; i++) {
                    t.get("status").add(run(env, last, launcher, "status"));
                    t.get("curl_fleet").add(run(env, last, with(curl, base + "/v1/fleet")));
                    t.get("held").add(run(env, "m0-web", launcher, "held"));
                    t.get("curl_held").add(run(env, "m0-web", with(curl, base + "/v1/held")));
                }
                // A JVM that starts, asks and prints cannot beat curl asking the same: if it does, it did not run.
                for (String[] c : new String[][] {{"status", "curl_fleet"}, {"held", "curl_held"}}) {
                    if (Bench.median(t.get(c[0])) < Bench.median(t.get(c[1]))) {
                        throw new IllegalStateException("mesh " + c[0] + " took less than curl (" + Bench.median(t.get(c[0])) + " < "
                                + Bench.median(t.get(c[1])) + " ms): not a JVM's run; check PATH and the launcher");
                    }
                }
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("b9.runs", runs);
                out.put("b9.hosts", hosts);
                out.put("b9.first_use_ms", first);
                t.forEach((k, v) -> {
                    out.put("b9." + k + ".p50_ms", Bench.median(v));
                    out.put("b9." + k + ".min_ms", Bench.pct(v, 0));
                });
                Bench.result(results, out);
                Bench.log("B9", out.toString());
            } finally {
                api.close();
            }
        } finally {
            try (var files = Files.walk(cache)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** {@link StatusBench#fleet}'s reports of every module on every host, and one container held by a window on h0001. */
    private static void fleet(CuratorFramework client, ZkPaths paths, int hosts) throws Exception {
        if (client.checkExists().forPath(paths.root()) != null) client.delete().deletingChildrenIfNeeded().forPath(paths.root());
        StatusBench.fleet(client, paths, hosts);
        client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(paths.held("h0001", "m0-web"),
                Json.bytes(new HeldRecord("h0001", "m0", "m0-web", "0123456789ab", "nightly", "w-bench", Instant.now(),
                        ProcessRef.current("bench"))));
    }

    private static String[] with(String[] command, String arg) {
        String[] c = java.util.Arrays.copyOf(command, command.length + 1);
        c[command.length] = arg;
        return c;
    }

    /**
     * What this JVM's environment could give one side only: JVM flags the launcher would pass on ({@code JAVA_OPTS},
     * {@code JAVA_TOOL_OPTIONS}, {@code _JAVA_OPTIONS}), the launcher's archive switch, and proxies that {@code curl}
     * would use and Java's {@code HttpURLConnection} would not.
     */
    private static final List<String> ONE_SIDED = List.of("JAVA_OPTS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
            "MESH_CDS", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
            // a script bash runs before the launcher (which is a bash script): the launcher's side only
            "BASH_ENV", "ENV");

    /** The launcher's {@code java} is this JVM's, and the rest of the commands come from the system's directories. */
    private static final String PATH = Path.of(System.getProperty("java.home"), "bin") + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    /**
     * Runs one command to its end, its output into a file (so that a command that hangs is stopped at 60 s).
     *
     * @return its wall time, ms
     * @throws IllegalStateException when it exits non-zero, runs over 60 s, or its output lacks {@code mustPrint}
     */
    private static double run(Map<String, String> env, String mustPrint, String... command) throws IOException, InterruptedException {
        Path log = Files.createTempFile("mesh-b9", ".out");
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        ONE_SIDED.forEach(pb.environment()::remove);
        pb.environment().put("PATH", PATH);
        pb.environment().putAll(env);
        long s = System.nanoTime();
        Process p = pb.start();
        boolean ended = p.waitFor(60, TimeUnit.SECONDS);
        double ms = Bench.ms(System.nanoTime() - s);
        String text = Files.readString(log, StandardCharsets.UTF_8);
        Files.deleteIfExists(log);
        if (!ended) {
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + ": still running after 60 s; printed: " + text);
        }
        if (p.exitValue() != 0 || !text.contains(mustPrint)) {
            throw new IllegalStateException(String.join(" ", command) + ": exit " + p.exitValue() + ", printed: " + text);
        }
        return ms;
    }
}
