package io.mesh.fleet;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.dockerjava.api.model.Event;
import io.mesh.client.MeshCli;
import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import static io.mesh.fleet.FleetIT.BUSYBOX;
import static io.mesh.fleet.FleetIT.mesh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fleet-wide windows on the fleet (three real engines; SPEC.md "Fleet-wide windows", docs/decisions/0016-window-slots.md),
 * checked from each engine's own events: one schedule firing at the same cron minute on every host with
 * {@code max-concurrent: 1} runs its three windows one at a time (no host stops its container before the one before
 * it started its container again), all three run, and the queue is visible ({@code mesh windows}, the slot's queue
 * nodes) while they wait; a group named by two modules on two hosts limits both; a window not begun by its
 * {@code start-by} is reported {@code skipped} and its engine sees no stop.
 */
@ExtendWith(Fleet.class)
class WindowLimitsIT {
    /** How long the step of a limited window runs. */
    static final int STEP_SECONDS = 3;

    static String module(String module, String hosts, String cron, String limits, int stepSeconds) {
        return "module: " + module + "\nhosts: " + hosts + "\n"
                + "containers:\n  app:\n    image: " + BUSYBOX + "\n"
                + "    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    network: none\n    stop-timeout: 2s\n    ready: {min-healthy: 1s}\n"
                + "schedules:\n  gc:\n    cron: \"" + cron + "\"\n    timezone: UTC\n    while-stopped: [app]\n"
                + "    step: {image: " + BUSYBOX + ", command: [sleep, \"" + stepSeconds + "\"], network: none}\n    timeout: 1m\n"
                + limits;
    }

    @Test
    void windowsOfOneCronMinuteTakeTheirSlotsOneAtATime(Fleet fleet) throws Exception {
        String id = String.format("%05x", ThreadLocalRandom.current().nextInt(1 << 20));
        String gc = "wl" + id, ga = "wga" + id, gb = "wgb" + id, late = "wlate" + id, group = "reg" + id;
        List<String> hosts = fleet.hosts();
        String coordinator = "--coordinator=" + fleet.coordinators().get(0);
        CuratorFramework zk = fleet.zk();
        ZkPaths paths = fleet.paths();
        // A cron minute far enough ahead for every agent to arm it (the push and its applies take a few seconds).
        // The first whole minute at least 20 s ahead: between 20 and 80 s of waiting.
        ZonedDateTime fire = ZonedDateTime.now(ZoneOffset.UTC).plusSeconds(20).plusMinutes(1).minusNanos(1).truncatedTo(ChronoUnit.MINUTES);
        String cron = fire.getMinute() + " " + fire.getHour() + " * * *";
        Path dir = Files.createTempDirectory("window-limits-it");
        Map<String, EngineEvents> events = new HashMap<>();
        List<String> modules = List.of(gc, ga, gb, late);
        try {
            Path manifest = dir.resolve("m.yaml");
            Files.writeString(manifest, String.join("---\n",
                    module(gc, "[\"*\"]", cron, "    max-concurrent: 1\n", STEP_SECONDS),
                    module(ga, "[" + hosts.get(0) + "]", cron, "    group: " + group + "\n", STEP_SECONDS),
                    module(gb, "[" + hosts.get(1) + "]", cron, "    group: " + group + "\n    max-concurrent: 1\n", STEP_SECONDS),
                    module(late, "[\"*\"]", cron, "    max-concurrent: 1\n    start-by: 4s\n", 10)));
            FleetIT.Run push = mesh("push", manifest.toString(), "--revision", "r1", "--wait", "--timeout", "60s", "--interval", "300ms", coordinator);
            assertThat(push.code()).as(push.out() + push.err()).isEqualTo(MeshCli.OK);
            for (String host : hosts) events.put(host, EngineEvents.record(host, fleet.dockerHost(host), modules::contains));
            assertThat(Instant.now()).as("pushed and applied before the cron minute").isBefore(fire.toInstant().minusSeconds(2));

            // While they wait: the queue, from ZooKeeper's nodes and from mesh windows.
            String gcSlot = paths.windowSlots(gc, "gc");
            int mostQueued = 0;
            String windowsSeen = "";
            Instant until = fire.toInstant().plusSeconds(60);
            while (Instant.now().isBefore(until)) {
                int queued = children(zk, ZkPaths.slotQueue(gcSlot)).size();
                if (queued > mostQueued) {
                    mostQueued = queued;
                    FleetIT.Run w = mesh("windows", coordinator);
                    windowsSeen = w.out();
                }
                if (Instant.now().isAfter(fire.toInstant().plusSeconds(3)) && queued == 0
                        && children(zk, ZkPaths.slotClaims(gcSlot)).isEmpty() && lastWindowsDone(zk, paths, hosts, gc)) break;
                Thread.sleep(100);
            }
            assertThat(mostQueued).as("windows seen waiting at once in the slot's queue").isEqualTo(2);
            assertThat(windowsSeen).contains("window-" + gc + "-gc", "runs", "waits 1", "waits 2");
            await().atMost(Duration.ofSeconds(40)).until(() -> lastWindowsDone(zk, paths, List.of(hosts.get(0)), ga)
                    && lastWindowsDone(zk, paths, List.of(hosts.get(1)), gb) && lastWindowsDone(zk, paths, hosts, late));
            events.values().forEach(EngineEvents::settle);
            long from = EngineEvents.nanos(fire.toInstant());

            // max-concurrent 1: three windows, one at a time, from the engines' own events
            List<long[]> spans = new ArrayList<>();
            for (String host : hosts) {
                spans.add(span(events.get(host), gc, from, host));
                assertThat(stepRan(events.get(host), gc, from)).as("the step of %s on %s ran", gc, host).isTrue();
                assertThat(lastWindow(zk, paths, host, gc).path("outcome").asText()).isEqualTo("succeeded");
            }
            assertNoOverlap(spans, gc);

            // a group named by two modules on two hosts: one window at a time across both
            assertNoOverlap(List.of(span(events.get(hosts.get(0)), ga, from, hosts.get(0)), span(events.get(hosts.get(1)), gb, from, hosts.get(1))), group);

            // start-by 4s with a 10 s step: the first window runs, the two others are skipped and stop nothing
            int ran = 0;
            for (String host : hosts) {
                JsonNode w = lastWindow(zk, paths, host, late);
                if (w.path("outcome").asText().equals("skipped")) {
                    assertThat(w.path("error").asText()).contains("start-by passed", "window-" + late + "-gc");
                    assertThat(stops(events.get(host), late, from)).as("Docker events of the skipped window on %s", host).isEmpty();
                } else {
                    assertThat(w.path("outcome").asText()).isEqualTo("succeeded");
                    ran++;
                }
            }
            assertThat(ran).as("windows of %s that ran", late).isEqualTo(1);
            assertThat(children(zk, paths.slots() + "/window-" + late + "-gc/claims")).as("claims left").isEmpty();
        } finally {
            events.values().forEach(EngineEvents::close);
            for (String m : modules) fleet.removeModule(m);
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        }
    }

