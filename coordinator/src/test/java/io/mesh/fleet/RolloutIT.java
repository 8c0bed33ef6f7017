package io.mesh.fleet;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Event;
import io.mesh.client.CoordinatorClient;
import io.mesh.client.ExitCodes;
import io.mesh.curator.RolloutNodes;
import io.mesh.wire.Json;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.RolloutState;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static io.mesh.fleet.FleetIT.BUSYBOX;
import static io.mesh.fleet.FleetIT.mesh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Staged rollouts on the fleet (three real engines; docs/decisions/0013-rollouts.md), checked from each engine's own
 * events and inspect, not from mesh's reports: a plan makes no Docker event; {@code max-parallel: 1} never has two
 * hosts between the stop of the old container and the new one's readiness; a host whose window holds the module is
 * deferred without holding the slot (the others go on while its window runs); a canary whose healthcheck fails is put
 * back and the rollout pauses, and the other hosts see no create, stop or remove; an abort ends it; {@code mesh rollback}
 * restores the previous spec on every host, in waves, with every coordinator down; under {@code on-failure: revert}
 * the hosts done go back to the previous spec.
 */
@ExtendWith(Fleet.class)
class RolloutIT {
    /** The readiness each container must keep before its host counts done (ready.min-healthy). */
    static final Duration MIN_HEALTHY = Duration.ofSeconds(1);
    /** Docker's actions that change a container (a plan, and a waiting host, make none of them). */
    static final Set<String> CHANGES = Set.of("create", "start", "kill", "die", "stop", "destroy", "rename", "restart", "pause");

    static String manifest(String module, String version, boolean healthy) {
        return manifest(module, version, "pause", "[CMD, \"" + (healthy ? "true" : "false") + "\"]", "");
    }

    /**
     * @param test   the healthcheck's test
     * @param volume extra lines of the container (a volume)
     */
    static String manifest(String module, String version, String onFailure, String test, String volume) {
        return "module: " + module + "\nhosts: [\"*\"]\n"
                + "rollout: {canary: 1, max-parallel: 1, on-failure: " + onFailure + "}\n"
                + "containers:\n  app:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    env: {VERSION: \"" + version + "\"}\n"
                + "    network: none\n    stop-timeout: 2s\n" + volume
                + "    healthcheck: {test: " + test + ", interval: 1s, timeout: 1s, retries: 1}\n"
                + "    ready: {min-healthy: " + MIN_HEALTHY.toSeconds() + "s, deadline: 6s}\n"
                + "schedules:\n  maint:\n    cron: \"0 0 1 1 *\"\n    while-stopped: [app]\n"
                + "    step: {image: " + BUSYBOX + ", command: [sleep, \"18\"], network: none}\n    timeout: 2m\n";
    }

