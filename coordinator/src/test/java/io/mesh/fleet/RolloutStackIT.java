package io.mesh.fleet;

import com.github.dockerjava.api.model.Event;
import io.mesh.client.ExitCodes;
import io.mesh.curator.RolloutNodes;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.RolloutState;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import static io.mesh.fleet.FleetIT.BUSYBOX;
import static io.mesh.fleet.FleetIT.mesh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a rollout takes from the operator's stack (SPEC.md "The rest of the operator's stack"; decision 13's
 * {@code promote}, {@code soak} and {@code max-failed}, decision 37's drains) on three real engines, judged by each
 * engine's own events: a manual canary's next wave waits for {@code mesh rollout promote}; a soak keeps the next wave
 * until the last one has stayed ready that long; a drained host is passed over and applies once undrained; with
 * {@code max-failed: 1} a rollout goes on past one failed host and pauses at the second.
 */
@ExtendWith(Fleet.class)
class RolloutStackIT {
    /** Docker's actions that begin a host's apply of a new revision. */
    private static final List<String> BEGINS = List.of("create", "kill", "stop");

    /**
     * One container {@code app} on {@code hosts}; its healthcheck fails while its volume {@code flag} holds a file
     * {@code fail}.
     *
     * @param rollout more fields of the rollout after one canary and max-parallel 1; {@code null} for no rollout (every
     *                host at once)
     */
    private static String manifest(String module, List<String> hosts, String version, String rollout) {
        return "module: " + module + "\nhosts: [" + String.join(", ", hosts) + "]\n"
                + (rollout == null ? "" : "rollout: {canary: 1, max-parallel: 1" + rollout + "}\n")
                + "containers:\n  app:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    env: {VERSION: \"" + version + "\"}\n"
                + "    network: none\n    stop-timeout: 2s\n"
                + "    volumes: [\"" + module + "-flag:/flag:ro\"]\n"
                + "    healthcheck: {test: [CMD-SHELL, \"test ! -e /flag/fail\"], interval: 1s, timeout: 1s, retries: 1}\n"
                + "    ready: {min-healthy: 1s, deadline: 6s}\n";
    }

