package io.mesh.faults;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Event;
import io.mesh.docker.Labels;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.EnsembleExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.TestPolicy;
import io.mesh.testing.ZkEnsemble;
import io.mesh.testing.ZkTxnLog;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The history checker: a seeded, bounded, randomized run of pushes, applies and windows against the real
 * Docker engine and the real 3-server ensemble, by several processes at once, then a check of what actually
 * happened, from two independent records: Docker's container events (recorded live) and ZooKeeper's own transaction
 * log (every create and delete of every held node, with the leader's clock).
 *
 * <p>Processes: one agent daemon ({@code mesh-agent run}) for the host, reconciling every second (a second daemon of
 * the same host refuses to start: one agent per host (failure model: "a second agent for a host"); a daemon of another host id would rightly remove what
 * its host does not run, one Docker engine being one host), {@code mesh-agent window} processes opened at
 * random (at most two at a time), and the pusher (this JVM) writing desired nodes as the coordinator does. Each module has a {@code store}
 * (held by its window; restart policies {@code always}, {@code unless-stopped}, {@code no}) and an {@code api}
 * (never held); one module's step always fails, so failed windows are part of the history.
 *
 * <p>Checked, for every held interval (a held node's life, from the transaction log; {@link HeldIntervals}):
 * <ul>
 *   <li>no create, destroy or rename of the held container (or of a replacement under its name) inside it;</li>
 *   <li>at most one stop and one start of it inside it; the stop before its window's step container starts,
 *       the start after that step container died: so the only hand on it is its own window's;</li>
 *   <li>it runs when the interval ends (every window ends with its containers running);</li>
 * </ul>
 * and at the end: every held node is gone, every push ended applied (each module's report is {@code applied} for its
 * last push, and its containers run that spec, once each).
 *
 * <p>{@code -Dmesh.history.seed=N} replays the same sequence of operations (the interleaving with the processes'
 * own timing differs from run to run; the seed fixes what is done and when it is asked for).
 * {@code -Dmesh.history.soak=true} runs for ten minutes instead of about one ({@code -Dmesh.history.seconds=N} to
 * choose). It prints {@code history: seed=... operations=... violations=...}.
 */
@Tag("slow")
class HistoryCheckTest {
    private static final String SCHEDULE = "gc";
    /** One host id per run (one Docker engine is one host; unique so that no other test's daemon applies these modules). */
    private static final String HOST = "hist-" + Long.toHexString(System.nanoTime() & 0xffffff);
    private static final int DAEMONS = 1; // a second daemon of one host refuses to start (OneAgentPerHostTest)
    private static final String[] RESTART = {"always", "unless-stopped", "no"};
    private static final int MAX_WINDOWS_AT_ONCE = 2;

    @RegisterExtension
    final EnsembleExtension ensemble = new EnsembleExtension();

    /** One module of the run. */
    private static final class Mod {
        final int index;
        final String name;
        final String host;
        int storeMode;
        int apiMode;
        int revision;
        String lastPush;
        ChildJvm window;
        final List<ChildJvm> windows = new ArrayList<>();

        Mod(int index, String name, String host) {
            this.index = index;
            this.name = name;
            this.host = host;
        }

        String store() { return name + "-store"; }
        String api() { return name + "-api"; }
        boolean failingStep() { return index == 2; }

        String yaml() {
            String step = failingStep() ? "echo sweeping; sleep 1; echo no space left >&2; exit 2"
                    : "trap 'exit 143' TERM; test -d /data && sleep " + (1 + index) + " && echo swept";
            return "module: " + name + "\nhosts: [" + host + "]\ncontainers:\n"
                    + "  store:\n    image: " + BUSYBOX + "\n"
                    + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                    + "    env: {MODE: \"s" + storeMode + "\"}\n    network: host\n    stop-timeout: 2s\n"
                    + "    restart: " + RESTART[index % RESTART.length] + "\n"
                    + "    volumes: [\"" + name + "-data:/data\"]\n"
                    + "  api:\n    image: " + BUSYBOX + "\n"
                    + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                    + "    env: {MODE: \"a" + apiMode + "\"}\n    network: host\n    stop-timeout: 2s\n    restart: unless-stopped\n"
                    + "schedules:\n  " + SCHEDULE + ":\n    cron: \"30 3 * * *\"\n    timezone: UTC\n    while-stopped: [store]\n"
                    + "    step:\n      image: " + BUSYBOX + "\n      command: [sh, -c, \"" + step + "\"]\n"
                    + "      volumes-from: store\n    timeout: 1m\n";
        }
    }

    @Test
    void randomizedHistoryHasNoViolations() throws Exception {
        long seed = Long.getLong("mesh.history.seed", new SecureRandom().nextLong());
        boolean soak = Boolean.getBoolean("mesh.history.soak");
        Duration run = Duration.ofSeconds(Long.getLong("mesh.history.seconds", soak ? 600 : 40));
        // The operations (pushes + windows + applies) a history must have at least to say anything. The live sample of
        // applies below errs low (a report written twice between two looks counts once), never high, so a run it calls enough is.
        final int MIN_OPERATIONS = 200;
        System.out.printf("history: seed=%d run=%ds (replay with -Dmesh.history.seed=%d)%n", seed, run.toSeconds(), seed);
        Random random = new Random(seed);

        ZkEnsemble zk = ensemble.ensemble();
        ZkPaths paths = new ZkPaths(ZkPaths.DEFAULT_ROOT);
        Path dir = Files.createTempDirectory("mesh-history");
        List<Mod> mods = new ArrayList<>();
        for (int i = 0; i < 3; i++) mods.add(new Mod(i, TestDocker.uniqueModule("hx"), HOST));
        Set<String> names = new HashSet<>();
        mods.forEach(m -> names.add(m.name));
        List<ChildJvm> processes = new ArrayList<>();
        CuratorFramework client = ensemble.client();
        DockerEvents events = DockerEvents.record(names::contains);
        int pushes = 0, windows = 0;
        List<String> violations = new ArrayList<>();
        try {
            for (Mod m : mods) TestDocker.clean(m.name, m.name + "-data");
            long zxid0 = markerZxid(client);
            for (int i = 1; i <= DAEMONS; i++) {
                ChildJvm d = ChildJvm.agent("daemon-" + i, dir, List.of("run", "--host", HOST, "--zk", zk.connect(),
                        "--state-dir", dir.resolve("state-" + HOST).toString(), "--reconcile-interval", "1s", TestPolicy.HOST_NETWORK_FLAG));
                processes.add(d);
            }
            for (Mod m : mods) {
                push(client, paths, m);
                pushes++;
            }
            // windows begin once the modules exist on the host (a window of a module with nothing to hold fails its step)
            MeshStore first = new MeshStore(client, paths);
            for (Mod m : mods) {
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                        .until(() -> first.report(m.host, m.name).outcome() == ApplyOutcome.APPLIED);
            }

            // The operations: pushes and windows, at random, for the run's duration. On a loaded machine fewer fit in
            // the run (seed 1480032611032751115 at load 12: 126 pushes and 4 windows in 60 s, 46 applies; seed
            // 5476681749771945274 at load 15: 184 operations in 80 s): go on, bounded at three runs, until enough were
            // made, counting the applies as sampled from the reports (pushes coalesce into fewer applies, the more so
            // under load, so pushes alone do not tell).
            long end = System.nanoTime() + run.toNanos();
            long hardEnd = end + 2 * run.toNanos();
            Map<String, String> sampled = new HashMap<>();
            int applied = 0;
            while (System.nanoTime() < end || (pushes + windows + applied < MIN_OPERATIONS && System.nanoTime() < hardEnd)) {
                applied += sampleApplies(first, mods, sampled);
                Mod m = mods.get(random.nextInt(mods.size()));
                int dice = random.nextInt(100);
                if (dice < 70) {
                    if (random.nextBoolean()) m.storeMode++; else m.apiMode++;
                    push(client, paths, m);
                    pushes++;
                } else if (dice < 90) {
                    long open = mods.stream().filter(x -> x.window != null && x.window.isAlive()).count();
                    if ((m.window == null || !m.window.isAlive()) && open < MAX_WINDOWS_AT_ONCE) {
                        m.window = ChildJvm.agent("window-" + m.name + "-" + m.windows.size(), dir, List.of("window",
                                "--host", m.host, "--zk", zk.connect(), "--state-dir", dir.resolve("state-" + m.host).toString(),
                                "--module", m.name, "--schedule", SCHEDULE, TestPolicy.HOST_NETWORK_FLAG));
                        processes.add(m.window);
                        m.windows.add(m.window);
                        windows++;
                    }
                }
                Thread.sleep(120 + random.nextInt(260)); // deliberate: the seeded pace of the operations
            }

            // Drain: every window ends, every module lands its last push.
            for (Mod m : mods) {
                for (ChildJvm w : m.windows) {
                    int code = w.awaitExit(Duration.ofSeconds(120));
                    int expected = m.failingStep() ? 1 : 0;
                    if (code != expected) {
                        violations.add(w.name() + " exited " + code + " (expected " + expected + "): "
                                + w.lastJsonLine().orElse(tail(w.output())));
                    }
                }
            }
            MeshStore store = new MeshStore(client, paths);
            for (Mod m : mods) {
                try {
                    await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() -> {
                        ApplyReport r = store.report(m.host, m.name);
                        return r != null && r.outcome() == ApplyOutcome.APPLIED && m.lastPush.equals(r.push());
                    });
                } catch (ConditionTimeoutException e) {
                    violations.add("push " + m.lastPush + " of " + m.name + " did not end applied: " + store.report(m.host, m.name));
                }
                checkFinalContainers(m, violations);
            }
            for (ChildJvm p : processes) {
                if (p.name().startsWith("daemon") && !p.isAlive()) violations.add(p.name() + " died:\n" + tail(p.output()));
            }
            events.settle();

            // The records.
            List<ZkTxnLog.Change> changes = ZkTxnLog.read(zk, zxid0);
            List<Event> docker = events.all();
            List<HeldIntervals.Held> held = HeldIntervals.of(changes, paths, names, violations);
            for (HeldIntervals.Held h : held) HeldIntervals.check(h, docker, violations);
            int applies = countApplies(changes, paths, names);
            int operations = pushes + windows + applies;

            System.out.printf("history: seed=%d operations=%d (pushes=%d windows=%d applies=%d) held-intervals=%d docker-events=%d znode-changes=%d violations=%d%n",
                    seed, operations, pushes, windows, applies, held.size(), docker.size(), changes.size(), violations.size());
            violations.stream().limit(40).forEach(v -> System.out.println("history violation: " + v));
            assertThat(violations).as("violations (seed %d)", seed).isEmpty();
            assertThat(operations).as("operations").isGreaterThanOrEqualTo(MIN_OPERATIONS);
            assertThat(held).as("held intervals").isNotEmpty();
        } finally {
            for (ChildJvm p : processes) p.close();
            events.close();
            for (Mod m : mods) forget(client, paths, m);
            for (Mod m : mods) TestDocker.clean(m.name, m.name + "-data");
        }
    }

    /**
     * The checker is not blind: a rogue {@code docker start} of a held container in the middle of its window (what
     * the seed's bug does) is reported as a violation, from the same records.
     */
    @Test
    void theCheckerCatchesAPlantedViolation() throws Exception {
        ZkEnsemble zk = ensemble.ensemble();
        ZkPaths paths = new ZkPaths(ZkPaths.DEFAULT_ROOT);
        Path dir = Files.createTempDirectory("mesh-history-planted");
        Mod m = new Mod(1, TestDocker.uniqueModule("hx"), HOST);
        CuratorFramework client = ensemble.client();
        DockerEvents events = DockerEvents.record(m.name);
        List<ChildJvm> processes = new ArrayList<>();
        try {
            long zxid0 = markerZxid(client);
            push(client, paths, m);
            processes.add(ChildJvm.agent("daemon", dir, List.of("run", "--host", HOST, "--zk", zk.connect(),
                    "--state-dir", dir.resolve("state").toString(), "--reconcile-interval", "1s", TestPolicy.HOST_NETWORK_FLAG)));
            MeshStore store = new MeshStore(client, paths);
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> store.report(HOST, m.name).outcome() == ApplyOutcome.APPLIED);
            ChildJvm w = ChildJvm.agent("window", dir, List.of("window", "--host", HOST, "--zk", zk.connect(),
                    "--state-dir", dir.resolve("state").toString(), "--module", m.name, "--schedule", SCHEDULE, TestPolicy.HOST_NETWORK_FLAG));
            processes.add(w);
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).ignoreExceptions().until(() -> {
                InspectContainerResponse i = TestDocker.engine().inspect(m.store());
                return client.checkExists().forPath(paths.held(HOST, m.store())) != null && !Boolean.TRUE.equals(i.getState().getRunning());
            });
            TestDocker.engine().start(m.store());   // the rogue hand
            assertThat(w.awaitExit(Duration.ofSeconds(60))).isZero();
            events.settle();

            List<String> violations = new ArrayList<>();
            List<HeldIntervals.Held> held = HeldIntervals.of(ZkTxnLog.read(zk, zxid0), paths, Set.of(m.name), violations);
            assertThat(held).hasSize(1);
            for (HeldIntervals.Held h : held) HeldIntervals.check(h, events.all(), violations);
            System.out.println("history (planted): " + violations);
            assertThat(violations).anySatisfy(v -> assertThat(v).contains(m.store()).contains("before its window's step ended"));
        } finally {
            for (ChildJvm p : processes) p.close();
            events.close();
            forget(client, paths, m);
            TestDocker.clean(m.name, m.name + "-data");
        }
    }

    /** Deletes a module's desired node and report, so that no later daemon applies it again. */
    private static void forget(CuratorFramework client, ZkPaths paths, Mod m) {
        for (String p : List.of(paths.desired(m.name), paths.report(m.host, m.name))) {
            try {
                client.delete().deletingChildrenIfNeeded().forPath(p);
            } catch (Exception ignored) {
                // never written
            }
        }
    }

    private static void push(CuratorFramework client, ZkPaths paths, Mod m) throws Exception {
        m.revision++;
        DesiredRecord d = FaultFixture.setDesired(client, paths, m.yaml(), "r" + m.revision);
        m.lastPush = d.push();
    }

    private static long markerZxid(CuratorFramework client) throws Exception {
        String p = client.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath("/history-marker-");
        long z = client.checkExists().forPath(p).getCzxid();
        client.delete().forPath(p);
        return z;
    }

    /** Applies: report writes whose outcome or finish time changed (a window's result rewrites only lastWindow). */
    private static int countApplies(List<ZkTxnLog.Change> changes, ZkPaths paths, Set<String> modules) {
        Map<String, String> last = new TreeMap<>();
        int n = 0;
        for (ZkTxnLog.Change c : changes) {
            if (!c.path().startsWith(paths.reports() + "/") || c.data() == null) continue;
            String module = c.path().substring(c.path().lastIndexOf('/') + 1);
            if (!modules.contains(module)) continue;
            ApplyReport r = Json.read(c.data(), ApplyReport.class);
            if (r.outcome() != null && !applyKey(r).equals(last.put(c.path(), applyKey(r)))) n++;
        }
        return n;
    }

    /**
     * The applies since the last look, from each module's report now: a report whose {@link #applyKey} changed is one
     * more (two between looks count as one, so the sample errs low). A report not readable now is left to the next look.
     *
     * @param last by module, its key at the last look
     */
    private static int sampleApplies(MeshStore store, List<Mod> mods, Map<String, String> last) {
        int n = 0;
        for (Mod m : mods) {
            try {
                ApplyReport r = store.report(m.host, m.name);
                if (r != null && r.outcome() != null && !applyKey(r).equals(last.put(m.name, applyKey(r)))) n++;
            } catch (Exception notNow) {
                // no answer now: the next look
            }
        }
        return n;
    }

    /** What tells one apply's report from the next: a report rewritten with the same key is the same apply. */
    private static String applyKey(ApplyReport r) {
        return r.outcome() + "|" + r.finishedAt() + "|" + r.revision();
    }

    /** The module runs its last pushed spec: store and api once each, running, right env; no leftover, no step container. */
    private static void checkFinalContainers(Mod m, List<String> violations) {
        try {
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).ignoreExceptions().until(() -> {
                List<String> ids = TestDocker.engine().containersWithLabel(Labels.MODULE, m.name);
                if (ids.size() != 2) return false;
                for (String[] c : new String[][] {{m.store(), "MODE=s" + m.storeMode}, {m.api(), "MODE=a" + m.apiMode}}) {
                    InspectContainerResponse i = TestDocker.engine().inspect(c[0]);
                    if (i == null || !Boolean.TRUE.equals(i.getState().getRunning()) || !Arrays.asList(i.getConfig().getEnv()).contains(c[1])) return false;
                }
                return true;
            });
        } catch (ConditionTimeoutException e) {
            List<String> found = new ArrayList<>();
            for (String id : TestDocker.engine().containersWithLabel(Labels.MODULE, m.name)) {
                InspectContainerResponse i = TestDocker.engine().inspect(id);
                if (i != null) found.add(i.getName() + " running=" + i.getState().getRunning() + " env=" + Arrays.toString(i.getConfig().getEnv()));
            }
            violations.add(m.name + " does not run its last push (store s" + m.storeMode + ", api a" + m.apiMode + "): " + found);
        }
    }

    private static String tail(String s) {
        List<String> lines = s.lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
    }
}