    @Test
    void wavesCanaryWindowAndRollbackOnThreeEngines(Fleet fleet) throws Exception {
        String module = "rollit" + String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
        URI first = fleet.coordinators().get(0);
        String coordinator = "--coordinator=" + first;
        List<String> hosts = fleet.hosts();
        Path dir = Files.createTempDirectory("rollout-it");
        Map<String, EngineEvents> events = new HashMap<>();
        try {
            Path v1 = Fleet.write(dir, "v1.yaml", manifest(module, "v1", true));
            MeshRun push1 = run("push", v1.toString(), "--revision", "v1", "--wait", "--timeout", "120s", "--interval", "300ms", coordinator);
            assertThat(push1.code).as(push1.text).isEqualTo(ExitCodes.OK);
            String push1Id = push1.out.substring(0, push1.out.indexOf(' '));
            assertThat(push1.out).as("push --wait shows the waves").contains("rollout " + module + ": rolling", "rollout " + module + ": done");
            for (String host : hosts) events.put(host, EngineEvents.record(host, fleet.dockerHost(host), module::equals));

            // A plan makes no Docker event on any engine.
            Path v2 = Fleet.write(dir, "v2.yaml", manifest(module, "v2", true));
            long planFrom = nowNanos();
            MeshRun plan = run("push", v2.toString(), "--plan", coordinator);
            assertThat(plan.code).as(plan.text).isEqualTo(ExitCodes.OK);
            assertThat(plan.out).contains("recreated");
            settle(events);
            for (String host : hosts) assertThat(changes(events.get(host), planFrom)).as("Docker events of the plan on %s", host).isEmpty();

            // A window holds the module on the second host; the push of v2 goes on without it, which a slot taken by the
            // deferred host (max-parallel 1) would have stopped until the window's end.
            String windowHost = hosts.get(1);
            CompletableFuture<MeshRun> window = CompletableFuture.supplyAsync(() ->
                    run("window", "run", module + "/maint", "--host", windowHost, "--timeout", "2m", coordinator));
            CuratorFramework zk = fleet.zk();
            ZkPaths paths = fleet.paths();
            String heldNode = paths.held(windowHost, module + "-app");
            await().atMost(Duration.ofSeconds(30)).until(() -> zk.checkExists().forPath(heldNode) != null);
            // Stopped by the window before the push: each host's first stop after the push is its apply's.
            await().atMost(Duration.ofSeconds(30)).until(() -> !"running".equals(single(fleet, windowHost, module).getState()));
            long v2From = nowNanos();
            MeshRun push2 = run("push", v2.toString(), "--revision", "v2", coordinator);
            assertThat(push2.code).as(push2.text).isEqualTo(ExitCodes.OK);
            List<String> others = hosts.stream().filter(h -> !h.equals(windowHost)).toList();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .until(() -> rollout(zk, paths, module).done().containsAll(others));
            assertThat(zk.checkExists().forPath(heldNode)).as("the window on %s still holds the module while the others are done", windowHost).isNotNull();
            RolloutRecord during = rollout(zk, paths, module);
            assertThat(during.applying()).as("the deferred host holds no place in the wave").doesNotContain(windowHost);
            JsonNode report = Json.MAPPER.readTree(zk.getData().forPath(paths.report(windowHost, module)));
            assertThat(report.path("outcome").asText()).as("report of %s during its window", windowHost).isEqualTo("deferred");
            MeshRun windowRun = window.get(90, TimeUnit.SECONDS);
            assertThat(windowRun.code).as(windowRun.text).isEqualTo(ExitCodes.OK);
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .until(() -> rollout(zk, paths, module).state() == RolloutState.DONE);
            for (String host : hosts) assertThat(fleet.env(host, single(fleet, host, module).getId())).as(host).contains("VERSION=v2");
            settle(events);
            // max-parallel 1, from the engines' events: no two hosts between a stop and the new container's readiness.
            List<long[]> spans = new ArrayList<>();
            for (String host : hosts) spans.add(stopToReady(events.get(host), v2From, host));
            spans.sort((a, b) -> Long.compare(a[0], b[0]));
            for (int i = 1; i < spans.size(); i++) {
                assertThat(spans.get(i)[0]).as("a stop of the next host after the previous host's readiness (%s)", describe(spans))
                        .isGreaterThanOrEqualTo(spans.get(i - 1)[1]);
            }
            assertThat(spans.get(0)[2]).as("the canary, %s, goes first", hosts.get(0)).isEqualTo(0);

            // A canary whose healthcheck fails: put back, the rollout paused, the other hosts untouched.
            Map<String, String> before = new HashMap<>();
            for (String host : hosts) before.put(host, single(fleet, host, module).getId());
            Path v3 = Fleet.write(dir, "v3.yaml", manifest(module, "v3", false));
            long v3From = nowNanos();
            MeshRun push3 = run("push", v3.toString(), "--revision", "v3", "--wait", "--timeout", "90s", "--interval", "300ms", coordinator);
            assertThat(push3.code).as(push3.text).isEqualTo(ExitCodes.FAILED);
            assertThat(push3.out).contains("is paused", "mesh rollout resume " + module);
            RolloutRecord paused = rollout(zk, paths, module);
            assertThat(paused.state()).isEqualTo(RolloutState.PAUSED);
            assertThat(paused.failed()).containsExactly(hosts.get(0));
            assertThat(paused.done()).isEmpty();
            Thread.sleep(3_000); // a host that wrongly went on would act within this
            settle(events);
            String canary = hosts.get(0);
            assertThat(single(fleet, canary, module).getId()).as("the canary runs its previous container again").isEqualTo(before.get(canary));
            assertThat(fleet.env(canary, single(fleet, canary, module).getId())).contains("VERSION=v2");
            // the new one was made, then put aside as <name>.mesh-failed for its logs (decision 10), not removed
            assertThat(changes(events.get(canary), v3From)).extracting(Event::getAction).contains("create", "rename");
            for (String host : hosts.subList(1, hosts.size())) {
                assertThat(changes(events.get(host), v3From)).as("Docker events on %s, which the paused rollout never reached", host).isEmpty();
                assertThat(single(fleet, host, module).getId()).isEqualTo(before.get(host));
                // SPEC keeps a report's outcome to applied | deferred | failed: a host the rollout keeps waiting is
                // deferred, its report's rollout says why, and push status (not the report) calls it waiting
                JsonNode kept = Json.MAPPER.readTree(zk.getData().forPath(paths.report(host, module)));
                assertThat(kept.path("push").asText()).isEqualTo(paused.push());
                assertThat(kept.path("outcome").asText()).as("report of %s, kept waiting", host).isEqualTo("deferred");
                // why, as it was when the host last applied: the canary's wait, or the pause (a move that changes
                // nothing for this host does not rewrite its report)
                assertThat(kept.path("rollout").asText()).containsAnyOf("waiting for the canaries", "the rollout of " + paused.push());
            }
            MeshRun pushStatus = run("status", paused.push(), coordinator);
            assertThat(pushStatus.out).as(pushStatus.text).contains("waiting");
            MeshRun status = run("rollout", "status", module, coordinator);
            assertThat(status.code).as(status.text).isEqualTo(ExitCodes.OK);
            assertThat(status.out).contains("paused", "failed " + canary);
            MeshRun abort = run("rollout", "abort", module, coordinator);
            assertThat(abort.code).as(abort.text).isEqualTo(ExitCodes.OK);
            assertThat(rollout(zk, paths, module).state()).isEqualTo(RolloutState.ABORTED);
            MeshRun again = run("rollout", "abort", module, coordinator);
            assertThat(again.code).as("an ended rollout cannot be aborted again: %s", again.text).isEqualTo(ExitCodes.BAD_INPUT);

            // mesh rollback to v1: an ordinary push, in waves, that restores v1's spec on every host, with every
            // coordinator down once it is taken (the agents move their own nodes of the rollout and derive it from them).
            MeshRun rollback = run("rollback", module, "--to", push1Id, coordinator);
            assertThat(rollback.code).as(rollback.text).isEqualTo(ExitCodes.OK);
            String rollbackId = rollback.out.substring(0, rollback.out.indexOf(' '));
            fleet.killCoordinator(1);
            fleet.killCoordinator(2);
            try {
                await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(300)).until(() -> {
                    RolloutRecord r = rollout(zk, paths, module);
                    return rollbackId.equals(r.push()) && r.state() == RolloutState.DONE;
                });
                for (String host : hosts) assertThat(fleet.env(host, single(fleet, host, module).getId())).as(host).contains("VERSION=v1");
                assertThat(rolloutNode(zk, paths, module).state()).as("the rollout node's own state: no coordinator up to fold it")
                        .isNotEqualTo(RolloutState.DONE);
            } finally {
                fleet.up(); // both coordinators again
            }
            // The first coordinator back folds what the hosts' nodes say into the rollout node (SPEC's fields for zkCli).
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(300)).until(() -> {
                RolloutRecord folded = rolloutNode(zk, paths, module);
                return rollbackId.equals(folded.push()) && folded.state() == RolloutState.DONE && folded.done().containsAll(hosts);
            });
            MeshRun rolledBack = run("status", rollbackId, coordinator);
            assertThat(rolledBack.code).as(rolledBack.text).isEqualTo(ExitCodes.OK);
            assertThat(rolledBack.out).contains("state applied");