    @Test
    void aManualCanaryWaitsForThePromoteASoakHoldsTheNextWaveAndADrainedHostIsPassedOver(Fleet fleet) throws Exception {
        String module = "rstk" + String.format("%05x", ThreadLocalRandom.current().nextInt(1 << 20));
        List<String> hosts = fleet.hosts().subList(0, 3);
        // The canary is the first host by name (decision 13); the third is drained
        String canary = hosts.stream().sorted().toList().get(0), next = hosts.stream().sorted().toList().get(1), drained = hosts.stream().sorted().toList().get(2);
        String coordinator = "--coordinator=" + fleet.coordinators().get(0);
        CuratorFramework zk = fleet.zk();
        ZkPaths paths = fleet.paths();
        Path dir = Files.createTempDirectory("rollout-stack-it");
        Map<String, EngineEvents> events = new HashMap<>();
        try {
            FleetIT.Run v1 = mesh("push", Fleet.write(dir, "v1.yaml", manifest(module, hosts, "v1", null)).toString(), "--revision", "v1", "--wait",
                    "--timeout", "90s", coordinator);
            assertThat(v1.code()).as(v1.out() + v1.err()).isEqualTo(ExitCodes.OK);
            for (String host : hosts) events.put(host, EngineEvents.record(host, fleet.dockerHost(host), module::equals));

            // The third host drained (without --stop): its container held, still running
            FleetIT.Run drain = mesh("drain", drained, "--reason", "rack move", coordinator);
            assertThat(drain.code()).as(drain.out() + drain.err()).isEqualTo(ExitCodes.OK);
            await().atMost(Duration.ofSeconds(30)).until(() -> zk.checkExists().forPath(paths.held(drained, module + "-app")) != null);
            long from = EngineEvents.nanos(java.time.Instant.now());

            // v2, promoted by hand: the canary applies, then the next host waits for the promote, past its soak's end
            FleetIT.Run v2 = mesh("push", Fleet.write(dir, "v2.yaml", manifest(module, hosts, "v2", ", promote: manual, soak: 2s")).toString(),
                    "--revision", "v2", coordinator);
            assertThat(v2.code()).as(v2.out() + v2.err()).isEqualTo(ExitCodes.OK);
            String push2 = v2.out().substring(0, v2.out().indexOf(' '));
            assertThat(RolloutNodes.readView(zk, paths, module).canary()).containsExactly(canary);
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .until(() -> RolloutNodes.readView(zk, paths, module).done().contains(canary));
            Thread.sleep(4_000); // the soak (2 s) over: only the promote keeps the next host now
            events.get(next).settle();
            assertThat(begins(events.get(next), from)).as("%s begins nothing before the promote", next).isEmpty();
            FleetIT.Run status = mesh("rollout", "status", module, coordinator);
            assertThat(status.out()).as(status.out() + status.err()).contains("the other hosts wait for mesh rollout promote")
                    .contains("drained " + drained + " (passed over)");
            long promoted = EngineEvents.nanos(java.time.Instant.now());
            FleetIT.Run promote = mesh("rollout", "promote", module, coordinator);
            assertThat(promote.code()).as(promote.out() + promote.err()).isEqualTo(ExitCodes.OK);
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .until(() -> RolloutNodes.readView(zk, paths, module).state() == RolloutState.DONE);
            RolloutRecord r2 = RolloutNodes.readView(zk, paths, module);
            assertThat(r2.done()).containsExactlyInAnyOrder(canary, next);
            assertThat(r2.drained()).as("the drained host is passed over").containsExactly(drained);
            events.get(next).settle();
            assertThat(begins(events.get(next), from)).as("%s begins after the promote", next)
                    .isNotEmpty().allSatisfy(e -> assertThat(EngineEvents.time(e)).isGreaterThanOrEqualTo(promoted));
            FleetIT.Run pushStatus = mesh("status", push2, coordinator);
            assertThat(pushStatus.out()).as(pushStatus.out() + pushStatus.err()).contains("state drained")
                    .containsPattern(drained + "\\s+" + module + "\\s+drained");

            // v3 with a soak: the next host begins once the canary has stayed ready that long (Docker's clock)
            long from3 = EngineEvents.nanos(java.time.Instant.now());
            FleetIT.Run v3 = mesh("push", Fleet.write(dir, "v3.yaml", manifest(module, hosts, "v3", ", soak: 3s")).toString(), "--revision", "v3",
                    "--wait", "--timeout", "90s", coordinator);
            assertThat(v3.code()).as(v3.out() + v3.err()).isEqualTo(ExitCodes.FAILED);
            assertThat(v3.out()).as("push --wait settles, naming the drained host").contains("not applied on " + drained + " yet: drained");
            events.values().forEach(EngineEvents::settle);
            long canaryReady = events.get(canary).all().stream().filter(e -> EngineEvents.time(e) >= from3
                    && "health_status: healthy".equals(EngineEvents.action(e))).mapToLong(EngineEvents::time).min().orElseThrow();
            long nextBegins = begins(events.get(next), from3).stream().mapToLong(EngineEvents::time).min().orElseThrow();
            assertThat(Duration.ofNanos(nextBegins - canaryReady)).as("the next wave after the canary's readiness, min-healthy 1 s and soak 3 s")
                    .isGreaterThanOrEqualTo(Duration.ofSeconds(3));

            // The drained host saw nothing of v2 and v3; undrained, it applies v3
            events.get(drained).settle();
            assertThat(begins(events.get(drained), from)).as("nothing begun on the drained %s", drained).isEmpty();
            long undrainedAt = EngineEvents.nanos(java.time.Instant.now());
            FleetIT.Run undrain = mesh("undrain", drained, coordinator);
            assertThat(undrain.code()).as(undrain.out() + undrain.err()).isEqualTo(ExitCodes.OK);
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300))
                    .until(() -> fleet.env(drained, fleet.docker(drained).inspectContainerCmd(module + "-app").exec().getId()).contains("VERSION=v3"));
            events.get(drained).settle();
            assertThat(begins(events.get(drained), undrainedAt)).as("the undrained host applied the push").isNotEmpty();
        } finally {
            events.values().forEach(EngineEvents::close);
            mesh("undrain", drained, coordinator);
            fleet.removeModule(module);
            removeVolumes(fleet, module);
            deleteDir(dir);
        }
    }

    @Test
    void withMaxFailedOneARolloutGoesOnPastOneFailedHostAndPausesAtTheSecond(Fleet fleet) throws Exception {
        String module = "rmf" + String.format("%05x", ThreadLocalRandom.current().nextInt(1 << 20));
        List<String> hosts = fleet.hosts().subList(0, 3);
        String canary = hosts.stream().sorted().toList().get(0), second = hosts.stream().sorted().toList().get(1),
                third = hosts.stream().sorted().toList().get(2);
        String coordinator = "--coordinator=" + fleet.coordinators().get(0);
        CuratorFramework zk = fleet.zk();
        ZkPaths paths = fleet.paths();
        Path dir = Files.createTempDirectory("rollout-stack-it");
        Map<String, EngineEvents> events = new HashMap<>();
        try {
            FleetIT.Run v1 = mesh("push", Fleet.write(dir, "v1.yaml", manifest(module, hosts, "v1", null)).toString(), "--revision", "v1", "--wait",
                    "--timeout", "90s", coordinator);
            assertThat(v1.code()).as(v1.out() + v1.err()).isEqualTo(ExitCodes.OK);
            for (String host : hosts) events.put(host, EngineEvents.record(host, fleet.dockerHost(host), module::equals));
            // The canary and the second host say "fail" to the healthcheck (their own volume); the third does not
            RolloutIT.markFailing(fleet, canary, module + "-flag");
            RolloutIT.markFailing(fleet, second, module + "-flag");
            Map<String, String> v1Ids = new HashMap<>();
            for (String host : hosts) v1Ids.put(host, fleet.docker(host).inspectContainerCmd(module + "-app").exec().getId());
            long from = EngineEvents.nanos(java.time.Instant.now());

            FleetIT.Run v2 = mesh("push", Fleet.write(dir, "v2.yaml", manifest(module, hosts, "v2", ", max-failed: 1, on-failure: pause")).toString(),
                    "--revision", "v2", "--wait", "--timeout", "90s", coordinator);
            assertThat(v2.code()).as(v2.out() + v2.err()).isNotEqualTo(ExitCodes.OK);
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .until(() -> RolloutNodes.readView(zk, paths, module).state() == RolloutState.PAUSED);
            RolloutRecord r = RolloutNodes.readView(zk, paths, module);
            assertThat(r.failed()).as("%s", r).containsExactlyInAnyOrder(canary, second);
            events.values().forEach(EngineEvents::settle);
            // A host's failure, by its engine: its new container's healthcheck said unhealthy (the previous one, which reads
            // the same volume, is not counted)
            long canaryFailed = unhealthy(events.get(canary), from, v1Ids.get(canary));
            long secondBegins = begins(events.get(second), from).stream().mapToLong(EngineEvents::time).min().orElseThrow();
            assertThat(secondBegins).as("the second host began after the canary failed within max-failed").isGreaterThan(canaryFailed);
            long secondFailed = unhealthy(events.get(second), from, v1Ids.get(second));
            // The third host either applied before the second failure, or begins nothing after the pause
            Thread.sleep(2_000);
            events.get(third).settle();
            List<Event> thirdBegins = begins(events.get(third), from);
            if (r.done().contains(third)) {
                assertThat(thirdBegins).isNotEmpty().allSatisfy(e -> assertThat(EngineEvents.time(e)).isLessThan(secondFailed));
            } else {
                assertThat(thirdBegins).as("nothing begun on %s once the rollout paused at two failures", third).isEmpty();
            }
            for (String host : List.of(canary, second)) {
                String id = fleet.docker(host).inspectContainerCmd(module + "-app").exec().getId();
                assertThat(fleet.env(host, id)).as("%s runs v1 again", host).contains("VERSION=v1");
            }
        } finally {
            events.values().forEach(EngineEvents::close);
            fleet.removeModule(module);
            removeVolumes(fleet, module);
            deleteDir(dir);
        }
    }

    /** @return the engine's events since {@code from} that begin an apply: a create, or a stop of the running container */
    private static List<Event> begins(EngineEvents e, long from) {
        return e.all().stream().filter(ev -> EngineEvents.time(ev) >= from && BEGINS.contains(EngineEvents.action(ev))).toList();
    }

    /** @return the time of the first {@code health_status: unhealthy} since {@code from} of a container other than {@code old} */
    private static long unhealthy(EngineEvents e, long from, String old) {
        return e.all().stream().filter(ev -> EngineEvents.time(ev) >= from && "health_status: unhealthy".equals(EngineEvents.action(ev))
                        && !old.equals(ev.getId()))
                .mapToLong(EngineEvents::time).min().orElseThrow(() -> new AssertionError("no new container unhealthy since " + EngineEvents.at(from)));
    }

    private static void removeVolumes(Fleet fleet, String module) {
        for (String host : fleet.hosts()) {
            try {
                fleet.docker(host).removeVolumeCmd(module + "-flag").exec();
            } catch (RuntimeException ignored) {
                // not there on that host, or the module's removal has not let go of it yet: the fleet's next setup clears it
            }
        }
    }

    private static void deleteDir(Path dir) throws java.io.IOException {
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) Files.deleteIfExists(f);
        }
        Files.deleteIfExists(dir);
    }
}
