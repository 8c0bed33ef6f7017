package io.mesh.bench;

import io.mesh.curator.MeshZk;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.window.WindowJournal;
import io.mesh.window.WindowRunner;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowResult;
import io.mesh.wire.ZkPaths;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * B4: a window opens (WindowRunner.run is called) until a watcher in ANOTHER JVM is notified of the held znode;
 * against the floor, what any window that takes a lock before it publishes must do, with the plain ZooKeeper client:
 * create-sequential + getChildren (the lock, whose parent persists, as mesh's: decision 5), then create (the held
 * node), until the same watcher is notified. The window runs with the SIMULATED
 * {@link RecordingRuntime} (no Docker: the step and the stops return at once), so the figure is mesh's ZooKeeper
 * path: module lock, journal, desired read, window and held nodes. Opener on server s0, watcher on server s1, both
 * sides. Iterations alternate raw/mesh.
 *
 * <p>Args: --zk-file FILE --results FILE [--iterations 150] [--pause-ms 0] [--prefix b4]. With a pause, each iteration
 * first waits that long: against an ensemble whose container manager looks more often than every 60 s
 * ({@code -Dznode.container.checkIntervalMs}), a window then comes after a quiet spell, as a cron window does.
 */
public final class HeldVisibilityBench {
    /** The agent's cache of /mesh/desired, as the daemon has it; closed at the end. */
    private static org.apache.curator.framework.recipes.cache.CuratorCache desiredCache;

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        Properties zk = ZkEnsemble.read(a.get("zk-file"));
        Path results = Path.of(a.get("results"));
        int iterations = Integer.parseInt(a.getOrDefault("iterations", "150"));
        long pauseMs = Long.parseLong(a.getOrDefault("pause-ms", "0"));
        String prefix = a.getOrDefault("prefix", "b4");
        String tag = String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
        String module = "bench-held-" + tag, host = "bench-host";
        ZkPaths paths = new ZkPaths("/bench-held-" + tag);
        String rawParent = "/bench-held-raw-" + tag, rawLock = rawParent + "/lock";

