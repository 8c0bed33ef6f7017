package io.mesh.fleet;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.model.Event;
import io.mesh.client.ExitCodes;
import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import static io.mesh.fleet.FleetIT.mesh;
import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The one disruption budget (SPEC.md "The rest of the operator's stack"; decision 37 item 3) on two engines: a group
 * of two hosts whose limit is one, one replica held by an operator with {@code --stop}, runs no window on the other
 * until the hold ends; and none while the first's last apply failed and left a container of the module down. Read
 * from the engines' own events: no stop on the other host while the replica is held or left down.
 */
@ExtendWith(Fleet.class)
class GroupBudgetIT {
    @Test
    void aGroupOfTwoWithOneReplicaHeldStoppedRunsNoWindowOnTheOtherUntilTheHoldEnds(Fleet fleet) throws Exception {
        String module = "gb" + String.format("%05x", ThreadLocalRandom.current().nextInt(1 << 20)), group = "replicas" + module;
        List<String> hosts = fleet.hosts().subList(0, 2);
        String coordinator = "--coordinator=" + fleet.coordinators().get(0);
        CuratorFramework zk = fleet.zk();
        ZkPaths paths = fleet.paths();
        Path dir = Files.createTempDirectory("group-budget-it");
        Map<String, EngineEvents> events = new HashMap<>();
        try {
            for (String host : hosts) events.put(host, EngineEvents.record(host, fleet.dockerHost(host), module::equals));
            String manifest = "module: " + module + "\nhosts: [" + String.join(", ", hosts) + "]\n"
                    + "containers:\n  app:\n    image: " + BUSYBOX + "\n"
                    + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                    + "    network: none\n    stop-timeout: 2s\n"
                    + "schedules:\n  gc:\n    cron: \"30 3 1 1 *\"\n    while-stopped: [app]\n    group: " + group + "\n"
                    + "    step: {image: " + BUSYBOX + ", command: [sleep, \"1\"], network: none}\n    timeout: 1m\n    start-by: 4s\n";
            FleetIT.Run push = mesh("push", Fleet.write(dir, "m.yaml", manifest).toString(), "--revision", "r1", "--wait", "--timeout", "60s", coordinator);
            assertThat(push.code()).as(push.out() + push.err()).isEqualTo(ExitCodes.OK);

            // The replica on the first host, held and stopped by the operator
            String held = hosts.get(0), other = hosts.get(1);
            FleetIT.Run hold = mesh("hold", held, module + "-app", "--reason", "disk swap", "--stop", coordinator);
            assertThat(hold.code()).as(hold.out() + hold.err()).isEqualTo(ExitCodes.OK);
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                JsonNode h = Json.MAPPER.readTree(zk.getData().forPath(paths.held(held, module + "-app")));
                return h.path("hold").hasNonNull("stoppedAt");
            });
            long from = EngineEvents.nanos(Instant.now());

            // The other replica's window waits for the place the hold takes, and is skipped at its start-by
            FleetIT.Run skipped = mesh("window", "run", module + "/gc", "--host", other, "--timeout", "60s", coordinator);
            assertThat(skipped.out() + skipped.err()).contains("skipped").contains("down for another cause").contains(held + ": " + module + "-app held --stop");
            events.get(other).settle();
            List<Event> stopsWhileHeld = events.get(other).all().stream().filter(e -> EngineEvents.time(e) >= from
                    && List.of("kill", "stop", "die").contains(EngineEvents.action(e))).toList();
            assertThat(stopsWhileHeld).as("no stop on %s while the replica on %s is held stopped", other, held).isEmpty();

