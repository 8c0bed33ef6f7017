package io.mesh.fleet;

import com.github.dockerjava.api.model.Event;
import io.mesh.client.ExitCodes;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.Json;
import io.mesh.wire.MeshVersion;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static io.mesh.fleet.FleetIT.BUSYBOX;
import static io.mesh.fleet.FleetIT.mesh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The previous release and this one on one fleet (SPEC.md "Running it for real"; docs/decisions/0041-upgrades.md): the
 * previous release (mesh 0.1.0, built from its pinned commit by {@code deploy/dev/previous-release.sh}) runs the agent
 * of fleet-1 and a third coordinator, beside this release's agents and coordinators, on the fleet's three engines and
 * its ensemble. A push with a canary rollout through the previous coordinator lands on the mixed fleet and reads
 * {@code applied} on both coordinators; a push through this coordinator lands on the previous agent; the previous
 * agent, killed with SIGKILL while its window's step runs, is replaced by this release's agent, which gives the
 * window's container back. What happened is read from the engines' events.
 */
@ExtendWith(Fleet.class)
class UpgradeIT {
    /** The previous release's coordinator listens here (the fleet's are on 7171 and 7172). */
    static final int PREVIOUS_PORT = 7179;

    static String manifest(String module, String version) {
        return "module: " + module + "\nhosts: [\"*\"]\ncontainers:\n  app:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    env: {VERSION: \"" + version + "\"}\n    network: none\n    stop-timeout: 2s\n    ready: {min-healthy: 1s}\n"
                + "schedules:\n  gc:\n    cron: \"0 3 1 1 *\"\n    timezone: UTC\n    while-stopped: [app]\n"
                + "    step: {image: " + BUSYBOX + ", command: [sleep, \"60\"], network: none}\n    timeout: 2m\n"
                + "rollout:\n  canary: 1\n  max-parallel: 1\n";
    }

    /** @return the directory of the previous release's jars, built (once per machine) by deploy/dev/previous-release.sh */
    static Path previousRelease(Path repo) throws Exception {
        Path log = Files.createTempFile("previous-release", ".log");
        Process p = new ProcessBuilder("bash", repo.resolve("deploy/dev/previous-release.sh").toString())
                .redirectError(log.toFile()).start();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        assertThat(p.waitFor(10, TimeUnit.MINUTES)).as("previous-release.sh within 10 min").isTrue();
        assertThat(p.exitValue()).as("previous-release.sh: %s", Files.readString(log)).isZero();
        return Path.of(out.lines().reduce((a, b) -> b).orElseThrow());
    }

    private static String agentVersion(CuratorFramework zk, ZkPaths paths, String host) throws Exception {
        return Json.read(zk.getData().forPath(paths.agent(host)), AgentRecord.class).version();
    }