        Process watcher = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx64m",
                "-cp", System.getProperty("java.class.path"), HeldWatcher.class.getName(), zk.getProperty("s1"))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        PrintStream toWatcher = new PrintStream(watcher.getOutputStream(), true);
        BufferedReader fromWatcher = new BufferedReader(new InputStreamReader(watcher.getInputStream()));

        CuratorFramework client = MeshZk.connect(zk.getProperty("s0"), Duration.ofSeconds(30));
        CountDownLatch up = new CountDownLatch(1);
        ZooKeeper raw = new ZooKeeper(zk.getProperty("s0"), 15_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) up.countDown();
        });
        try {
            if (!up.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("no ZooKeeper session");
            raw.create(rawParent, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            raw.create(rawLock, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            String yaml = "module: " + module + "\nhosts: [" + host + "]\ncontainers:\n  c1:\n    image: mesh-demo/busybox:1\n"
                    + "    command: [sleep, \"3600\"]\n    stop-timeout: 1s\n    ready: {min-healthy: 0s}\nschedules:\n  gc:\n    cron: \"0 0 1 1 *\"\n"
                    + "    while-stopped: [c1]\n    step:\n      image: mesh-demo/busybox:1\n      command: [\"true\"]\n    timeout: 1m\n";
            ModuleSpec spec = new ManifestParser().parse(yaml).get(0);
            client.create().creatingParentsIfNeeded().forPath(paths.desired(module),
                    Json.bytes(new DesiredRecord(module, "r1", ZkPaths.pushName(1), spec)));
            RecordingRuntime runtime = new RecordingRuntime();
            // as an apply creates it: with its ready (min-healthy 0s), so a window's close does not wait the default 2 s
            runtime.create(spec.dockerName("c1"), spec.containers().get("c1"), Map.of(io.mesh.docker.Labels.MODULE, module,
                    io.mesh.docker.Labels.CONTAINER, "c1", io.mesh.docker.Labels.READY, Json.text(spec.containers().get("c1").ready())));
            // As the running agent's: desired nodes come from a CuratorCache of /mesh/desired once it has loaded.
            MeshStore store = new MeshStore(client, paths);
            desiredCache = Bench.desiredCache(client, paths, store);
            WindowRunner runner = new WindowRunner(store, runtime, host, ProcessRef.current("mesh bench"),
                    new WindowJournal(Files.createTempDirectory("mesh-bench-held")));
            String heldPath = paths.held(host, spec.dockerName("c1"));

            List<Double> meshMs = new ArrayList<>(), rawMs = new ArrayList<>(), runMs = new ArrayList<>();
            int warm = 20;
            for (int i = 0; i < iterations + warm; i++) {
                if (pauseMs > 0) Thread.sleep(pauseMs);
                // raw
                String p = rawParent + "/held-" + i;
                arm(toWatcher, fromWatcher, p);
                long t0 = micros();
                // the floor: the lock (create-sequential + getChildren), then the held node
                String lockNode = raw.create(rawLock + "/lock-", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL);
                if (!raw.getChildren(rawLock, false).contains(lockNode.substring(rawLock.length() + 1))) throw new IllegalStateException("lock node missing");
                raw.create(p, "{\"held\":true}".getBytes(), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
                long seen = seen(fromWatcher);
                raw.delete(p, -1);
                raw.delete(lockNode, -1);
                if (i >= warm) rawMs.add((seen - t0) / 1000.0);
                // mesh
                arm(toWatcher, fromWatcher, heldPath);
                long s = System.nanoTime();
                t0 = micros();
                WindowResult r = runner.run(module, "gc", Duration.ofSeconds(10));
                double run = Bench.ms(System.nanoTime() - s);
                if (!r.succeeded()) throw new IllegalStateException("window: " + Json.text(r));
                seen = seen(fromWatcher);
                if (i >= warm) {
                    meshMs.add((seen - t0) / 1000.0);
                    runMs.add(run);
                }
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put(prefix + ".samples", iterations);
            if (pauseMs > 0) m.put(prefix + ".pause_ms", pauseMs);
            m.put(prefix + ".raw.p50_ms", Bench.median(rawMs));
            m.put(prefix + ".raw.p99_ms", Bench.pct(rawMs, 99));
            m.put(prefix + ".mesh.p50_ms", Bench.median(meshMs));
            m.put(prefix + ".mesh.p99_ms", Bench.pct(meshMs, 99));
            m.put(prefix + ".mesh.window_run_p50_ms", Bench.median(runMs));
            m.put(prefix + ".ratio.p50", Bench.median(meshMs) / Bench.median(rawMs));
            m.put(prefix + ".ratio.p99", Bench.pct(meshMs, 99) / Bench.pct(rawMs, 99));
            Bench.result(results, m);
        } finally {
            if (desiredCache != null) desiredCache.close();
            toWatcher.close();
            watcher.waitFor(10, TimeUnit.SECONDS);
            watcher.destroy();
            try {
                client.delete().deletingChildrenIfNeeded().forPath(paths.root());
                client.delete().deletingChildrenIfNeeded().forPath(rawParent);
            } catch (Exception ignored) {
                // best effort
            }
            raw.close();
            client.close();
        }
    }

    private static long micros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
    }

    private static void arm(PrintStream to, BufferedReader from, String path) throws Exception {
        to.println("arm " + path);
        String l = from.readLine();
        if (!"armed".equals(l)) throw new IllegalStateException("watcher: " + l + " for " + path);
    }

    private static long seen(BufferedReader from) throws Exception {
        String l = from.readLine();
        if (l == null || !l.startsWith("seen ")) throw new IllegalStateException("watcher: " + l);
        return Long.parseLong(l.substring(5));
    }
}