            // The hold ends: the other's window runs
            FleetIT.Run release = mesh("release", held, module + "-app", coordinator);
            assertThat(release.code()).as(release.out() + release.err()).isEqualTo(ExitCodes.OK);
            await().atMost(Duration.ofSeconds(30)).until(() -> "running".equals(fleet.docker(held).inspectContainerCmd(module + "-app").exec().getState().getStatus()));
            long after = EngineEvents.nanos(Instant.now());
            FleetIT.Run ran = mesh("window", "run", module + "/gc", "--host", other, "--timeout", "60s", coordinator);
            assertThat(ran.code()).as(ran.out() + ran.err()).isEqualTo(ExitCodes.OK);
            events.get(other).settle();
            assertThat(events.get(other).all().stream().filter(e -> EngineEvents.time(e) >= after && "kill".equals(EngineEvents.action(e))
                    || EngineEvents.time(e) >= after && "stop".equals(EngineEvents.action(e)))).as("the window stopped its replica once the hold ended").isNotEmpty();
        } finally {
            events.values().forEach(EngineEvents::close);
            fleet.removeModule(module);
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        }
    }

    @Test
    void aGroupOfTwoWithOneHostsApplyFailedAndAContainerLeftDownRunsNoWindowOnTheOtherUntilAnApplyLands(Fleet fleet) throws Exception {
        String module = "gf" + String.format("%05x", ThreadLocalRandom.current().nextInt(1 << 20)), group = "replicas" + module;
        List<String> hosts = fleet.hosts().subList(0, 2);
        String failing = hosts.get(0), other = hosts.get(1);
        String coordinator = "--coordinator=" + fleet.coordinators().get(0);
        // An image only the other host has: with pull: never, the first host cannot make the container that needs it
        String onlyThere = "mesh-test/only-there";
        String busybox = fleet.docker(other).inspectImageCmd(BUSYBOX).exec().getId();
        fleet.docker(other).tagImageCmd(busybox, onlyThere, module).exec();
        Path dir = Files.createTempDirectory("group-budget-it");
        Map<String, EngineEvents> events = new HashMap<>();
        try {
            for (String host : hosts) events.put(host, EngineEvents.record(host, fleet.dockerHost(host), module::equals));
            String base = "module: " + module + "\nhosts: [" + String.join(", ", hosts) + "]\n"
                    + "containers:\n  app:\n    image: " + BUSYBOX + "\n"
                    + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                    + "    network: none\n    stop-timeout: 2s\n";
            String extra = "  extra:\n    image: " + onlyThere + ":" + module + "\n    pull: never\n"
                    + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                    + "    network: none\n    stop-timeout: 2s\n";
            String schedules = "schedules:\n  gc:\n    cron: \"30 3 1 1 *\"\n    while-stopped: [app]\n    group: " + group + "\n"
                    + "    step: {image: " + BUSYBOX + ", command: [sleep, \"1\"], network: none}\n    timeout: 1m\n    start-by: 4s\n";
            FleetIT.Run push = mesh("push", Fleet.write(dir, "m.yaml", base + schedules).toString(), "--revision", "r1", "--wait", "--timeout", "60s", coordinator);
            assertThat(push.code()).as(push.out() + push.err()).isEqualTo(ExitCodes.OK);

            // The push adding extra fails on the first host: extra is not made there, so that host is down for the group
            FleetIT.Run bad = mesh("push", Fleet.write(dir, "m2.yaml", base + extra + schedules).toString(), "--revision", "r2", "--wait",
                    "--timeout", "60s", coordinator);
            assertThat(bad.code()).as(bad.out() + bad.err()).isNotEqualTo(ExitCodes.OK);
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                JsonNode r = Json.MAPPER.readTree(fleet.zk().getData().forPath(fleet.paths().report(failing, module)));
                return "failed".equals(r.path("outcome").asText()) && r.path("down").toString().contains(module + "-extra");
            });
            FleetIT.Run windows = mesh("windows", coordinator);
            long from = EngineEvents.nanos(Instant.now());

            FleetIT.Run skipped = mesh("window", "run", module + "/gc", "--host", other, "--timeout", "60s", coordinator);
            assertThat(skipped.out() + skipped.err()).contains("skipped").contains("down for another cause")
                    .contains(failing + ": " + module + "-extra left down by the failed apply of push-");
            events.get(other).settle();
            assertThat(events.get(other).all().stream().filter(e -> EngineEvents.time(e) >= from
                    && List.of("kill", "stop", "die").contains(EngineEvents.action(e))).toList())
                    .as("no stop on %s while %s's failed apply left %s-extra down", other, failing, module).isEmpty();
            // mesh windows names the cause in the group's slot before any window of it asks
            assertThat(windows.out()).as(windows.out() + windows.err()).contains("group-" + group).contains("down: failed-apply")
                    .contains(failing).contains(module + "-extra left down by push-");

            // A push that lands on the first host ends the cause: the other's window runs
            FleetIT.Run good = mesh("push", Fleet.write(dir, "m3.yaml", base + schedules).toString(), "--revision", "r3", "--wait", "--timeout", "60s", coordinator);
            assertThat(good.code()).as(good.out() + good.err()).isEqualTo(ExitCodes.OK);
            long after = EngineEvents.nanos(Instant.now());
            FleetIT.Run ran = mesh("window", "run", module + "/gc", "--host", other, "--timeout", "60s", coordinator);
            assertThat(ran.code()).as(ran.out() + ran.err()).isEqualTo(ExitCodes.OK);
            events.get(other).settle();
            assertThat(events.get(other).all().stream().filter(e -> EngineEvents.time(e) >= after
                    && List.of("kill", "stop").contains(EngineEvents.action(e)))).as("the window stopped its replica once the apply landed").isNotEmpty();
        } finally {
            events.values().forEach(EngineEvents::close);
            fleet.removeModule(module);
            try {
                fleet.docker(other).removeImageCmd(onlyThere + ":" + module).exec();
            } catch (RuntimeException ignored) {
                // the image goes with the engine's test state anyway
            }
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        }
    }
}