    private static void assertNoOverlap(List<long[]> spans, String what) {
        List<long[]> sorted = new ArrayList<>(spans);
        sorted.sort(Comparator.comparingLong(s -> s[0]));
        for (int i = 1; i < sorted.size(); i++) {
            assertThat(sorted.get(i)[0]).as("%s: a window stopped its container at %s while another's was stopped until %s", what,
                    EngineEvents.at(sorted.get(i)[0]), EngineEvents.at(sorted.get(i - 1)[1])).isGreaterThan(sorted.get(i - 1)[1]);
        }
    }

    /** @return {stop, start}: the first stop of {@code <module>-app} after {@code from} and the start that follows, epoch ns */
    private static long[] span(EngineEvents e, String module, long from, String host) {
        long stop = -1, start = -1;
        for (Event ev : e.all()) {
            if (EngineEvents.time(ev) < from || !(module + "-app").equals(EngineEvents.name(ev))) continue;
            String a = EngineEvents.action(ev);
            if (stop < 0 && ("kill".equals(a) || "stop".equals(a) || "die".equals(a))) stop = EngineEvents.time(ev);
            else if (stop >= 0 && "start".equals(a)) {
                start = EngineEvents.time(ev);
                break;
            }
        }
        assertThat(stop).as("a stop of %s-app on %s after the cron time", module, host).isPositive();
        assertThat(start).as("a start of %s-app on %s after its stop", module, host).isPositive();
        return new long[] {stop, start};
    }

    private static List<Event> stops(EngineEvents e, String module, long from) {
        return e.all().stream().filter(ev -> EngineEvents.time(ev) >= from && (module + "-app").equals(EngineEvents.name(ev))
                && List.of("kill", "stop", "die").contains(EngineEvents.action(ev))).toList();
    }

    private static boolean stepRan(EngineEvents e, String module, long from) {
        return e.all().stream().anyMatch(ev -> EngineEvents.time(ev) >= from && "start".equals(EngineEvents.action(ev))
                && EngineEvents.name(ev) != null && EngineEvents.name(ev).startsWith(module + ".gc."));
    }

    private static JsonNode lastWindow(CuratorFramework zk, ZkPaths paths, String host, String module) throws Exception {
        return Json.MAPPER.readTree(zk.getData().forPath(paths.report(host, module))).path("lastWindow");
    }

    /** @return true when each host's report has a last window of this cron minute's fire that ended */
    private static boolean lastWindowsDone(CuratorFramework zk, ZkPaths paths, List<String> hosts, String module) throws Exception {
        for (String host : hosts) {
            JsonNode w = lastWindow(zk, paths, host, module);
            if (w.isMissingNode() || w.isNull() || !w.hasNonNull("finishedAt")) return false;
        }
        return true;
    }

    private static List<String> children(CuratorFramework zk, String path) throws Exception {
        return zk.checkExists().forPath(path) == null ? List.of() : zk.getChildren().forPath(path);
    }
}
