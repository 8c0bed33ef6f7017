package io.mesh.bench;

import io.mesh.apply.Applier;
import io.mesh.curator.MeshZk;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.ledger.Ledger;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.window.WindowJournal;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.ZkPaths;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.zookeeper.KeeperException;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * B1 (no-op apply of a 20-container module) and B2 (recreate all 20, two workloads), mesh's Applier against the real
 * Docker engine and a real ZooKeeper ensemble, side by side with docker-compose 1.29 on the equivalent compose file
 * and with the floor: for B1 the one labelled container list that shows nothing changed, for B2
 * {@link RecreateFloor}.
 *
 * <p>With {@code --only b13} (or a list naming it): B13, the ledger's cost on the apply path (decision 28): the same
 * B1 and B2 (the SIGTERM-obeying workload) with the real writer ({@link Ledger#open}) in the state dir and without
 * (as {@link Ledger#NONE}), interleaved; see {@link #ledgerCost}.
 *
 * <p>Args: --zk CONNECT --results FILE [--containers 20] [--b1-rounds 10] [--b1-per-round 10] [--b2-rounds 3]
 * [--b13-rounds 4] [--compose docker-compose] [--only b1,b2].
 */
public final class ApplyBench {
    static final String SERVE = "trap 'exit 0' TERM; while true; do sleep 1; done";

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        String zk = a.get("zk");
        Path results = Path.of(a.get("results"));
        int n = Integer.parseInt(a.getOrDefault("containers", "20"));
        int b1Rounds = Integer.parseInt(a.getOrDefault("b1-rounds", "10"));
        int b1PerRound = Integer.parseInt(a.getOrDefault("b1-per-round", "10"));
        int b2Rounds = Integer.parseInt(a.getOrDefault("b2-rounds", "3"));
        String composeBin = a.getOrDefault("compose", "docker-compose");
        java.util.Set<String> only = java.util.Set.of(a.getOrDefault("only", "b1,b2").split(","));
        boolean withCompose = only.contains("b1") || only.contains("b2"); // B13 needs no compose

        String tag = String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
        String module = "bench-apply-" + tag;
        String composeModule = module + "-compose";
        String project = "benchapply" + tag;
        String host = "bench-host";
        Path dir = Files.createTempDirectory("mesh-bench-apply");
        Path composeFile = dir.resolve("docker-compose.yml");
        ZkPaths paths = new ZkPaths("/bench-apply-" + tag);

        DockerEngine docker = new DockerEngine(null);
        docker.ping();
        CuratorFramework client = MeshZk.connect(zk, Duration.ofSeconds(30));
        // As the running agent's: desired nodes come from a CuratorCache of /mesh/desired once it has loaded.
        MeshStore store = new MeshStore(client, paths);
        desiredCache = Bench.desiredCache(client, paths, store);
        io.mesh.window.HostContext context = io.mesh.window.HostContext.of(store, docker, host, ProcessRef.current("mesh bench"),
                new WindowJournal(dir.resolve("state"))).withPolicy(io.mesh.testing.TestPolicy.HOST_NETWORK);
        // B13 measures one applier, its ledger switched on and off between applies (off, it is as Ledger.NONE)
        io.mesh.ledger.SwitchedLedger ledger = new io.mesh.ledger.SwitchedLedger(Ledger.open(dir.resolve("state")));
        Applier applier = new Applier(only.contains("b13") ? context.withLedger(ledger) : context, Duration.ofSeconds(2));
        List<String> compose = List.of(composeBin, "-p", project, "-f", composeFile.toString());
        try {
            setDesired(client, paths, manifest(module, host, n, 0), 0);
            Files.writeString(composeFile, composeYaml(composeModule, n, 0));

            Bench.log("B1", "first apply (creates " + n + " containers)" + (withCompose ? " and first docker-compose up -d" : ""));
            ApplyReport first = applier.apply(module, () -> false);
            if (first.outcome() != ApplyOutcome.APPLIED) throw new IllegalStateException("first apply: " + Json.text(first));
            if (withCompose) run(compose, "up", "-d");

            if (only.contains("breakdown")) breakdown(results, client, paths, docker, module, host);
            if (only.contains("b1")) b1(a, results, docker, applier, module, compose, b1Rounds, b1PerRound, n);
            if (only.contains("b2")) b2(results, client, paths, applier, module, host, composeBin, dir, b2Rounds, n);
            if (only.contains("b13")) {
                ledgerCost(results, client, paths, docker, applier, ledger, module, host, b1Rounds, b1PerRound,
                        Integer.parseInt(a.getOrDefault("b13-rounds", "4")), n);
            }
        } finally {
            ledger.close();
            try {
                if (withCompose) run(compose, "down", "-t", "1");
            } catch (Exception e) {
                Bench.log("apply", "compose down: " + e.getMessage());
            }
            for (String m : List.of(module, composeModule, module + "-ignores", module + "-exits", module + "-exits-compose", module + "-ledger")) {
                for (String id : docker.containersWithLabel(Labels.MODULE, m)) docker.remove(id);
            }
            try {
                client.delete().deletingChildrenIfNeeded().forPath(paths.root());
            } catch (Exception ignored) {
                // best effort
            }
            desiredCache.close();
            client.close();
            docker.close();
        }
    }

    private static void b1(Map<String, String> a, Path results, DockerEngine docker, Applier applier, String module,
                           List<String> compose, int rounds, int perRound, int n) throws Exception {
        // What every no-op apply must return: the last report, unchanged, naming the containers Docker has now.
        ApplyReport expected = applier.apply(module, () -> false);
        Map<String, String> ids = new java.util.HashMap<>();
        docker.moduleContainers(module).forEach(c -> ids.put(c.dockerName(), c.id()));
        boolean asDockerHasThem = expected.outcome() == ApplyOutcome.APPLIED && expected.containers().size() == n && ids.size() == n
                && expected.containers().stream().allMatch(c -> c.id() != null && c.id().equals(ids.get(c.container()))
                        && List.of(ContainerAction.CREATED, ContainerAction.RECREATED,
                                ContainerAction.UNCHANGED).contains(c.action()));
        if (!asDockerHasThem) throw new IllegalStateException("not what Docker has: " + Json.text(expected));
        // Warm-up: JIT, connection pools, compose's first run.
        for (int i = 0; i < 20; i++) {
            noop(applier, module, expected);
            floor(docker, module);
        }
        run(compose, "up", "-d");
        List<Double> mesh = new ArrayList<>(), floor = new ArrayList<>(), comp = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            long t = System.nanoTime();
            run(compose, "up", "-d");
            comp.add(Bench.ms(System.nanoTime() - t));
            for (int i = 0; i < perRound; i++) {
                t = System.nanoTime();
                noop(applier, module, expected);
                mesh.add(Bench.ms(System.nanoTime() - t));
                t = System.nanoTime();
                floor(docker, module);
                floor.add(Bench.ms(System.nanoTime() - t));
            }
            Bench.log("B1", "round " + (r + 1) + "/" + rounds + ": compose " + Bench.f(comp.get(comp.size() - 1)) + " ms, mesh median so far "
                    + Bench.f(Bench.median(mesh)) + " ms, floor " + Bench.f(Bench.median(floor)) + " ms");
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("b1.containers", n);
        m.put("b1.samples.mesh", mesh.size());
        m.put("b1.samples.compose", comp.size());
        m.put("b1.mesh.p50_ms", Bench.median(mesh));
        m.put("b1.mesh.p90_ms", Bench.pct(mesh, 90));
        m.put("b1.floor.p50_ms", Bench.median(floor));
        m.put("b1.floor.p90_ms", Bench.pct(floor, 90));
        m.put("b1.compose.p50_ms", Bench.median(comp));
        m.put("b1.compose.p90_ms", Bench.pct(comp, 90));
        m.put("b1.ratio.compose", Bench.median(mesh) / Bench.median(comp));
        m.put("b1.ratio.floor", Bench.median(mesh) / Bench.median(floor));
        Bench.result(results, m);
    }

    /** Where a no-op apply's time goes: each of its steps alone, through the product's own classes. */
    private static void breakdown(Path results, CuratorFramework client, ZkPaths paths, DockerEngine docker, String module,
                                  String host) throws Exception {
        MeshStore store = new MeshStore(client, paths);
        Map<String, List<Double>> t = new LinkedHashMap<>();
        for (String k : List.of("desired", "lock", "held", "list", "window", "report")) t.put(k, new ArrayList<>());
        ApplyReport last = store.report(host, module);
        for (int i = 0; i < 60; i++) {
            long s = System.nanoTime();
            store.desired(module);
            t.get("desired").add(Bench.ms(System.nanoTime() - s));
            s = System.nanoTime();
            io.mesh.section.ModuleLock lock = new io.mesh.section.ModuleLock(client, paths, module, host, ProcessRef.current("bench"), "apply");
            lock.acquire(Duration.ofSeconds(2));
            lock.release();
            t.get("lock").add(Bench.ms(System.nanoTime() - s));
            s = System.nanoTime();
            store.held(host);
            t.get("held").add(Bench.ms(System.nanoTime() - s));
            s = System.nanoTime();
            docker.moduleContainers(module);
            t.get("list").add(Bench.ms(System.nanoTime() - s));
            s = System.nanoTime();
            store.window(host, module);
            t.get("window").add(Bench.ms(System.nanoTime() - s));
            s = System.nanoTime();
            store.writeReport(last);
            t.get("report").add(Bench.ms(System.nanoTime() - s));
        }
        Map<String, Object> m = new LinkedHashMap<>();
        t.forEach((k, v) -> m.put("b1.breakdown." + k + ".p50_ms", Bench.median(v.subList(20, v.size()))));
        Bench.result(results, m);
    }

    /**
     * B13, the ledger's cost on the apply path (decision 28): one applier whose ledger is switched between applies
     * ({@link io.mesh.ledger.SwitchedLedger}: off it is as {@link Ledger#NONE}, on it is the real writer in the state
     * dir), so that both sides share the applier's memory of its reports; interleaved in the same run: B1's no-op apply of the
     * 20-container module ({@code rounds} × {@code perRound} each, the side going first alternating), then B2's recreate
     * of all 20 (the SIGTERM-obeying workload, a module of its own; {@code b2Rounds} recreates each, alternating). Each
     * result is checked as in B1 and B2. The ledger lines each side left are counted: a no-op apply makes no changing
     * Docker call, so it writes none and its cost is nothing but the proxy's look at each call's name; a recreate of 20
     * writes two lines per call (as it begins and as it ends). The event follower is not run: it writes the events on
     * a thread of its own, off the apply's path.
     */
    private static void ledgerCost(Path results, CuratorFramework client, ZkPaths paths, DockerEngine docker, Applier applier,
                                   io.mesh.ledger.SwitchedLedger ledger, String base, String host, int rounds,
                                   int perRound, int b2Rounds, int n) throws Exception {
        ledger.on(false);
        ApplyReport expected = applier.apply(base, () -> false);
        for (int i = 0; i < 40; i++) {
            ledger.on(i % 2 == 0);
            noop(applier, base, expected);
        }
        ledger.flush(Duration.ofSeconds(10));
        long linesBefore = lines(ledger);
        List<Double> b1Without = new ArrayList<>(), b1With = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < perRound; i++) {
                for (int k = 0; k < 2; k++) {
                    boolean withLedger = (k + i + r) % 2 == 0;
                    ledger.on(withLedger);
                    long t = System.nanoTime();
                    noop(applier, base, expected);
                    (withLedger ? b1With : b1Without).add(Bench.ms(System.nanoTime() - t));
                }
            }
            Bench.log("B13", "no-op round " + (r + 1) + "/" + rounds + ": p50 so far with the ledger " + Bench.f(Bench.median(b1With))
                    + " ms, without " + Bench.f(Bench.median(b1Without)) + " ms");
        }
        ledger.flush(Duration.ofSeconds(10));
        long b1Lines = lines(ledger) - linesBefore;

        String module = base + "-ledger";
        setDesired(client, paths, manifest(module, host, n, 0, EXITS_ON_TERM), 0);
        ledger.on(false);
        ApplyReport first = applier.apply(module, () -> false);
        if (first.outcome() != ApplyOutcome.APPLIED) throw new IllegalStateException("B13 first apply: " + Json.text(first));
        List<Double> b2Without = new ArrayList<>(), b2With = new ArrayList<>();
        long b2Lines = 0;
        int round = 0;
        for (int r = 0; r < b2Rounds; r++) {
            for (int k = 0; k < 2; k++) {
                boolean withLedger = (k + r) % 2 == 0;
                setDesired(client, paths, manifest(module, host, n, ++round, EXITS_ON_TERM), round);
                ledger.flush(Duration.ofSeconds(10));
                long before = lines(ledger);
                ledger.on(withLedger);
                long t = System.nanoTime();
                ApplyReport rep = applier.apply(module, () -> false);
                double ms = Bench.ms(System.nanoTime() - t);
                long recreated = rep.containers().stream().filter(c -> c.action() == ContainerAction.RECREATED).count();
                if (rep.outcome() != ApplyOutcome.APPLIED || recreated != n) throw new IllegalStateException("B13 recreate: " + Json.text(rep));
                (withLedger ? b2With : b2Without).add(ms);
                ledger.flush(Duration.ofSeconds(10));
                if (withLedger) b2Lines += lines(ledger) - before;
            }
            Bench.log("B13", "recreate round " + (r + 1) + "/" + b2Rounds + ": with the ledger " + Bench.f(b2With.get(b2With.size() - 1))
                    + " ms, without " + Bench.f(b2Without.get(b2Without.size() - 1)) + " ms");
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("b13.b1.samples", b1With.size());
        m.put("b13.b1.with.p50_ms", Bench.median(b1With));
        m.put("b13.b1.without.p50_ms", Bench.median(b1Without));
        m.put("b13.b1.ratio", Bench.median(b1With) / Bench.median(b1Without));
        m.put("b13.b1.ledger_lines", b1Lines);
        m.put("b13.b2.samples", b2With.size());
        m.put("b13.b2.with.p50_ms", Bench.median(b2With));
        m.put("b13.b2.without.p50_ms", Bench.median(b2Without));
        m.put("b13.b2.ratio", Bench.median(b2With) / Bench.median(b2Without));
        m.put("b13.b2.ledger_lines_per_recreate", b2Lines / (double) b2With.size());
        Bench.result(results, m);
    }

    /** @return the lines in the ledger's files as written (a call's two lines counted two) */
    private static long lines(Ledger ledger) throws java.io.IOException {
        if (!Files.isDirectory(ledger.dir())) return 0;
        long n = 0;
        try (var files = Files.list(ledger.dir())) {
            for (Path f : files.filter(p -> p.toString().endsWith(".jsonl")).toList()) {
                for (byte b : Files.readAllBytes(f)) if (b == '\n') n++;
            }
        }
        return n;
    }

    /** One no-op apply: it must return the very report it returned before (a locked apply would write a new one). */
    private static void noop(Applier applier, String module, ApplyReport expected) throws Exception {
        ApplyReport r = applier.apply(module, () -> false);
        if (!r.equals(expected)) throw new IllegalStateException("not a no-op: " + Json.text(r));
    }

    /** The floor: the one Docker API call that shows the module's containers, as an apply needs them. */
    private static void floor(DockerEngine docker, String module) {
        docker.client().listContainersCmd().withShowAll(true).withLabelFilter(Map.of(Labels.MODULE, module)).exec();
    }

    /** B2's workload whose process ignores SIGTERM: every stop waits out the 1 s stop timeout, then SIGKILL. */
    static final String IGNORES_TERM = "trap '' TERM; while true; do sleep 1; done";
    /** B2's workload that exits on SIGTERM at once ({@code wait} is cut short by a trapped signal; {@code sleep} is not). */
    static final String EXITS_ON_TERM = "trap 'exit 0' TERM; while true; do sleep 1 & wait $!; done";

    /**
     * B2, per workload (SIGTERM ignored; SIGTERM obeyed): a push changes every container's env and mesh's Applier
     * recreates all 20 ({@code ready: {min-healthy: 0s}}), against {@link RecreateFloor} (the same recreate's six
     * Docker calls per container, all at once, through docker-java) and, on the SIGTERM workload,
     * {@code docker-compose up -d --force-recreate -t 1}. Each round runs each side once, in an order that rotates.
     */
    private static void b2(Path results, CuratorFramework client, ZkPaths paths, Applier applier, String base, String host,
                           String composeBin, Path dir, int rounds, int n) throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("b2.containers", n);
        m.put("b2.samples", rounds);
        for (String w : List.of("ignores", "exits")) {
            String module = base + "-" + w, command = w.equals("ignores") ? IGNORES_TERM : EXITS_ON_TERM;
            boolean withCompose = w.equals("exits");
            Path composeFile = dir.resolve("b2-" + w + ".yml");
            List<String> compose = List.of(composeBin, "-p", module.replace("-", ""), "-f", composeFile.toString());
            setDesired(client, paths, manifest(module, host, n, 0, command), 0);
            ApplyReport first = applier.apply(module, () -> false);
            if (first.outcome() != ApplyOutcome.APPLIED) throw new IllegalStateException("B2 first apply: " + Json.text(first));
            List<Double> mesh = new ArrayList<>(), floor = new ArrayList<>(), comp = new ArrayList<>();
            try (RecreateFloor f = new RecreateFloor(module + "-floor", command, n)) {
                f.up();
                if (withCompose) {
                    Files.writeString(composeFile, composeYaml(module + "-compose", n, 0, command));
                    run(compose, "up", "-d");
                }
                for (int r = 1; r <= rounds; r++) {
                    setDesired(client, paths, manifest(module, host, n, r, command), r);
                    if (withCompose) Files.writeString(composeFile, composeYaml(module + "-compose", n, r, command));
                    for (int k = 0; k < 3; k++) {
                        int side = (k + r) % 3;
                        long t = System.nanoTime();
                        if (side == 0) {
                            ApplyReport rep = applier.apply(module, () -> false);
                            long recreated = rep.containers().stream().filter(c -> c.action() == ContainerAction.RECREATED).count();
                            if (rep.outcome() != ApplyOutcome.APPLIED || recreated != n) throw new IllegalStateException("B2 apply: " + Json.text(rep));
                            mesh.add(Bench.ms(System.nanoTime() - t));
                        } else if (side == 1) {
                            f.recreate(r);
                            floor.add(Bench.ms(System.nanoTime() - t));
                        } else if (withCompose) {
                            run(compose, "up", "-d", "--force-recreate", "-t", "1");
                            comp.add(Bench.ms(System.nanoTime() - t));
                        }
                    }
                    Bench.log("B2", w + " round " + r + "/" + rounds + ": mesh " + Bench.f(mesh.get(mesh.size() - 1)) + " ms, floor "
                            + Bench.f(floor.get(floor.size() - 1)) + " ms" + (withCompose ? ", compose " + Bench.f(comp.get(comp.size() - 1)) + " ms" : ""));
                }
            } finally {
                if (withCompose) {
                    try {
                        run(compose, "down", "-t", "1");
                    } catch (Exception e) {
                        Bench.log("B2", "compose down: " + e.getMessage());
                    }
                }
            }
            String k = "b2." + w;
            m.put(k + ".mesh.p50_ms", Bench.median(mesh));
            m.put(k + ".mesh.max_ms", Bench.pct(mesh, 100));
            m.put(k + ".floor.p50_ms", Bench.median(floor));
            m.put(k + ".floor.max_ms", Bench.pct(floor, 100));
            m.put(k + ".ratio.floor", Bench.median(mesh) / Bench.median(floor));
            if (withCompose) {
                m.put(k + ".compose.p50_ms", Bench.median(comp));
                m.put(k + ".ratio.compose", Bench.median(mesh) / Bench.median(comp));
            }
        }
        Bench.result(results, m);
    }

    /** B2's module: n containers running {@code command}, ready as soon as they run ({@code min-healthy: 0s}). */
    static String manifest(String module, String host, int n, int round, String command) {
        StringBuilder sb = new StringBuilder("module: " + module + "\nhosts: [" + host + "]\ncontainers:\n");
        for (int i = 0; i < n; i++) {
            sb.append(String.format("  c%02d:\n", i))
                    .append("    image: mesh-demo/busybox:1\n")
                    .append("    command: [sh, -c, \"").append(command).append("\"]\n")
                    .append("    env: {BENCH_ROUND: \"").append(round).append("\"}\n")
                    .append("    network: host\n    restart: unless-stopped\n    stop-timeout: 1s\n    ready: {min-healthy: 0s}\n");
        }
        return sb.toString();
    }

    static String composeYaml(String labelModule, int n, int round, String command) {
        return composeYaml(labelModule, n, round).replace(SERVE, command.replace("$", "$$")); // compose interpolates $
    }

    static String manifest(String module, String host, int n, int round) {
        StringBuilder sb = new StringBuilder("module: " + module + "\nhosts: [" + host + "]\ncontainers:\n");
        for (int i = 0; i < n; i++) {
            sb.append(String.format("  c%02d:\n", i))
                    .append("    image: mesh-demo/busybox:1\n")
                    .append("    command: [sh, -c, \"").append(SERVE).append("\"]\n")
                    .append("    env: {BENCH_ROUND: \"").append(round).append("\"}\n")
                    .append("    network: host\n    restart: unless-stopped\n    stop-timeout: 1s\n");
        }
        return sb.toString();
    }

    static String composeYaml(String labelModule, int n, int round) {
        StringBuilder sb = new StringBuilder("version: \"2.4\"\nservices:\n");
        for (int i = 0; i < n; i++) {
            sb.append(String.format("  c%02d:\n", i))
                    .append("    image: mesh-demo/busybox:1\n")
                    .append("    command: [sh, -c, \"").append(SERVE).append("\"]\n")
                    .append("    environment: {BENCH_ROUND: \"").append(round).append("\"}\n")
                    .append("    network_mode: host\n    restart: unless-stopped\n    stop_grace_period: 1s\n")
                    .append("    labels: {mesh.module: ").append(labelModule).append("}\n");
        }
        return sb.toString();
    }

    /** The agent's cache of /mesh/desired, as the daemon has it. */
    private static CuratorCache desiredCache;

    /** Writes a desired node and waits (bounded) until the agent's cache has it, as the daemon's apply starts then. */
    static void setDesired(CuratorFramework client, ZkPaths paths, String yaml, int round) throws Exception {
        ModuleSpec spec = new ManifestParser().parse(yaml).get(0);
        DesiredRecord d = new DesiredRecord(spec.module(), "r" + round, ZkPaths.pushName(round + 1), spec);
        String path = paths.desired(spec.module());
        byte[] data = Json.bytes(d);
        try {
            client.setData().forPath(path, data);
        } catch (KeeperException.NoNodeException e) {
            client.create().creatingParentsIfNeeded().forPath(path, data);
        }
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (desiredCache != null && !desiredCache.get(path).map(c -> java.util.Arrays.equals(c.getData(), data)).orElse(false)) {
            if (System.nanoTime() > end) throw new IllegalStateException("the desired cache did not see " + path);
            Thread.sleep(1);
        }
    }

    /** Runs a command to its end (bounded: 5 minutes), failing on a non-zero exit. */
    static void run(List<String> base, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(base);
        cmd.addAll(List.of(args));
        File out = File.createTempFile("mesh-bench-cmd", ".log");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out).start();
            if (!p.waitFor(5, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", cmd) + " did not finish within 5 minutes");
            }
            if (p.exitValue() != 0) {
                List<String> lines = Files.readAllLines(out.toPath());
                throw new IllegalStateException(String.join(" ", cmd) + " exited " + p.exitValue() + ": "
                        + String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size())));
            }
        } finally {
            out.delete();
        }
    }
}
