package io.mesh.window;

import com.github.dockerjava.api.model.Event;
import io.mesh.agent.AgentMain;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.AgentDaemonExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.TestPolicy;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowRecord;
import io.mesh.wire.WindowResult;
import io.mesh.zk.MeshStore;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The seed's race (SPEC.md, "The problem"): a window holds the store's registry stopped while its step runs, and a
 * push changing the registry arrives. Nobody but the window may stop, start, create or destroy the registry until
 * the window ends; the push reads {@code deferred} naming the window; afterwards the new spec lands with no new push.
 * Real Docker engine, real ZooKeeper; the window runs in this JVM's daemon or in a second process.
 */
@Tag("slow")
class WindowRaceTest {
    private static final String HOST = "host-a";
    @RegisterExtension
    @Order(1)
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    /** Reconciles every 10 minutes: landing after the window must not depend on it. */
    @RegisterExtension
    @Order(2)
    final AgentDaemonExtension agent = new AgentDaemonExtension(zk, HOST);
    private final DockerEngine docker = TestDocker.engine();
    private final String module = TestDocker.uniqueModule("wr");
    private final String registry = module + "-registry";

    @AfterEach
    void tearDown() {
        agent.close(); // before its containers go, so that it does not make them again
        TestDocker.clean(module, module + "-data");
    }

    private String store(String mode, int stepSeconds) {
        return "module: " + module + "\nhosts: [" + HOST + "]\ncontainers:\n"
                + "  registry:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    env: {MODE: \"" + mode + "\"}\n    network: host\n    stop-timeout: 2s\n"
                + "    volumes: [\"" + module + "-data:/data\"]\n"
                + "schedules:\n  garbage-collect:\n    cron: \"30 3 * * *\"\n    timezone: UTC\n    while-stopped: [registry]\n"
                + "    step:\n      image: " + BUSYBOX + "\n"
                + "      command: [sh, -c, \"test -d /data && sleep " + stepSeconds + " && echo swept /data\"]\n"
                + "      volumes-from: registry\n    timeout: 1m\n";
    }

    private ApplyReport report() throws Exception {
        return new MeshStore(zk.client(), zk.paths()).report(HOST, module);
    }