    @Test
    void thePreviousReleaseAndThisOneWorkTogetherAndAnUpgradeMidWindowGivesItsContainerBack(Fleet fleet) throws Exception {
        Path previous = previousRelease(fleet.repo());
        String module = "upg" + String.format("%05x", ThreadLocalRandom.current().nextInt(1 << 20));
        String app = module + "-app";
        List<String> hosts = fleet.hosts();
        String first = hosts.get(0);
        CuratorFramework zk = fleet.zk();
        ZkPaths paths = fleet.paths();
        String current = "--coordinator=" + fleet.coordinators().get(0);
        String old = "--coordinator=http://127.0.0.1:" + PREVIOUS_PORT;
        Path dir = Files.createTempDirectory("upgrade-it");
        Map<String, EngineEvents> events = new HashMap<>();
        Process previousCoordinator = null;
        try {
            for (String host : hosts) events.put(host, EngineEvents.record(host, fleet.dockerHost(host), module::equals));
            // fleet-1's agent replaced by the previous release's; a coordinator of the previous release beside the fleet's
            fleet.fleetSh("start-agent", "1", "--jar", previous.resolve("mesh-agent.jar").toString());
            assertThat(agentVersion(zk, paths, first)).isEqualTo("0.1.0");
            assertThat(agentVersion(zk, paths, hosts.get(1))).isEqualTo(MeshVersion.CURRENT);
            ProcessBuilder pb = new ProcessBuilder(fleet.repo().resolve("deploy/bin/mesh-coordinator").toString(), "serve",
                    "--zk", fleet.zkConnect(), "--listen", "127.0.0.1:" + PREVIOUS_PORT, "--state-dir", dir.resolve("coordinator").toString());
            pb.environment().put("MESH_COORDINATOR_JAR", previous.resolve("mesh-coordinator.jar").toString());
            pb.environment().remove("MESH_TOKEN");
            previousCoordinator = pb.redirectErrorStream(true).redirectOutput(dir.resolve("coordinator.log").toFile()).start();
            HttpClient http = HttpClient.newHttpClient();
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + PREVIOUS_PORT + "/healthz")).build(), HttpResponse.BodyHandlers.ofString()).statusCode() == 200);

            // A canary rollout through the previous coordinator, on the mixed fleet: every host applies it, both read applied
            FleetIT.Run r1 = mesh("push", Fleet.write(dir, "r1.yaml", manifest(module, "r1")).toString(), "--revision", "r1", "--wait",
                    "--timeout", "120s", "--interval", "300ms", old);
            assertThat(r1.code()).as(r1.out() + r1.err() + Files.readString(dir.resolve("coordinator.log"))).isEqualTo(ExitCodes.OK);
            String push1 = r1.out().substring(0, r1.out().indexOf(' '));
            FleetIT.Run s1 = mesh("status", push1, current);
            for (String host : hosts) {
                assertThat(s1.out()).as(s1.out()).containsPattern(host + "\\s+" + module + "\\s+applied");
                assertThat(fleet.env(host, app)).contains("VERSION=r1");
            }

            // A push through this coordinator lands on the previous release's agent too
            FleetIT.Run r2 = mesh("push", Fleet.write(dir, "r2.yaml", manifest(module, "r2")).toString(), "--revision", "r2", "--wait",
                    "--timeout", "120s", "--interval", "300ms", current);
            assertThat(r2.code()).as(r2.out() + r2.err()).isEqualTo(ExitCodes.OK);
            for (String host : hosts) assertThat(fleet.env(host, app)).as(host).contains("VERSION=r2");
            String push2 = r2.out().substring(0, r2.out().indexOf(' '));
            FleetIT.Run s2 = mesh("status", push2, old);
            assertThat(s2.code()).as(s2.out() + s2.err()).isEqualTo(ExitCodes.OK);
            for (String host : hosts) assertThat(s2.out()).as("the previous coordinator reads it").containsPattern(host + "\\s+" + module + "\\s+applied");

            // The previous agent runs a window; killed while its step runs, this release's agent replaces it and gives the
            // container back (the window's journal, written by the previous release, read by this one).
            String appId = fleet.docker(first).inspectContainerCmd(app).exec().getId();
            long windowFrom = EngineEvents.nanos(Instant.now());
            FleetIT.Run ask = mesh("window", "run", module + "/gc", "--host", first, "--timeout", "2s", "--interval", "200ms", current);
            assertThat(ask.code()).as(ask.out() + ask.err()).isIn(ExitCodes.OK, ExitCodes.TIMEOUT);
            await().atMost(Duration.ofSeconds(60)).until(() -> zk.checkExists().forPath(paths.held(first, app)) != null
                    && !fleet.docker(first).inspectContainerCmd(app).exec().getState().getRunning());
            fleet.stopAgent(1, true);
            fleet.startAgent(1);
            assertThat(agentVersion(zk, paths, first)).as("upgraded").isEqualTo(MeshVersion.CURRENT);
            await().atMost(Duration.ofSeconds(90)).until(() -> Boolean.TRUE.equals(fleet.docker(first).inspectContainerCmd(app).exec().getState().getRunning()));
            await().atMost(Duration.ofSeconds(30)).until(() -> zk.checkExists().forPath(paths.held(first, app)) == null);
            assertThat(fleet.docker(first).inspectContainerCmd(app).exec().getId()).as("the same container, given back").isEqualTo(appId);
            EngineEvents e = events.get(first);
            e.settle();
            List<String> actions = e.all().stream().filter(ev -> EngineEvents.time(ev) >= windowFrom && appId.equals(ev.getId()))
                    .map(EngineEvents::action).filter(RolloutIT.CHANGES::contains).toList();
            assertThat(actions).as("the window's stop, then the start that gave it back, nothing else: %s", actions)
                    .containsSubsequence("die", "start").doesNotContain("destroy");
            assertThat(actions.stream().filter("start"::equals).count()).isEqualTo(1);
            for (String host : hosts.subList(1, hosts.size())) {
                List<Event> others = events.get(host).all().stream().filter(ev -> EngineEvents.time(ev) >= windowFrom)
                        .filter(ev -> RolloutIT.CHANGES.contains(EngineEvents.action(ev))).toList();
                assertThat(others).as("no change on %s meanwhile", host).isEmpty();
            }
        } finally {
            if (previousCoordinator != null) {
                previousCoordinator.destroy();
                previousCoordinator.waitFor(20, TimeUnit.SECONDS);
            }
            fleet.startAgent(1); // this release's agent again, whatever happened above
            events.values().forEach(EngineEvents::close);
            fleet.removeModule(module);
        }
    }
}
