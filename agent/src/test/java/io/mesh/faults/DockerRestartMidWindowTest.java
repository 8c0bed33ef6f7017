package io.mesh.faults;

import com.github.dockerjava.api.model.Event;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.RestartPolicy;
import io.mesh.testing.ChildJvm;
import io.mesh.testing.DockerEvents;
import io.mesh.testing.Dockerd;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.mesh.faults.FaultFixture.SCHEDULE;
import static io.mesh.faults.FaultFixture.actions;
import static io.mesh.faults.FaultFixture.nanos;
import static io.mesh.faults.FaultFixture.sleepStep;
import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fault 9 (docs/failure-model.md): Docker's own restarts are neutralised for every policy: dockerd
 * restarts in the middle of a window whose held containers have each policy that dockerd applies when it starts:
 * <ul>
 *   <li>{@code registry}, {@code restart: always}: dockerd starts a manually stopped {@code always} container when it
 *       starts (the seed's bug by another road);</li>
 *   <li>{@code cache}, {@code restart: on-failure} (with a maximum retry count of 3, set by {@code docker update}),
 *       whose process ignores SIGTERM, so the window's stop ends in SIGKILL: exit 137, a failure dockerd restarts;</li>
 *   <li>{@code index}, {@code restart: unless-stopped}, which exited by itself (killed from outside Docker) before
 *       the window, so it is not marked manually stopped and dockerd starts it.</li>
 * </ul>
 * Each must stay stopped after dockerd is back (an inspect; a container outside mesh with {@code restart: always}
 * shows that dockerd did start what it starts), still held; then each policy is back as it was (an inspect: the same
 * name, the same maximum retry count) and the same containers run after the window, started once, by it.
 *
 * <p>The window's process is frozen (SIGSTOP) across the restart, so that the observation "dockerd itself did not
 * start it" does not race with the window's own start (dockerd's shutdown stops every container on the machine, up to
 * its 15 s shutdown timeout, so the freeze may outlast the session: the window's journal and the host fence still hold
 * the containers then); a daemon reconciling every second, started once the window holds them, must not touch them.
 *
 * <p>On the code before commit 00dc6f7 only {@code always} was neutralised (switched to {@code unless-stopped}):
 * dockerd started {@code cache} (on-failure, exit 137) and {@code index} (unless-stopped, never manually stopped) in
 * the middle of the window. This test catches both.
 *
 * <p>Restarting dockerd stops every container of the machine for a few seconds: run it alone.
 */
@Tag("restarts-dockerd")
class DockerRestartMidWindowTest {
    @RegisterExtension
    final FaultFixture fx = new FaultFixture();

    @Test
    void heldContainersOfEveryRestartPolicyStayStoppedAcrossADockerdRestart() throws Exception {
        String control = fx.module + "-control";
        fx.setDesired(threeHeld(), "r1");
        assertThat(fx.applyInProcess().outcome()).isEqualTo(ApplyOutcome.APPLIED);
        Map<String, String> ids = new LinkedHashMap<>();
        for (String n : List.of("registry", "cache", "index")) ids.put(fx.module + "-" + n, fx.inspect(fx.module + "-" + n).getId());
        String cache = fx.module + "-cache", index = fx.module + "-index";
        fx.setRestartPolicy(cache, "on-failure:3");
        // index exits by itself, not through Docker's API (so it is not marked manually stopped), then gets its policy
        fx.setRestartPolicy(index, "no");
        long pid = fx.inspect(index).getState().getPidLong();
        ProcessHandle.of(pid).orElseThrow().destroyForcibly();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> !fx.running(index));
        fx.setRestartPolicy(index, "unless-stopped");
        Map<String, String> policies = new LinkedHashMap<>();
        for (String n : ids.keySet()) policies.put(n, fx.restartPolicy(n));
        assertThat(policies).containsExactly(Map.entry(fx.registry, "always"), Map.entry(cache, "on-failure:3"), Map.entry(index, "unless-stopped"));