    private ApplyReport awaitReport(ApplyOutcome outcome, String revision) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> {
            ApplyReport r = report();
            return r != null && r.outcome() == outcome && revision.equals(r.revision());
        });
        try {
            return report();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aPushDuringAWindowIsDeferredAndLandsAfterItWithoutAnotherPush() throws Exception {
        race(() -> agent.daemon().runWindow(module, "garbage-collect"), false);
    }

    @Test
    void theSameWhenTheWindowRunsInASecondProcess() throws Exception {
        race(() -> {
            try {
                String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
                Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), AgentMain.class.getName(),
                        "window", "--host", HOST, "--zk", zk.connect(), "--module", module, "--schedule", "garbage-collect",
                        "--state-dir", agent.stateDir().toString(), TestPolicy.HOST_NETWORK_FLAG)
                        .redirectErrorStream(true).start();
                return p.onExit().thenApply(done -> {
                    String out = new String(readAll(done), StandardCharsets.UTF_8);
                    assertThat(done.exitValue()).as("mesh-agent window output:\n%s", out).isZero();
                    String json = out.lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b).orElseThrow();
                    return Json.read(json.getBytes(StandardCharsets.UTF_8), WindowResult.class);
                });
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }, true);
    }

    /**
     * A window run by a process that does not share the daemon's --state-dir, killed with SIGKILL mid-step: its
     * journal is out of the daemon's sight, its held node goes with its session, yet the daemon never recreates the
     * held container; Docker's own record of the window (the step container's labels) tells it the window is open.
     * Once the step ends, the daemon finishes the window (same container started again) and lands the push.
     */
    @Test
    void aWindowProcessWithItsOwnStateDirKilledMidStepLeavesNothingToRecreate() throws Exception {
        zk.setDesired(store("one", 25), "r1");
        awaitReport(ApplyOutcome.APPLIED, "r1");
        String id = docker.inspect(registry).getId();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process window = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), AgentMain.class.getName(),
                "window", "--host", HOST, "--zk", zk.connect(), "--module", module, "--schedule", "garbage-collect",
                "--state-dir", Files.createTempDirectory("mesh-other-state").toString(), TestPolicy.HOST_NETWORK_FLAG)
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> !docker.client().listContainersCmd()
                    .withLabelFilter(Map.of("mesh.module", module, "mesh.schedule", "garbage-collect")).exec().isEmpty()
                    && !Boolean.TRUE.equals(docker.inspect(registry).getState().getRunning()));
            Instant killed = Instant.now();
            window.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL: no clean-up of any kind
            zk.setDesired(store("two", 25), "r2");

            // Its held node goes with its session (15 s); the daemon still waits for the step, then finishes it.
            ApplyReport landed = awaitReport(ApplyOutcome.APPLIED, "r2");
            assertThat(landed.lastWindow()).isNotNull();
            assertThat(landed.lastWindow().outcome()).isEqualTo(WindowOutcome.RECOVERED);
            assertThat(landed.lastWindow().logTail()).contains("swept /data");

            List<Event> events = TestDocker.events(module, killed, Instant.now());
            long stepDied = -1, firstStart = -1, firstDestroy = -1;
            for (Event e : events) {
                if (e.getTimeNano() == null || e.getTimeNano() < killed.toEpochMilli() * 1_000_000L) continue;
                String name = TestDocker.name(e), action = TestDocker.action(e);
                if (name != null && name.startsWith(module + ".garbage-collect.") && action.equals("die")) stepDied = e.getTimeNano();
                if (registry.equals(name) && action.equals("start") && firstStart < 0) {
                    firstStart = e.getTimeNano();
                    assertThat(e.getId()).as("the held container is started again, not a new one").isEqualTo(id);
                }
                if (id.equals(e.getId()) && action.equals("destroy") && firstDestroy < 0) firstDestroy = e.getTimeNano();
            }
            assertThat(stepDied).as("the step ran to its end").isPositive();
            assertThat(firstStart).as("the held container started only after the step died").isGreaterThan(stepDied);
            assertThat(firstDestroy).as("and was replaced (r2) only after it ran again").isGreaterThan(firstStart);
            assertThat(docker.client().listContainersCmd().withShowAll(true)
                    .withLabelFilter(Map.of("mesh.module", module, "mesh.schedule", "garbage-collect")).exec()).isEmpty();
        } finally {
            window.destroyForcibly();
        }
    }

    private static byte[] readAll(Process p) {
        try {
            return p.getInputStream().readAllBytes();
        } catch (java.io.IOException e) {
            return new byte[0];
        }
    }

    private void race(Supplier<Future<WindowResult>> openWindow, boolean otherProcess) throws Exception {
        zk.setDesired(store("one", 6), "r1");
        ApplyReport first = awaitReport(ApplyOutcome.APPLIED, "r1");
        assertThat(first.containers()).extracting(ContainerResult::action).containsExactly(ContainerAction.CREATED);
        String id = docker.inspect(registry).getId();
        Instant t0 = Instant.now();

        Future<WindowResult> window = openWindow.get();

        // Held and window znodes carry SPEC's JSON while the window is open.
        String heldPath = zk.paths().held(HOST, registry);
        await().atMost(Duration.ofSeconds(30)).until(() -> zk.client().checkExists().forPath(heldPath) != null);
        HeldRecord held = Json.read(zk.client().getData().forPath(heldPath), HeldRecord.class);
        assertThat(held.host()).isEqualTo(HOST);
        assertThat(held.module()).isEqualTo(module);
        assertThat(held.container()).isEqualTo(registry);
        assertThat(held.containerId()).isEqualTo(id);
        assertThat(held.schedule()).isEqualTo("garbage-collect");
        assertThat(held.window()).startsWith("w-");
        assertThat(held.since()).isAfterOrEqualTo(t0.minusSeconds(1));
        assertThat(held.by().pid()).isPositive();
        assertThat(held.by().process()).isEqualTo(otherProcess ? "mesh-agent window" : "mesh-agent run (test)");
        assertThat(zk.client().checkExists().forPath(heldPath).getEphemeralOwner()).isNotZero();
        String rawHeld = new String(zk.client().getData().forPath(heldPath), StandardCharsets.UTF_8);
        assertThat(rawHeld).doesNotContain("\n").contains("\"containerId\":\"" + id + "\"");
        WindowRecord w = Json.read(zk.client().getData().forPath(zk.paths().window(HOST, module)), WindowRecord.class);
        assertThat(w.window()).isEqualTo(held.window());
        assertThat(w.held()).containsExactly(registry);
        assertThat(w.schedule()).isEqualTo("garbage-collect");
        await().atMost(Duration.ofSeconds(20)).until(() -> !Boolean.TRUE.equals(docker.inspect(registry).getState().getRunning()));

        // The push that changes the registry arrives mid-window.
        zk.setDesired(store("two", 6), "r2");
        ApplyReport deferred = awaitReport(ApplyOutcome.DEFERRED, "r2");
        assertThat(deferred.window()).isNotNull();
        assertThat(deferred.window().schedule()).isEqualTo("garbage-collect");
        assertThat(deferred.window().window()).isEqualTo(held.window());
        assertThat(deferred.window().held()).containsExactly(registry);
        assertThat(deferred.containers()).singleElement().satisfies(c -> {
            assertThat(c.action()).isEqualTo(ContainerAction.HELD);
            assertThat(c.container()).isEqualTo(registry);
            assertThat(c.reasons()).singleElement().asString().startsWith("held by window garbage-collect since ");
        });
        // Still held, still the same stopped container.
        assertThat(docker.inspect(registry).getId()).isEqualTo(id);
        assertThat(docker.inspect(registry).getState().getRunning()).isFalse();

        WindowResult result = window.get(2, TimeUnit.MINUTES);
        assertThat(result.outcome()).isEqualTo(WindowOutcome.SUCCEEDED);
        assertThat(result.exitCode()).isZero();
        assertThat(result.logTail()).contains("swept /data");
        assertThat(zk.client().checkExists().forPath(heldPath)).isNull();
        assertThat(zk.client().checkExists().forPath(zk.paths().window(HOST, module))).isNull();

        // The new spec lands after the window, with no further push.
        ApplyReport landed = awaitReport(ApplyOutcome.APPLIED, "r2");
        assertThat(landed.window()).isNull();
        assertThat(landed.containers()).singleElement().satisfies(c -> {
            assertThat(c.action()).isEqualTo(ContainerAction.RECREATED);
            assertThat(c.reasons()).containsExactly("env: changed MODE");
        });
        assertThat(landed.lastWindow()).isNotNull();
        assertThat(landed.lastWindow().window()).isEqualTo(held.window());
        assertThat(docker.inspect(registry).getState().getRunning()).isTrue();
        assertThat(docker.inspect(registry).getConfig().getEnv()).contains("MODE=two");

        // Docker's own record: during the window the registry was stopped once and started once, by the window,
        // after the step ended; nobody created or destroyed it. The same container was started again.
        List<Event> events = TestDocker.events(module, t0, Instant.now());
        long windowEnd = (result.finishedAt().toEpochMilli() + 1) * 1_000_000L; // finishedAt is truncated to the millisecond
        long windowStart = t0.toEpochMilli() * 1_000_000L;
        List<String> registryDuringWindow = new ArrayList<>();
        long stepDied = -1, registryStarted = -1;
        for (Event e : events) {
            if (e.getTimeNano() == null || e.getTimeNano() < windowStart || e.getTimeNano() > windowEnd) continue;
            String name = TestDocker.name(e);
            String action = TestDocker.action(e);
            if (registry.equals(name)) {
                registryDuringWindow.add(action);
                assertThat(e.getId()).as("event %s on %s", action, name).isEqualTo(id);
                if (action.equals("start")) registryStarted = e.getTimeNano();
            } else if (name != null && name.startsWith(module + ".garbage-collect.") && action.equals("die")) {
                stepDied = e.getTimeNano();
                assertThat(e.getActor().getAttributes()).containsEntry("mesh.window", held.window());
            }
        }
        assertThat(registryDuringWindow).doesNotContain("create", "destroy", "rename");
        assertThat(registryDuringWindow.stream().filter("start"::equals).count()).isEqualTo(1);
        assertThat(registryDuringWindow).contains("stop", "die");
        assertThat(stepDied).isPositive();
        assertThat(registryStarted).isGreaterThan(stepDied);
        assertThat(Map.of("lock children", zk.client().getChildren().forPath(zk.paths().lock(module, HOST))))
                .extractingByKey("lock children").asList().isEmpty();
    }
}
