package io.mesh.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.RestartPolicy;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.httpclient5.ApacheDockerHttpClient;
import io.mesh.docker.Labels;
import io.mesh.wire.Json;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * B12 (a fleet of real engines): on {@code deploy/dev/fleet.sh up 5} (5 dockerd engines, 3 ZooKeeper servers, the
 * coordinators and one real agent per engine, as SPEC's "Fleet on one machine"), a push through the coordinator's
 * HTTP API ({@code POST /v1/pushes}) of a module {@value #MODULE} of N {@code mesh-demo/busybox:1} containers on
 * every host ({@code ["*"]}; a shell that exits on SIGTERM, {@code stop-timeout: 1s}, {@code network: none},
 * {@code ready: {min-healthy: 0s}}) that changes every container's env, until every engine's containers are replaced
 * and running: timed from just before the POST until each engine's own events (docker-java, through its socket, not
 * through mesh; {@link Replaced}) show N new containers started and the N it ran before destroyed. Then, untimed, the
 * push status must read every host {@code applied} (polled each second, as {@code mesh push --wait} does: a bench
 * polling faster spent the coordinators' CPU, which these 2 cores share with everything) and each engine must have
 * exactly the module's N containers, each running with the new env.
 *
 * <p>Floor ({@link Floor}): the same recreate's Docker calls made directly through docker-java on the five engines
 * at once, every container of every engine in parallel: create the new one aside, stop the old one, rename the old
 * one aside and the new one to the name, start the new one, remove the old one (B2's {@code RecreateFloor}, 6 calls
 * per container), with the same N containers per engine, image, command, env change, stop timeout, network and
 * restart policy. Its containers carry {@code mesh.module=}{@value #FLOOR} so cleanup finds them, and names of
 * their own. Target: mesh ≤ 1.3× the floor.
 *
 * <p>Each side first creates its containers and recreates them once (a warm-up, not measured); then each round
 * runs each side once, the side going first alternating. p50 and max over the rounds, each side, and the ratio of
 * the p50s. At the end the module is deleted ({@code DELETE /v1/modules/}{@value #MODULE}, waited for) and whatever
 * of either side is left on an engine is removed. Any failure (a push failed or not done within {@code --wait-s},
 * an engine without the new containers) throws: no figures. Printed on stderr for where the time goes: per push,
 * when the status said done and when each host's apply finished (its target's {@code finishedAt}), from the POST;
 * per floor recreate, when the last of each kind of call ended. Each agent's ledger
 * ({@code /run/mesh-fleet/fleet-<i>/agent/ledger/}) times each of mesh's own Docker calls.
 *
 * <p>Args: --results FILE [--env /run/mesh-fleet/env] [--containers 4] [--rounds 3] [--wait-s 120]. The env file is
 * fleet.sh's ({@code MESH_COORDINATOR}, {@code MESH_FLEET_HOSTS}, {@code MESH_FLEET_DOCKER_<host>}); a
 * {@code MESH_TOKEN} in it or in the environment is sent as the push's bearer token.
 */
public final class FleetBench {
    static final String MODULE = "bench-fleet";
    static final String FLOOR = "bench-fleet-floor";
    static final String IMAGE = "mesh-demo/busybox:1";
    /** B2's workload that exits on SIGTERM at once (ApplyBench's {@code EXITS_ON_TERM}). */
    static final String COMMAND = "trap 'exit 0' TERM; while true; do sleep 1 & wait $!; done";
    static final String ENV = "BENCH_ROUND";

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Bench.args(argv);
        Path results = Path.of(a.get("results"));
        Path envFile = Path.of(a.getOrDefault("env", "/run/mesh-fleet/env"));
        int n = Integer.parseInt(a.getOrDefault("containers", "4"));
        int rounds = Integer.parseInt(a.getOrDefault("rounds", "3"));
        Duration wait = Duration.ofSeconds(Integer.parseInt(a.getOrDefault("wait-s", "120")));

        if (!Files.isRegularFile(envFile)) throw new IllegalStateException("no " + envFile + ": bring the fleet up first (deploy/dev/fleet.sh up 5)");
        Map<String, String> env = io.mesh.fleet.Fleet.readEnv(envFile);
        List<String> hosts = List.of(required(env, "MESH_FLEET_HOSTS", envFile).trim().split("\\s+"));
        String coordinator = required(env, "MESH_COORDINATOR", envFile).split(",")[0].trim();
        String token = env.getOrDefault("MESH_TOKEN", System.getenv("MESH_TOKEN"));
        String tag = String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));

        Map<String, DockerClient> engines = new LinkedHashMap<>();
        ExecutorService checks = Executors.newFixedThreadPool(hosts.size());
        Api api = new Api(coordinator, token);
        Floor floor = null;
        try {
            for (String h : hosts) {
                DockerClient d = engine(required(env, "MESH_FLEET_DOCKER_" + h.replace('-', '_'), envFile), n);
                d.pingCmd().exec();
                engines.put(h, d);
            }
            Bench.log("B12", hosts.size() + " engines (" + String.join(", ", hosts) + "), coordinator " + coordinator + ", "
                    + n + " containers each, run " + tag);
            for (DockerClient d : engines.values()) removeLabelled(d, FLOOR); // an interrupted run's
            Mesh mesh = new Mesh(api, engines, checks, hosts, n, wait);
            floor = new Floor(engines, n);

            // First generation and one recreate each side: not measured (JIT, connection pools, the agents' first apply).
            double first = mesh.push(tag + "-0");
            floor.up(tag + "-0");
            double warmMesh = mesh.push(tag + "-1");
            double warmFloor = floor.recreate(tag + "-1");
            Bench.log("B12", "first push " + Bench.f(first) + " ms; warm-up: mesh " + Bench.f(warmMesh) + " ms, floor " + Bench.f(warmFloor) + " ms");

            List<Double> meshMs = new ArrayList<>(), floorMs = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                String value = tag + "-" + (r + 2);
                for (int k = 0; k < 2; k++) {
                    if ((k + r) % 2 == 0) meshMs.add(mesh.push(value));
                    else floorMs.add(floor.recreate(value));
                }
                Bench.log("B12", "round " + (r + 1) + "/" + rounds + ": mesh " + Bench.f(meshMs.get(r)) + " ms, floor " + Bench.f(floorMs.get(r)) + " ms");
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("fleet.engines", hosts.size());
            m.put("fleet.containers_per_engine", n);
            m.put("fleet.rounds", rounds);
            m.put("fleet.mesh.p50_ms", Bench.median(meshMs));
            m.put("fleet.mesh.max_ms", Bench.pct(meshMs, 100));
            m.put("fleet.floor.p50_ms", Bench.median(floorMs));
            m.put("fleet.floor.max_ms", Bench.pct(floorMs, 100));
            m.put("fleet.ratio", Bench.median(meshMs) / Bench.median(floorMs));
            Bench.result(results, m);
        } finally {
            try {
                deleteModule(api, hosts, Duration.ofSeconds(Math.min(60, wait.toSeconds())));
            } catch (Exception e) {
                Bench.log("B12", "delete of " + MODULE + ": " + e.getMessage() + " (its containers are removed through the engines)");
            }
            if (floor != null) floor.close();
            for (DockerClient d : engines.values()) {
                try {
                    removeLabelled(d, FLOOR);
                    removeLabelled(d, MODULE);
                } catch (RuntimeException e) {
                    Bench.log("B12", "cleanup: " + e.getMessage());
                }
            }
            checks.shutdownNow();
            for (DockerClient d : engines.values()) d.close();
        }
    }

    /**
     * mesh's side: a push through the coordinator, then its status and the engines until every host has the new
     * containers running.
     */
    static final class Mesh {
        private final Api api;
        private final Map<String, DockerClient> engines;
        private final ExecutorService checks;
        private final List<String> hosts;
        private final int n;
        private final Duration wait;
        Mesh(Api api, Map<String, DockerClient> engines, ExecutorService checks, List<String> hosts, int n, Duration wait) {
            this.api = api;
            this.engines = engines;
            this.checks = checks;
            this.hosts = hosts;
            this.n = n;
            this.wait = wait;
        }

        /**
         * @return ms from just before the POST until every engine has started the module's n new containers and
         *         destroyed the n it ran before, as the engines' own events say (received here); then, untimed, the
         *         push status must read every host applied and each engine must run the new containers with the new env
         */
        double push(String value) throws Exception {
            String yaml = manifest(n, value);
            long wall0 = System.currentTimeMillis();
            try (Replaced replaced = new Replaced(engines, n)) {
                long t0 = System.nanoTime();
                String push = api.push(yaml, "bench-fleet-" + value);
                if (!replaced.await(wait)) {
                    throw new IllegalStateException("push " + push + " (" + value + ") not on every engine within " + wait.toSeconds()
                            + " s: " + replaced.lacking() + "; " + enginesSay(value));
                }
                long t1 = replaced.doneAt();
                // Not timed: the status a waiting client reads (polled at mesh push --wait's pace, 1 s, so that the
                // polls cost the coordinators what a client's do), and the engines' containers themselves.
                long end = System.nanoTime() + wait.toNanos();
                JsonNode done = null;
                String last = "no status yet";
                while (done == null) {
                    JsonNode st = api.status(push);
                    last = st == null ? "404" : st.path("state").asText() + " " + st.path("counts");
                    if (st != null && st.path("done").asBoolean()) {
                        settled(push, st);
                        done = st;
                    } else if (System.nanoTime() > end) {
                        throw new IllegalStateException("push " + push + " (" + value + ") replaced on every engine, but its status reads " + last);
                    } else {
                        Thread.sleep(1000);
                    }
                }
                if (!enginesHave(value)) throw new IllegalStateException("push " + push + " (" + value + "): " + enginesSay(value));
                StringBuilder finished = new StringBuilder();
                for (JsonNode t : done.path("targets")) {
                    if (!MODULE.equals(t.path("module").asText()) || t.path("finishedAt").isMissingNode() || t.path("finishedAt").isNull()) continue;
                    long at = java.time.Instant.parse(t.path("finishedAt").asText()).toEpochMilli();
                    finished.append(finished.length() == 0 ? "" : ", ").append(t.path("host").asText()).append(' ').append(at - wall0);
                }
                Bench.log("B12", "mesh " + value + ": " + Bench.f(Bench.ms(t1 - t0)) + " ms (" + push + "); hosts' applies finished at (ms): " + finished);
                return Bench.ms(t1 - t0);
            }
        }

        /** Throws unless the done status has every host applied. */
        private void settled(String push, JsonNode s) {
            Map<String, String> states = new LinkedHashMap<>();
            for (JsonNode t : s.path("targets")) {
                if (MODULE.equals(t.path("module").asText())) states.put(t.path("host").asText(), t.path("state").asText());
            }
            for (String h : hosts) {
                if (!"applied".equals(states.get(h))) {
                    throw new IllegalStateException("push " + push + " done but " + h + " reads " + states.get(h) + ": " + s);
                }
            }
        }

        /** @return true when every engine has exactly the module's n containers, each running with {@code BENCH_ROUND=value} */
        private boolean enginesHave(String value) throws Exception {
            List<Future<String>> fs = new ArrayList<>();
            for (DockerClient d : engines.values()) fs.add(checks.submit(() -> engineLacks(d, value)));
            boolean all = true;
            for (Future<String> f : fs) all &= f.get(30, TimeUnit.SECONDS) == null;
            return all;
        }

        private String enginesSay(String value) throws Exception {
            StringBuilder sb = new StringBuilder();
            for (var e : engines.entrySet()) {
                String lack = engineLacks(e.getValue(), value);
                sb.append(e.getKey()).append(": ").append(lack == null ? "ok" : lack).append("; ");
            }
            return sb.toString();
        }

        /** @return what is missing on one engine, or null when it has the module's n new containers running */
        private String engineLacks(DockerClient d, String value) {
            List<Container> cs = d.listContainersCmd().withShowAll(true).withLabelFilter(Map.of(Labels.MODULE, MODULE)).exec();
            if (cs.size() != n) return cs.size() + " containers of " + n;
            for (Container c : cs) {
                if (!"running".equals(c.getState())) return Arrays.toString(c.getNames()) + " " + c.getState();
            }
            for (Container c : cs) {
                InspectContainerResponse i;
                try {
                    i = d.inspectContainerCmd(c.getId()).exec();
                } catch (NotFoundException gone) {
                    return c.getId() + " gone";
                }
                if (!Boolean.TRUE.equals(i.getState().getRunning())) return i.getName() + " not running";
                String[] e = i.getConfig().getEnv();
                if (e == null || !Arrays.asList(e).contains(ENV + "=" + value)) return i.getName() + " has the old env";
            }
            return null;
        }
    }

    /**
     * The engines' own account of one push to the module: subscribed to each engine's container events of
     * {@code mesh.module=}{@value #MODULE} before the push, an engine is done when the n containers it ran before have
     * each a {@code destroy} event and n others a {@code start} event: the same end as the floor's, whose last calls are
     * the old containers' removals. Costs the engines no polling.
     */
    static final class Replaced implements AutoCloseable {
        private final List<com.github.dockerjava.api.async.ResultCallback.Adapter<com.github.dockerjava.api.model.Event>> streams = new ArrayList<>();
        private final Map<String, java.util.Set<String>> before = new LinkedHashMap<>(), started = new LinkedHashMap<>(), destroyed = new LinkedHashMap<>();
        private final Map<String, Long> doneAt = new java.util.concurrent.ConcurrentHashMap<>();
        private final java.util.concurrent.CountDownLatch engines;
        private final int n;

        Replaced(Map<String, DockerClient> clients, int n) throws Exception {
            this.n = n;
            this.engines = new java.util.concurrent.CountDownLatch(clients.size());
            for (var e : clients.entrySet()) {
                String host = e.getKey();
                before.put(host, new java.util.HashSet<>());
                started.put(host, java.util.concurrent.ConcurrentHashMap.newKeySet());
                destroyed.put(host, java.util.concurrent.ConcurrentHashMap.newKeySet());
                // What runs before the push first (the module is at rest), then the events from now on: a replay of
                // the last push's would count its starts as this one's.
                for (Container c : e.getValue().listContainersCmd().withShowAll(true).withLabelFilter(Map.of(Labels.MODULE, MODULE)).exec()) {
                    before.get(host).add(c.getId());
                }
                var cb = new com.github.dockerjava.api.async.ResultCallback.Adapter<com.github.dockerjava.api.model.Event>() {
                    @Override
                    public void onNext(com.github.dockerjava.api.model.Event ev) { seen(host, ev); }
                };
                e.getValue().eventsCmd().withEventTypeFilter("container").withLabelFilter(Map.of(Labels.MODULE, MODULE)).exec(cb);
                streams.add(cb);
                if (!cb.awaitStarted(10, TimeUnit.SECONDS)) throw new IllegalStateException(host + ": its engine's event stream did not start");
            }
        }

        private void seen(String host, com.github.dockerjava.api.model.Event ev) {
            String id = ev.getId();
            if (id == null || doneAt.containsKey(host)) return;
            java.util.Set<String> old = before.get(host);
            synchronized (old) {
                if ("start".equals(ev.getAction()) && !old.contains(id)) started.get(host).add(id);
                if ("destroy".equals(ev.getAction()) && old.contains(id)) destroyed.get(host).add(id);
                if (started.get(host).size() >= n && destroyed.get(host).size() >= old.size() && doneAt.putIfAbsent(host, System.nanoTime()) == null) {
                    engines.countDown();
                }
            }
        }

        boolean await(Duration wait) throws InterruptedException { return engines.await(wait.toMillis(), TimeUnit.MILLISECONDS); }

        /** @return when the last engine was done (System.nanoTime) */
        long doneAt() { return doneAt.values().stream().mapToLong(Long::longValue).max().orElseThrow(); }

        String lacking() {
            StringBuilder sb = new StringBuilder();
            for (String h : before.keySet()) {
                if (doneAt.containsKey(h)) continue;
                sb.append(h).append(": ").append(started.get(h).size()).append(" new started, ").append(destroyed.get(h).size())
                        .append(" of ").append(before.get(h).size()).append(" old destroyed; ");
            }
            return sb.toString();
        }

        @Override
        public void close() {
            for (var cb : streams) {
                try {
                    cb.close();
                } catch (IOException ignored) {
                    // the stream is gone either way
                }
            }
        }
    }

    /**
     * The floor: B2's recreate ({@code RecreateFloor}'s six calls per container) on every engine at once, through
     * docker-java, no checks and no readiness wait. Containers {@code bench-fleet-floor-cNN} on each engine.
     */
    static final class Floor implements AutoCloseable {
        private final Map<String, DockerClient> engines;
        private final int n;
        private final ExecutorService pool;
        /** host -> the current container id of each index */
        private final Map<String, String[]> ids = new LinkedHashMap<>();

        Floor(Map<String, DockerClient> engines, int n) {
            this.engines = engines;
            this.n = n;
            this.pool = Executors.newFixedThreadPool(engines.size() * n);
            engines.keySet().forEach(h -> ids.put(h, new String[n]));
        }

        /** Creates and starts the first generation on every engine (not measured). */
        void up(String value) throws Exception {
            List<Future<?>> fs = new ArrayList<>();
            for (var e : engines.entrySet()) {
                DockerClient d = e.getValue();
                String[] mine = ids.get(e.getKey());
                for (int i = 0; i < n; i++) {
                    int idx = i;
                    fs.add(pool.submit(() -> {
                        String id = create(d, name(idx), value);
                        d.startContainerCmd(id).exec();
                        mine[idx] = id;
                        return null;
                    }));
                }
            }
            for (Future<?> f : fs) f.get(2, TimeUnit.MINUTES);
        }

        /** @return ms to recreate every container of every engine at once with {@code BENCH_ROUND=value} */
        double recreate(String value) throws Exception {
            long t0 = System.nanoTime();
            List<Future<String>> fs = new ArrayList<>();
            long[][] ends = new long[engines.size() * n][]; // per container: when each of its 6 calls ended (for the log)
            int task = 0;
            for (var e : engines.entrySet()) {
                DockerClient d = e.getValue();
                String[] mine = ids.get(e.getKey());
                for (int i = 0; i < n; i++) {
                    String name = name(i), old = mine[i];
                    long[] end = ends[task++] = new long[6];
                    fs.add(pool.submit(() -> {
                        String id = create(d, name + ".next", value);
                        end[0] = System.nanoTime();
                        d.stopContainerCmd(old).withTimeout(1).exec();
                        end[1] = System.nanoTime();
                        d.renameContainerCmd(old).withName(name + ".prev").exec();
                        end[2] = System.nanoTime();
                        d.renameContainerCmd(id).withName(name).exec();
                        end[3] = System.nanoTime();
                        d.startContainerCmd(id).exec();
                        end[4] = System.nanoTime();
                        d.removeContainerCmd(old).withForce(true).exec();
                        end[5] = System.nanoTime();
                        return id;
                    }));
                }
            }
            List<String> got = new ArrayList<>();
            for (Future<String> f : fs) got.add(f.get(2, TimeUnit.MINUTES));
            double ms = Bench.ms(System.nanoTime() - t0);
            StringBuilder phases = new StringBuilder();
            String[] calls = {"create", "stop", "rename", "rename", "start", "remove"};
            for (int c = 0; c < 6; c++) {
                if (c == 2) continue;
                long last = 0;
                for (long[] end : ends) last = Math.max(last, end[c] - t0);
                phases.append(phases.length() == 0 ? "" : ", ").append(calls[c]).append(c == 3 ? "s" : "").append(" ").append(Bench.f(Bench.ms(last)));
            }
            Bench.log("B12", "floor " + value + ": " + Bench.f(ms) + " ms; the last of each call ended at (ms): " + phases);
            int k = 0;
            for (String h : engines.keySet()) for (int i = 0; i < n; i++) ids.get(h)[i] = got.get(k++);
            return ms;
        }

        private String create(DockerClient d, String name, String value) {
            return d.createContainerCmd(IMAGE).withName(name)
                    .withCmd("sh", "-c", COMMAND).withEnv(ENV + "=" + value).withStopTimeout(1)
                    .withLabels(Map.of(Labels.MODULE, FLOOR))
                    .withHostConfig(HostConfig.newHostConfig().withNetworkMode("none").withRestartPolicy(RestartPolicy.unlessStoppedRestart()))
                    .exec().getId();
        }

        private static String name(int i) { return String.format("%s-c%02d", FLOOR, i); }

        @Override
        public void close() { pool.shutdownNow(); }
    }

    /** The coordinator's HTTP API: a push, its status, a module's delete. */
    static final class Api {
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        private final String base, token;

        Api(String base, String token) {
            this.base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
            this.token = token == null || token.isBlank() ? null : token.trim();
        }

        /** @return the push's name, from {@code 202 {"push",...}} */
        String push(String yaml, String revision) throws Exception {
            HttpRequest.Builder b = request("/v1/pushes").header("Content-Type", "application/yaml").header("X-Mesh-Revision", revision)
                    .POST(HttpRequest.BodyPublishers.ofString(yaml, StandardCharsets.UTF_8));
            return accepted(send(b), "POST /v1/pushes");
        }

        /** @return {@code GET /v1/pushes/<push>}, or null on 404 (a coordinator whose cache has not seen it) */
        JsonNode status(String push) throws Exception {
            HttpResponse<String> r = send(request("/v1/pushes/" + push).GET());
            if (r.statusCode() == 404) return null;
            if (r.statusCode() != 200) throw new IllegalStateException("GET /v1/pushes/" + push + ": " + r.statusCode() + " " + r.body());
            return Json.MAPPER.readTree(r.body());
        }

        /** @return the delete's push, or null when the module has no desired node (404) */
        String delete(String module) throws Exception {
            HttpResponse<String> r = send(request("/v1/modules/" + module).DELETE());
            if (r.statusCode() == 404) return null;
            return accepted(r, "DELETE /v1/modules/" + module);
        }

        private HttpRequest.Builder request(String path) {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30));
            if (token != null) b.header("Authorization", "Bearer " + token);
            return b;
        }

        private HttpResponse<String> send(HttpRequest.Builder b) throws IOException, InterruptedException {
            return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        }

        private static String accepted(HttpResponse<String> r, String what) throws IOException {
            if (r.statusCode() != 202) throw new IllegalStateException(what + ": " + r.statusCode() + " " + r.body());
            String push = Json.MAPPER.readTree(r.body()).path("push").asText(null);
            if (push == null) throw new IllegalStateException(what + ": no push in " + r.body());
            return push;
        }
    }

    /** Deletes the module through the API and waits (bounded) until its delete is done on every host. */
    private static void deleteModule(Api api, List<String> hosts, Duration wait) throws Exception {
        String push = api.delete(MODULE);
        if (push == null) return;
        long end = System.nanoTime() + wait.toNanos();
        JsonNode s = null;
        while (System.nanoTime() < end) {
            s = api.status(push);
            if (s != null && s.path("done").asBoolean()) {
                Bench.log("B12", "module " + MODULE + " deleted from " + hosts.size() + " hosts (" + push + ": " + s.path("state").asText() + ")");
                return;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("delete " + push + " not done within " + wait.toSeconds() + " s: " + (s == null ? "no status" : s.path("counts")));
    }

    /** The module: n containers on every host, every one with {@code BENCH_ROUND=value}, ready as soon as it runs. */
    static String manifest(int n, String value) {
        StringBuilder sb = new StringBuilder("module: " + MODULE + "\nhosts: [\"*\"]\ncontainers:\n");
        for (int i = 0; i < n; i++) {
            sb.append(String.format("  c%02d:\n", i))
                    .append("    image: ").append(IMAGE).append('\n')
                    .append("    command: [sh, -c, \"").append(COMMAND).append("\"]\n")
                    .append("    env: {").append(ENV).append(": \"").append(value).append("\"}\n")
                    .append("    network: none\n    restart: unless-stopped\n    stop-timeout: 1s\n")
                    .append("    ready: {min-healthy: 0s}\n"); // the readiness wait is the operator's choice, not mesh's cost
        }
        return sb.toString();
    }

    /** @return a docker-java client of one engine's socket, with connections for every container at once */
    private static DockerClient engine(String dockerHost, int n) {
        DefaultDockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(dockerHost).build();
        return DockerClientImpl.getInstance(config, new ApacheDockerHttpClient.Builder().dockerHost(config.getDockerHost())
                .sslConfig(config.getSSLConfig()).maxConnections(Math.max(8, 2 * n)).connectionTimeout(Duration.ofSeconds(10))
                .responseTimeout(Duration.ofSeconds(60)).build());
    }

    private static void removeLabelled(DockerClient d, String module) {
        for (Container c : d.listContainersCmd().withShowAll(true).withLabelFilter(Map.of(Labels.MODULE, module)).exec()) {
            try {
                d.removeContainerCmd(c.getId()).withForce(true).exec();
            } catch (NotFoundException gone) {
                // removed meanwhile
            }
        }
    }

    private static String required(Map<String, String> env, String name, Path file) {
        String v = env.get(name);
        if (v == null || v.isBlank()) throw new IllegalStateException("no " + name + " in " + file);
        return v;
    }

}
