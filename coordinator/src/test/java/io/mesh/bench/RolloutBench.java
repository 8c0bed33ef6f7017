package io.mesh.bench;

import io.mesh.coordinator.PushWriter;
import io.mesh.curator.MeshZk;
import io.mesh.curator.RolloutNodes;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.RolloutState;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * B10: a rollout over SIMULATED hosts ({@link FanoutHosts}: the real agent daemon, a recording runtime instead of
 * Docker) with {@code max-parallel}: its total time, push to {@code done}, against the least any scheduler of the
 * same waves needs, the sum of the hosts' own apply times (each report's start to finish: its slot, its calls, its
 * readiness wait) divided by {@code max-parallel}. The ratio is the coordination's overhead (decision 13).
 *
 * The same waves run in lockstep (each group of {@code max-parallel} hosts, by start, waiting for its slowest) are
 * shown too: a rollout frees each slot on its own, so it may beat both.
 *
 * <p>Args: --zk-file FILE --results FILE [--hosts 100] [--max-parallel 10] [--wait-s 240]
 */
public final class RolloutBench {
    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        Properties zk = ZkEnsemble.read(a.get("zk-file"));
        String connect = zk.getProperty("all");
        Path results = Path.of(a.get("results"));
        int hosts = Integer.parseInt(a.getOrDefault("hosts", "100"));
        int maxParallel = Integer.parseInt(a.getOrDefault("max-parallel", "10"));
        int waitS = Integer.parseInt(a.getOrDefault("wait-s", "240"));
        String root = "/bench-rollout-" + String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
        ZkPaths paths = new ZkPaths(root);
        Path state = Files.createTempDirectory("mesh-bench-rollout");
        CuratorFramework obs = MeshZk.connect(connect, Duration.ofSeconds(30));
        List<Process> jvms = new ArrayList<>();
        try {
            jvms.addAll(FanoutBench.startHosts(FanoutHosts.class, connect, root, hosts, 250, state));
            Bench.log("B10", hosts + " simulated hosts up");
            PushWriter writer = new PushWriter(obs, paths, Clock.systemUTC());
            Map<String, Object> out = new LinkedHashMap<>();
            for (int k = 0; k <= 1; k++) {
                long z0 = mark(obs, root);
                long t0 = System.nanoTime();
                PushWriter.Result r = writer.write(manifest(k, maxParallel), "r" + k);
                RolloutRecord done = awaitDone(obs, paths, r.push(), waitS);
                double totalS = (System.nanoTime() - t0) / 1e9;
                long txns = mark(obs, root) - z0 - 1; // the ensemble's writes in between: this bench's hosts alone use it
                double sum = 0;
                int counted = 0;
                List<double[]> spans = new ArrayList<>(); // {start ms, duration s}
                for (String host : done.done()) {
                    ApplyReport rep = Json.readOrNull(obs.getData().forPath(paths.report(host, "roll")), ApplyReport.class);
                    if (rep == null || rep.outcome() != ApplyOutcome.APPLIED || !r.push().equals(rep.push())) continue;
                    double took = Duration.between(rep.startedAt(), rep.finishedAt()).toMillis() / 1000.0;
                    sum += took;
                    spans.add(new double[] {rep.startedAt().toEpochMilli(), took});
                    counted++;
                }
                double ideal = sum / maxParallel;
                spans.sort((x, y) -> Double.compare(x[0], y[0]));
                double lockstep = 0;
                for (int i = 0; i < spans.size(); i += maxParallel) {
                    double slowest = 0;
                    for (int j = i; j < Math.min(i + maxParallel, spans.size()); j++) slowest = Math.max(slowest, spans.get(j)[1]);
                    lockstep += slowest;
                }
                Bench.log("B10", "push " + k + (k == 0 ? " (warm-up: first apply)" : "") + ": " + done.done().size() + " hosts done in "
                        + Bench.f(totalS) + " s; their applies sum to " + Bench.f(sum) + " s (" + counted + " reports), / max-parallel "
                        + maxParallel + " = " + Bench.f(ideal) + " s; ratio " + Bench.f(totalS / ideal) + "; in lockstep waves " + Bench.f(lockstep) + " s; " + txns + " ZooKeeper writes");
                if (k == 0) continue;
                out.put("b10.hosts", hosts);
                out.put("b10.max_parallel", maxParallel);
                out.put("b10.total_s", totalS);
                out.put("b10.sum_apply_s", sum);
                out.put("b10.ideal_s", ideal);
                out.put("b10.ratio", totalS / ideal);
                out.put("b10.lockstep_s", lockstep);
                out.put("b10.zk_writes", txns);
                out.put("b10.runtime", "simulated (RecordingRuntime, no Docker); ready.min-healthy 1s");
            }
            Bench.result(results, out);
        } finally {
            FanoutBench.stopHosts(jvms);
            obs.close();
        }
    }

    /** @return the zxid of a write to a marker node under {@code root}: zxids count the ensemble's writes */
    private static long mark(CuratorFramework zk, String root) throws Exception {
        String path = root + "/bench-marker";
        if (zk.checkExists().forPath(path) == null) zk.create().creatingParentsIfNeeded().forPath(path);
        return zk.setData().forPath(path, new byte[0]).getMzxid();
    }

    private static RolloutRecord awaitDone(CuratorFramework zk, ZkPaths paths, String push, int waitS) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(waitS);
        RolloutRecord r = null;
        while (System.nanoTime() < end) {
            r = RolloutNodes.readView(zk, paths, "roll"); // the hosts' nodes: the fold may lag
            if (r != null && push.equals(r.push()) && r.state() == RolloutState.DONE) return r;
            if (r != null && push.equals(r.push()) && r.state().stopped()) throw new IllegalStateException("rollout stopped: " + r);
            Thread.sleep(20);
        }
        throw new IllegalStateException("rollout of " + push + " not done within " + waitS + " s: " + r);
    }

    /** One module on every host, one container; push k changes it (env), so every host recreates it in its wave. */
    static String manifest(int k, int maxParallel) {
        return "module: roll\nhosts: [\"*\"]\nrollout: {max-parallel: " + maxParallel + "}\ncontainers:\n"
                + "  app:\n    image: mesh-demo/busybox:1\n    command: [sleep, \"3600\"]\n    env: {PUSH: \"" + k + "\"}\n"
                + "    stop-timeout: 1s\n    ready: {min-healthy: 1s}\n";
    }
}