            // An agent killed mid-recreate keeps its place in the wave although its lease goes with its session: nobody
            // else stops a container until it is back and its container ready (max-parallel 1, from the engines' events).
            Path v5 = Fleet.write(dir, "v5.yaml", manifest(module, "v5", true).replace("min-healthy: 1s, deadline: 6s", "min-healthy: 4s, deadline: 30s"));
            long v5From = nowNanos();
            MeshRun push5 = run("push", v5.toString(), "--revision", "v5", coordinator);
            assertThat(push5.code).as(push5.text).isEqualTo(ExitCodes.OK);
            List<String> wave = hosts.subList(1, hosts.size());
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                    .until(() -> rollout(zk, paths, module).applying().stream().anyMatch(wave::contains));
            String killed = rollout(zk, paths, module).applying().stream().filter(wave::contains).findFirst().orElseThrow();
            String other = wave.stream().filter(h -> !h.equals(killed)).findFirst().orElseThrow();
            int killedIndex = hosts.indexOf(killed) + 1;
            fleet.stopAgent(killedIndex, true);
            try {
                Thread.sleep(22_000); // past its session (15 s): its lease is gone
                settle(events);
                assertThat(changes(events.get(other), v5From)).extracting(Event::getAction).as("%s while %s's agent is dead", other, killed)
                        .doesNotContain("create", "kill", "stop");
                assertThat(rollout(zk, paths, module).applying()).as("the dead host keeps its place").containsExactly(killed);
            } finally {
                fleet.startAgent(killedIndex);
            }
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(300))
                    .until(() -> rollout(zk, paths, module).state() == RolloutState.DONE);
            settle(events);
            long killedReady = events.get(killed).all().stream().filter(e -> e.getTimeNano() != null && e.getTimeNano() >= v5From
                    && e.getAction() != null && e.getAction().equals("health_status: healthy")).mapToLong(Event::getTimeNano).max().orElseThrow();
            long otherStop = changes(events.get(other), v5From).stream().filter(e -> "kill".equals(e.getAction()))
                    .mapToLong(Event::getTimeNano).min().orElseThrow();
            assertThat(otherStop).as("%s stops its container only after %s's new one is healthy again", other, killed).isGreaterThan(killedReady);
            for (String host : hosts) assertThat(fleet.env(host, single(fleet, host, module).getId())).as(host).contains("VERSION=v5");

            // on-failure: revert. The last engine's own named volume says "fail" to v4's healthcheck (a volume is
            // per engine), so the canary is done before a host fails: then every host goes back to v5, the canary too,
            // each in a slot.
            String flagVolume = module + "-flag";
            String failing = hosts.get(hosts.size() - 1);
            markFailing(fleet, failing, flagVolume);
            Path v4 = Fleet.write(dir, "v4.yaml", manifest(module, "v4", "revert", "[CMD-SHELL, \"test ! -e /flag/fail\"]",
                    "    volumes: [\"" + flagVolume + ":/flag:ro\"]\n"));
            long v4From = nowNanos();
            MeshRun push4 = run("push", v4.toString(), "--revision", "v4", "--wait", "--timeout", "120s", "--interval", "300ms", coordinator);
            assertThat(push4.code).as(push4.text).isEqualTo(ExitCodes.FAILED);
            assertThat(push4.out).contains("is reverted");
            RolloutRecord reverted = rollout(zk, paths, module);
            assertThat(reverted.state()).isEqualTo(RolloutState.REVERTED);
            assertThat(reverted.failed()).containsExactly(failing);
            assertThat(reverted.done()).as("the canary was done before the failure").contains(canary);
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(300)).untilAsserted(() -> {
                for (String host : hosts) assertThat(fleet.env(host, single(fleet, host, module).getId())).as(host).contains("VERSION=v5");
            });
            settle(events);
            assertThat(changes(events.get(canary), v4From)).extracting(Event::getAction).as("the canary went to v4 and back")
                    .filteredOn("create"::equals).hasSize(2);
            String push4Id = push4.out.substring(0, push4.out.indexOf(' '));
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(300)).untilAsserted(() ->
                    new CoordinatorClient(first, null).get("/v1/pushes/" + push4Id).json().path("targets").forEach(t ->
                            assertThat(t.path("state").asText()).as("v4 on %s, which runs v5 again", t.path("host").asText()).isNotEqualTo("applied")));
        } finally {
            events.values().forEach(EngineEvents::close);
            fleet.removeModule(module);
            for (String host : hosts) {
                try {
                    fleet.docker(host).removeVolumeCmd(module + "-flag").exec();
                } catch (RuntimeException e) {
                    // not made on that engine
                }
            }
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        }
    }

    record MeshRun(int code, String out, String text) {}

    /** Puts a file {@code fail} into the named volume {@code volume} of that host's engine only (made if missing). */
    static void markFailing(Fleet fleet, String host, String volume) {
        var docker = fleet.docker(host);
        docker.createVolumeCmd().withName(volume).exec();
        String id = docker.createContainerCmd(BUSYBOX).withCmd("touch", "/flag/fail")
                .withHostConfig(com.github.dockerjava.api.model.HostConfig.newHostConfig().withNetworkMode("none")
                        .withBinds(new com.github.dockerjava.api.model.Bind(volume, new com.github.dockerjava.api.model.Volume("/flag"))))
                .exec().getId();
        docker.startContainerCmd(id).exec();
        assertThat(docker.waitContainerCmd(id).start().awaitStatusCode(30, TimeUnit.SECONDS)).isZero();
        docker.removeContainerCmd(id).exec();
    }

    private static MeshRun run(String... args) {
        FleetIT.Run r = mesh(args);
        return new MeshRun(r.code(), r.out(), "mesh " + String.join(" ", args) + " -> " + r.code() + "\n" + r.out() + r.err());
    }

    /**
     * @return the module's rollout as its hosts' nodes say (decision 13): with every coordinator down the rollout node's
     *         own lists are not folded, the hosts' nodes are the truth
     */
    private static RolloutRecord rollout(CuratorFramework zk, ZkPaths paths, String module) throws Exception {
        RolloutRecord r = RolloutNodes.readView(zk, paths, module);
        if (r == null) throw new IllegalStateException(paths.rollout(module) + " is missing or not a rollout record");
        return r;
    }

    /** @return the rollout node itself, as {@code zkCli get} shows it: its lists are a coordinator's fold */
    private static RolloutRecord rolloutNode(CuratorFramework zk, ZkPaths paths, String module) throws Exception {
        return Json.read(zk.getData().forPath(paths.rollout(module)), RolloutRecord.class);
    }

    private static long nowNanos() {
        java.time.Instant i = java.time.Instant.now();
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    }

    private static void settle(Map<String, EngineEvents> events) {
        events.values().forEach(EngineEvents::settle);
    }

    /** @return the engine's events since {@code from} that change a container */
    private static List<Event> changes(EngineEvents e, long from) {
        return e.all().stream().filter(ev -> ev.getTimeNano() != null && ev.getTimeNano() >= from && CHANGES.contains(ev.getAction())).toList();
    }

    /**
     * @return {from, to, index}: the old container's first stop (kill) and the new one's first {@code healthy} plus
     *         min-healthy, in epoch ns, after {@code from}; index is the host's position in the fleet
     */
    private static long[] stopToReady(EngineEvents e, long from, String host) {
        long stop = -1, ready = -1;
        for (Event ev : e.all()) {
            if (ev.getTimeNano() == null || ev.getTimeNano() < from) continue;
            if (stop < 0 && ("kill".equals(ev.getAction()) || "stop".equals(ev.getAction()))) stop = ev.getTimeNano();
            if (stop >= 0 && ready < 0 && ev.getAction() != null && ev.getAction().startsWith("health_status") && ev.getAction().contains("healthy")
                    && !ev.getAction().contains("unhealthy")) {
                ready = ev.getTimeNano() + MIN_HEALTHY.toNanos();
            }
        }
        assertThat(stop).as("a stop on %s after the push", host).isPositive();
        assertThat(ready).as("a healthy new container on %s after its stop", host).isPositive();
        return new long[] {stop, ready, Integer.parseInt(host.substring(host.lastIndexOf('-') + 1)) - 1};
    }

    private static String describe(List<long[]> spans) {
        StringBuilder b = new StringBuilder();
        for (long[] s : spans) b.append("host ").append(s[2] + 1).append(": stop ").append(s[0] / 1_000_000).append(" ready ").append(s[1] / 1_000_000).append("; ");
        return b.toString();
    }

    private static Container single(Fleet fleet, String host, String module) {
        // The window's step container carries the module's label too: the container is the one named <module>-app.
        List<Container> cs = fleet.containers(host, module).stream().filter(c -> List.of(c.getNames()).contains("/" + module + "-app")).toList();
        assertThat(cs).as("containers %s-app on %s", module, host).hasSize(1);
        return cs.get(0);
    }

}
