package io.mesh.faults;

import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.model.Event;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.EnsembleExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.TestPolicy;
import io.mesh.testing.ZkEnsemble;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import io.mesh.wire.ZkPaths;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What every fault test shares, as a JUnit 5 extension: the real 3-server ensemble ({@link EnsembleExtension}:
 * {@link ZkEnsemble#shared()}, healed before and after each test); a Curator client of the test's own to observe
 * znodes; a unique module and host id; mesh processes as separate JVMs ({@code mesh-agent run} and
 * {@code mesh-agent window}) that are always stopped afterwards; Docker's events for the module recorded live; and the
 * module's containers and volume removed before and after. A test method annotated {@link DaemonWithR1} also gets a
 * daemon that has applied revision {@code r1}, as a {@link ChildJvm} parameter.
 *
 * <pre>{@code
 * @RegisterExtension final FaultFixture fx = new FaultFixture();
 *
 * @Test
 * @DaemonWithR1(stepSeconds = 12)
 * void killedMidStep(ChildJvm daemon) { ChildJvm w = fx.window("window"); ... }
 * }</pre>
 */
final class FaultFixture implements BeforeEachCallback, AfterEachCallback, ParameterResolver {
    /** This test's host id: unique, so that no daemon of this test applies another test's module (one Docker engine). */
    String host;
    static final String SCHEDULE = "garbage-collect";
    private static final AtomicLong PUSHES = new AtomicLong(System.currentTimeMillis() % 1_000_000L);

    private final EnsembleExtension ensemble = new EnsembleExtension();
    ZkEnsemble zk;
    CuratorFramework client;
    final ZkPaths paths = new ZkPaths(ZkPaths.DEFAULT_ROOT);
    MeshStore store;
    DockerEngine docker;
    String module;
    String registry;
    String web;
    Path dir;
    Path stateDir;
    DockerEvents events;
    final List<ChildJvm> processes = new ArrayList<>();
    /** The daemon of a test annotated {@link DaemonWithR1}, or null. */
    private ChildJvm daemonWithR1;

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        ensemble.start();
        zk = ensemble.ensemble();
        client = ensemble.client();
        docker = TestDocker.engine();
        module = TestDocker.uniqueModule("f");
        host = "host-" + module;
        registry = module + "-registry";
        web = module + "-web";
        TestDocker.clean(module, module + "-data");
        dir = Files.createTempDirectory("mesh-fault-" + context.getTestMethod().map(m -> m.getName()).orElse("t"));
        stateDir = dir.resolve("state");
        store = new MeshStore(client, paths);
        events = DockerEvents.record(module);
        DaemonWithR1 d = context.getRequiredTestMethod().getAnnotation(DaemonWithR1.class);
        if (d != null) daemonWithR1 = daemonWithR1Applied(d.name(), d.reconcile(), d.restart(), d.stepSeconds(), d.timeout());
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        for (ChildJvm p : processes) p.close();
        if (events != null) events.close();
        try {
            if (zk != null) zk.heal();
            // later tests' daemons must not see this module (they have other host ids, and it goes anyway)
            if (client != null) {
                for (String p : List.of(paths.desired(module), paths.report(host, module))) {
                    try {
                        client.delete().deletingChildrenIfNeeded().forPath(p);
                    } catch (KeeperException.NoNodeException ignored) {
                        // never written
                    }
                }
            }
        } finally {
            ensemble.close();
            if (module != null) TestDocker.clean(module, module + "-data");
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == ChildJvm.class
                && parameter.getDeclaringExecutable().isAnnotationPresent(DaemonWithR1.class);
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return daemonWithR1;
    }

    /**
     * The start most fault tests share ({@link DaemonWithR1}): desired state {@code r1} (mode {@code one}, the given
     * restart policy, a step that sleeps {@code stepSeconds}, the schedule's timeout), a daemon reconciling every
     * {@code reconcile}, and r1 applied by it (within 60 s).
     */
    private ChildJvm daemonWithR1Applied(String name, String reconcile, String restart, int stepSeconds, String timeout) throws Exception {
        setDesired(yaml("one", restart, sleepStep(stepSeconds), timeout), "r1");
        ChildJvm p = daemon(name, reconcile);
        awaitApplied("r1", Duration.ofSeconds(60));
        return p;
    }

    /** Starts {@code mesh-agent run} for {@link #host} in its own JVM. */
    ChildJvm daemon(String name, String reconcile) throws Exception {
        return daemon(name, reconcile, zk.connect());
    }

    /** Starts {@code mesh-agent run} for {@link #host} in its own JVM, against the given servers. */
    ChildJvm daemon(String name, String reconcile, String connect) throws Exception {
        ChildJvm p = ChildJvm.agent(name, dir, List.of("run", "--host", host, "--zk", connect,
                "--state-dir", stateDir.toString(), "--reconcile-interval", reconcile, TestPolicy.HOST_NETWORK_FLAG));
        processes.add(p);
        return p;
    }

    /**
     * Starts {@code mesh-agent run} for {@link #host} in its own JVM whose clock reads {@code offset} off (such as
     * {@code +5m}), with libfaketime preloaded (Debian's {@code libfaketime}; deploy/dev/test.sh installs it).
     */
    ChildJvm daemonWithClock(String name, String reconcile, String offset) throws Exception {
        Path lib = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");
        assertThat(lib).as("libfaketime (apt-get install libfaketime)").exists();
        ChildJvm p = ChildJvm.start(name, dir, "192m", io.mesh.agent.AgentMain.class.getName(), List.of("run", "--host", host, "--zk", zk.connect(),
                "--state-dir", stateDir.toString(), "--reconcile-interval", reconcile, TestPolicy.HOST_NETWORK_FLAG),
                java.util.Map.of("LD_PRELOAD", lib.toString(), "FAKETIME", offset, "FAKETIME_DONT_FAKE_MONOTONIC", "1",
                        "FAKETIME_FORCE_MONOTONIC_FIX", "0")); // without it the JVM starts ten times slower
        processes.add(p);
        return p;
    }

    /** Starts {@code mesh-agent window} for the module's schedule in its own JVM. */
    ChildJvm window(String name) throws Exception {
        ChildJvm p = ChildJvm.agent(name, dir, List.of("window", "--host", host, "--zk", zk.connect(),
                "--state-dir", stateDir.toString(), "--module", module, "--schedule", SCHEDULE, TestPolicy.HOST_NETWORK_FLAG));
        processes.add(p);
        return p;
    }

    /**
     * The test module: {@code registry} (held by the window, with the module's volume) and {@code web} (never held).
     *
     * @param mode     an env value; changing it changes both containers' specs
     * @param restart  the registry's restart policy
     * @param step     the step's shell command
     * @param timeout  the schedule's timeout, such as {@code 1m}
     */
    String yaml(String mode, String restart, String step, String timeout) {
        return yaml(mode, restart, step, timeout, false);
    }

    /**
     * As {@link #yaml(String, String, String, String)}; with {@code slowStop} the registry ignores SIGTERM and has a
     * 10 s stop-timeout, so that stopping it takes 10 s.
     */
    String yaml(String mode, String restart, String step, String timeout, boolean slowStop) {
        return yaml(mode, restart, step, timeout, slowStop ? "while true; do sleep 1; done" : "trap 'exit 0' TERM; while true; do sleep 1; done",
                slowStop ? 10 : 2);
    }

    /**
     * As {@link #yaml(String, String, String, String)}, with the registry's shell command and stop-timeout given.
     *
     * @param registryCommand the registry's {@code sh -c} command (double quotes must not appear in it)
     * @param stopSeconds     the registry's stop-timeout in seconds
     */
    String yaml(String mode, String restart, String step, String timeout, String registryCommand, int stopSeconds) {
        return "module: " + module + "\nhosts: [" + host + "]\ncontainers:\n"
                + "  registry:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"" + registryCommand + "\"]\n"
                + "    env: {MODE: \"" + mode + "\"}\n    network: host\n    stop-timeout: " + stopSeconds + "s"
                + "\n    restart: " + restart + "\n"
                + "    volumes: [\"" + module + "-data:/data\"]\n"
                + "  web:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    env: {MODE: \"" + mode + "\"}\n    network: host\n    stop-timeout: 2s\n"
                + "schedules:\n  " + SCHEDULE + ":\n    cron: \"30 3 * * *\"\n    timezone: UTC\n    while-stopped: [registry]\n"
                + "    step:\n      image: " + BUSYBOX + "\n"
                + "      command: [sh, -c, \"" + step + "\"]\n"
                + "      volumes-from: registry\n    timeout: " + timeout + "\n";
    }

    /**
     * A step that runs {@code seconds} and succeeds; it exits within a second of SIGTERM (so that a dockerd shutdown
     * does not wait for it).
     */
    static String sleepStep(int seconds) {
        return "trap 'exit 143' TERM; test -d /data && i=0 && while [ $i -lt " + seconds + " ]; do sleep 1; i=$((i+1)); done && echo swept /data";
    }

    /** Writes {@code /mesh/desired/<module>} as the coordinator would. */
    DesiredRecord setDesired(String yaml, String revision) throws Exception {
        return setDesired(client, paths, yaml, revision);
    }

    /** Writes a desired node through the given client, with a fresh push id. */
    static DesiredRecord setDesired(CuratorFramework c, ZkPaths p, String yaml, String revision) throws Exception {
        ModuleSpec spec = new ManifestParser().parse(yaml).get(0);
        DesiredRecord d = new DesiredRecord(spec.module(), revision, ZkPaths.pushName(PUSHES.incrementAndGet()), spec);
        String path = p.desired(spec.module());
        try {
            c.setData().forPath(path, Json.bytes(d));
        } catch (KeeperException.NoNodeException e) {
            c.create().creatingParentsIfNeeded().forPath(path, Json.bytes(d));
        }
        return d;
    }

    /**
     * One apply of the module in this JVM (io.mesh.apply.Applier), for tests whose subject is not the daemon; its policy
     * allows the host's network, as the fixture's daemons' does.
     *
     * @return the report
     */
    ApplyReport applyInProcess() throws Exception {
        return new io.mesh.apply.Applier(io.mesh.window.HostContext.of(store, docker, host, ProcessRef.current("fault test"),
                new io.mesh.window.WindowJournal(stateDir)).withPolicy(TestPolicy.HOST_NETWORK), Duration.ofSeconds(2))
                .apply(module, () -> false);
    }

    /** @return the module's report, or null */
    ApplyReport report() throws Exception {
        return store.report(host, module);
    }

    /** Waits (bounded) for a report that passes the predicate; returns it. */
    ApplyReport awaitReport(Duration within, Predicate<ApplyReport> ok) {
        ApplyReport[] last = new ApplyReport[1];
        await().atMost(within).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(() -> {
            last[0] = report();
            return last[0] != null && ok.test(last[0]);
        });
        return last[0];
    }

    /** Waits (bounded) for an {@code applied} report of the given revision. */
    ApplyReport awaitApplied(String revision, Duration within) {
        return awaitReport(within, r -> r.outcome() == ApplyOutcome.APPLIED && revision.equals(r.revision()));
    }

    /** @return the registry's held node on this host: {@code /mesh/held/<host>/<registry>} */
    String heldNode() { return paths.held(host, registry); }

    /** @return the module's window node on this host: {@code /mesh/windows/<host>/<module>} */
    String windowNode() { return paths.window(host, module); }

    /** @return this host's agent node: {@code /mesh/agents/<host>} */
    String agentNode() { return paths.agent(host); }

    /** @return true when the path exists (false when ZooKeeper cannot say) */
    boolean exists(String path) {
        try {
            return client.checkExists().forPath(path) != null;
        } catch (Exception e) {
            return false;
        }
    }

    /** @return the stat of a path, or null */
    Stat stat(String path) throws Exception {
        return client.checkExists().forPath(path);
    }

    /** @return the container's inspect, or null */
    InspectContainerResponse inspect(String name) {
        return docker.inspect(name);
    }

    /** @return true when the named container exists and runs */
    boolean running(String name) {
        InspectContainerResponse i = docker.inspect(name);
        return i != null && Boolean.TRUE.equals(i.getState().getRunning());
    }

    /** @return the module's step containers (label {@code mesh.window}) that exist now */
    List<String> stepContainers() {
        return docker.containersWithLabel(Labels.MODULE, module).stream()
                .filter(id -> {
                    InspectContainerResponse i = docker.inspect(id);
                    return i != null && i.getConfig().getLabels() != null && i.getConfig().getLabels().containsKey(Labels.WINDOW);
                }).toList();
    }

    /** @return the step containers of the module that run now */
    List<String> runningStepContainers() {
        return stepContainers().stream().filter(id -> {
            InspectContainerResponse i = docker.inspect(id);
            return i != null && Boolean.TRUE.equals(i.getState().getRunning());
        }).toList();
    }

    /** @return the Docker names of the module's managed containers (step containers excluded), sorted */
    List<String> managedNames() {
        return docker.moduleContainers(module).stream().map(o -> o.dockerName()).sorted().toList();
    }

    /** Waits (bounded) until the module has exactly registry and web, both running, with the revision's spec. */
    void awaitConverged(String mode, Duration within) {
        await().atMost(within).pollInterval(Duration.ofMillis(200)).ignoreExceptions().untilAsserted(() -> {
            assertThat(managedNames()).containsExactly(registry, web);
            for (String n : List.of(registry, web)) {
                InspectContainerResponse i = docker.inspect(n);
                assertThat(i.getState().getRunning()).as("%s running", n).isTrue();
                assertThat(i.getConfig().getEnv()).as("%s env", n).contains("MODE=" + mode);
            }
        });
    }

    /** Events of one container (by id) among the recorded ones since {@code from}. */
    List<Event> eventsOf(String containerId, Instant from) {
        return events.since(from).stream().filter(e -> containerId.equals(e.getId())).toList();
    }

    /** The actions among events. */
    static List<String> actions(List<Event> events) {
        return events.stream().map(TestDocker::action).toList();
    }

    /** Lifecycle actions that change a container: what nobody but its window may do to a held one. */
    static final Set<String> TOUCH = Set.of("create", "destroy", "start", "stop", "rename", "restart");

    /** The window result a {@code mesh-agent window} process printed. */
    static WindowResult result(ChildJvm window) {
        String line = window.lastJsonLine().orElseThrow(() -> new AssertionError("no result line from " + window + ":\n" + window.output()));
        return Json.read(line.getBytes(StandardCharsets.UTF_8), WindowResult.class);
    }

    /** Lock children of the module's lock on {@link #host}; empty when the lock node is absent. */
    List<String> lockChildren() throws Exception {
        try {
            return client.getChildren().forPath(paths.lock(module, host));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    /** Runs a call until it returns instead of throwing (ZooKeeper connection trouble), bounded; @return what it returned */
    static <T> T retry(Duration within, Callable<T> call) {
        AtomicReference<T> value = new AtomicReference<>();
        await("a call that answers").atMost(within).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                .until(() -> {
                    value.set(call.call());
                    return true;
                });
        return value.get();
    }

    /**
     * @return the open window's id, read from the held node of the registry (waits for it, bounded: 90 s, since the
     *         window is a JVM of its own that starts, connects and takes the lock first; in a full run, four test JVMs
     *         and their child JVMs on two cores, a child daemon took 26 s from its start to its first apply, and a
     *         window missed a 30 s bound before it logged anything after its first line)
     */
    String awaitHeldWindowId() {
        String[] id = new String[1];
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(50)).ignoreExceptions().until(() -> {
            id[0] = Json.read(client.getData().forPath(heldNode()), HeldRecord.class).window();
            return id[0] != null;
        });
        return id[0];
    }

    /** The window journal the window's process keeps under --state-dir. */
    Path journal() {
        return stateDir.resolve("windows").resolve(module + ".json");
    }

    /**
     * After a window's process died: the window is finished or recovered. The registry runs again (the same
     * container, never created, destroyed or renamed since {@code t0}) and keeps running; no step container runs;
     * the held and window znodes and the journal are gone; the report's {@code lastWindow} names the window.
     */
    void assertRecovered(String id, Instant t0, String windowId, Duration within) throws Exception {
        await().atMost(within).pollInterval(Duration.ofMillis(200)).ignoreExceptions().untilAsserted(() -> {
            assertThat(running(registry)).as("registry running").isTrue();
            assertThat(exists(heldNode())).as("held node gone").isFalse();
            assertThat(exists(windowNode())).as("window node gone").isFalse();
            assertThat(runningStepContainers()).as("running step containers").isEmpty();
            assertThat(Files.exists(journal())).as("journal %s gone", journal()).isFalse();
        });
        sleep(Duration.ofSeconds(2)); // deliberate: a quiet period in which nobody may stop it again
        assertThat(running(registry)).as("registry still running").isTrue();
        assertThat(inspect(registry).getId()).isEqualTo(id);
        ApplyReport r = awaitReport(Duration.ofSeconds(30), x -> x.lastWindow() != null && windowId.equals(x.lastWindow().window()));
        assertThat(r.lastWindow().held()).containsExactly(registry);
        assertThat(r.lastWindow().outcome()).as("lastWindow %s", r.lastWindow()).isEqualTo(WindowOutcome.RECOVERED);
        events.settle();
        List<Event> touched = events.since(t0).stream()
                .filter(e -> id.equals(e.getId()) || registry.equals(io.mesh.testing.TestDocker.name(e))
                        || String.valueOf(io.mesh.testing.TestDocker.name(e)).startsWith(registry + ".mesh-"))
                .toList();
        assertThat(actions(touched)).as("events of the held container:\n%s", DockerEvents.describe(touched))
                .doesNotContain("create", "destroy", "rename");
    }

    /** @return a zxid at least as new as every change made before this call (from a marker node's creation) */
    long zxidNow() throws Exception {
        String path = client.create().withMode(org.apache.zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL).forPath("/zxid-marker-");
        long zxid = client.checkExists().forPath(path).getCzxid();
        client.delete().forPath(path);
        return zxid;
    }

    /** Reports written to the module's report node since a zxid, in order, from the ensemble's transaction log. */
    List<ApplyReport> reportHistory(long fromZxid) throws Exception {
        String path = paths.report(host, module);
        return io.mesh.testing.ZkTxnLog.read(zk, fromZxid).stream()
                .filter(c -> c.path().equals(path) && c.data() != null)
                .map(c -> Json.read(c.data(), ApplyReport.class)).toList();
    }

    /**
     * The held intervals of this module since a zxid (ZooKeeper's transaction log), each checked against the recorded
     * Docker events by the history checker's rule ({@link HeldIntervals}); the violations found are added to
     * {@code violations}. Settles the event stream first.
     */
    List<HeldIntervals.Held> checkHeldIntervals(long fromZxid, List<String> violations) throws Exception {
        events.settle();
        List<HeldIntervals.Held> held = HeldIntervals.of(io.mesh.testing.ZkTxnLog.read(zk, fromZxid), paths, Set.of(module), violations);
        for (HeldIntervals.Held h : held) HeldIntervals.check(h, events.all(), violations);
        return held;
    }

    /**
     * Sets a container's restart policy as {@code docker update --restart} does, checked by an inspect. The policy's
     * name is sent spelled out: docker-java's {@code RestartPolicy.noRestart()} sends an empty name, which dockerd
     * ignores (SPEC.md, "Notes").
     *
     * @param id     container id or name
     * @param policy {@code no}, {@code always}, {@code unless-stopped}, {@code on-failure} or {@code on-failure:N}
     */
    void setRestartPolicy(String id, String policy) throws Exception {
        String name = policy.contains(":") ? policy.substring(0, policy.indexOf(':')) : policy;
        int max = policy.contains(":") ? Integer.parseInt(policy.substring(policy.indexOf(':') + 1)) : 0;
        com.github.dockerjava.api.model.RestartPolicy p = new com.fasterxml.jackson.databind.ObjectMapper().readValue(
                "{\"Name\":\"" + name + "\",\"MaximumRetryCount\":" + max + "}", com.github.dockerjava.api.model.RestartPolicy.class);
        docker.client().updateContainerCmd(id).withRestartPolicy(p).exec();
        assertThat(restartPolicy(id)).as("restart policy of %s after docker update", id).isEqualTo(policy);
    }

    /** @return a container's restart policy as an inspect shows it: {@code always}, {@code on-failure:3}, {@code no} ... */
    String restartPolicy(String id) {
        com.github.dockerjava.api.model.RestartPolicy p = inspect(id).getHostConfig().getRestartPolicy();
        String name = p == null || p.getName() == null || p.getName().isEmpty() ? "no" : p.getName();
        Integer max = p == null ? null : p.getMaximumRetryCount();
        return max != null && max > 0 ? name + ":" + max : name;
    }

    /** @return the pid in each lock child's data (who holds or waits for the module lock on {@link #host}), in order */
    List<Long> lockChildPids() throws Exception {
        List<Long> out = new ArrayList<>();
        List<String> children = new ArrayList<>(lockChildren());
        children.sort(java.util.Comparator.comparing(c -> c.substring(c.lastIndexOf('-') + 1)));
        for (String c : children) {
            try {
                byte[] data = client.getData().forPath(paths.lock(module, host) + "/" + c);
                out.add(Json.MAPPER.readTree(data).path("pid").asLong(-1));
            } catch (KeeperException.NoNodeException gone) {
                // released meanwhile
            }
        }
        return out;
    }

    /** @return the time of an event, in epoch nanoseconds (dockerd's clock, the same machine's) */
    static long nanos(Event e) {
        return e.getTimeNano() == null ? 0 : e.getTimeNano();
    }

    /** @return the recorded events of the module's step containers (label {@code mesh.window}) since {@code from} */
    List<Event> stepEvents(Instant from) {
        return events.since(from).stream().filter(e -> e.getActor() != null && e.getActor().getAttributes() != null
                && e.getActor().getAttributes().containsKey(Labels.WINDOW)).toList();
    }

    /** Lets time pass on purpose (an outage's length, a quiet period): not a wait for a condition, which awaits. */
    static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