        fx.docker.client().createContainerCmd(BUSYBOX).withName(control).withCmd("sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done")
                .withLabels(Map.of("mesh-test.control", fx.module))
                .withHostConfig(HostConfig.newHostConfig().withNetworkMode("none").withRestartPolicy(RestartPolicy.alwaysRestart())).exec();
        try {
            fx.docker.start(control);
            long zxid = fx.zxidNow();
            Instant t0 = Instant.now();

            ChildJvm w = fx.window("window");
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).until(() -> !fx.runningStepContainers().isEmpty());
            for (String n : ids.keySet()) assertThat(fx.running(n)).as("%s running in its window", n).isFalse();
            ChildJvm daemon = fx.daemon("daemon", "1s");
            // the daemon is up (it checks Docker before it registers): a daemon started while dockerd is down refuses to run
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).until(() -> fx.exists(fx.agentNode()) || !daemon.isAlive());
            assertThat(daemon.isAlive()).as("daemon up; log:\n%s", daemon.output()).isTrue();

            w.pause();
            Instant[] resumed = new Instant[1];
            List<String> startedByDockerd = new ArrayList<>();
            try {
                Duration down = Dockerd.restart();
                System.out.println("dockerd was down for " + down.toMillis() + " ms");
                // dockerd has started the containers it starts (its restore): the control container runs again
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(() -> fx.running(control));
                for (String n : ids.keySet()) {
                    if (fx.running(n)) startedByDockerd.add(n + " (" + policies.get(n) + ")");
                    assertThat(fx.inspect(n).getId()).isEqualTo(ids.get(n));
                }
                assertThat(startedByDockerd).as("held containers started by dockerd as it came back").isEmpty();
                assertThat(fx.journal()).as("window journal").exists();
                for (String n : ids.keySet()) assertThat(fx.restartPolicy(n)).as("%s's policy while held", n).isEqualTo("no");
            } finally {
                Dockerd.ensureRunning();
                resumed[0] = Instant.now();
                w.resume();
            }

            w.awaitExit(Duration.ofSeconds(120));
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> ids.keySet().stream().allMatch(fx::running));
            for (String n : ids.keySet()) {
                assertThat(fx.inspect(n).getId()).as("%s is the same container", n).isEqualTo(ids.get(n));
                assertThat(fx.restartPolicy(n)).as("%s's policy back", n).isEqualTo(policies.get(n));
                assertThat(fx.exists(fx.paths.held(fx.host, n))).as("%s's held node", n).isFalse();
            }
            assertThat(fx.exists(fx.windowNode())).isFalse();
            ApplyReport r = fx.awaitReport(Duration.ofSeconds(30), x -> x.lastWindow() != null);
            assertThat(r.lastWindow().held()).containsExactlyInAnyOrderElementsOf(ids.keySet());
            assertThat(daemon.isAlive()).isTrue();

            // The held intervals, for the record: a window frozen past its session loses its held nodes while it still
            // holds the containers (its fence and journal do), so an interval may end before its window does.
            List<String> violations = new ArrayList<>();
            List<HeldIntervals.Held> held = fx.checkHeldIntervals(zxid, violations);
            System.out.println("held intervals: " + held + "\nchecker: " + violations + "\nevents:\n" + DockerEvents.describe(fx.events.since(t0)));
            long resumedNanos = resumed[0].getEpochSecond() * 1_000_000_000L + resumed[0].getNano();
            for (String n : ids.keySet()) {
                List<Event> mine = fx.eventsOf(ids.get(n), t0);
                assertThat(actions(mine)).as("events of %s:\n%s", n, DockerEvents.describe(mine)).doesNotContain("create", "destroy", "rename");
                List<Event> starts = mine.stream().filter(e -> "start".equals(io.mesh.testing.TestDocker.action(e))).toList();
                assertThat(starts).as("%s started once, by its window:\n%s", n, DockerEvents.describe(mine)).hasSize(1);
                assertThat(nanos(starts.get(0))).as("%s started after its window's process was resumed", n).isGreaterThan(resumedNanos);
            }
        } finally {
            Dockerd.ensureRunning();
            fx.docker.remove(control);
        }
    }

    /** The module: three held containers (always, on-failure ignoring SIGTERM, unless-stopped) and web, never held. */
    private String threeHeld() {
        String serve = "trap 'exit 0' TERM; while true; do sleep 1; done";
        String deaf = "trap 'echo ignored' TERM; while true; do sleep 1; done";
        return "module: " + fx.module + "\nhosts: [" + fx.host + "]\ncontainers:\n"
                + container("registry", serve, "always") + "    volumes: [\"" + fx.module + "-data:/data\"]\n"
                + container("cache", deaf, "on-failure")
                + container("index", serve, "unless-stopped")
                + container("web", serve, "unless-stopped")
                + "schedules:\n  " + SCHEDULE + ":\n    cron: \"30 3 * * *\"\n    timezone: UTC\n    while-stopped: [registry, cache, index]\n"
                + "    step:\n      image: " + BUSYBOX + "\n      command: [sh, -c, \"" + sleepStep(40) + "\"]\n"
                + "      volumes-from: registry\n    timeout: 2m\n";
    }

    private static String container(String name, String command, String restart) {
        return "  " + name + ":\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"" + command + "\"]\n"
                + "    network: host\n    stop-timeout: 2s\n    restart: " + restart + "\n";
    }
}
