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
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;

import static io.mesh.fleet.FleetIT.BUSYBOX;
import static io.mesh.fleet.FleetIT.mesh;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fleet-wide maintenance on the fleet (three real engines; SPEC.md "Fleet-wide windows", "Operator holds",
 * "Freezes"), checked from each engine's own events:
 * <ul>
 *   <li>one schedule firing at the same cron minute on every host with {@code max-concurrent: 1} runs its three
 *       windows one at a time (no host stops its container before the previous one started its container again), all
 *       three run, and the queue is visible ({@code mesh windows}, the slot's queue nodes) while they wait; a group
 *       named by two modules on two hosts limits both; a window not begun by its {@code start-by} is reported
 *       {@code skipped} and its engine sees no stop (docs/decisions/0016-window-slots.md);</li>
 *   <li>an operator hold survives an agent restart, keeps a push's apply off its container (the module's other
 *       container is applied), and ends at its expiry, the push landing with no new push (decision 15);</li>
 *   <li>a freeze defers a push on every host with no Docker event, and the push lands when it thaws (decision 14).</li>
 * </ul>
 * The hold's and the freeze's checks run while the windows wait for their cron minute.
 */
@ExtendWith(Fleet.class)
class MaintenanceIT {
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
    void windowLimitsOperatorHoldsAndFreezesOnThreeEngines(Fleet fleet) throws Exception {
        String id = String.format("%05x", ThreadLocalRandom.current().nextInt(1 << 20));
        String gc = "wl" + id, ga = "wga" + id, gb = "wgb" + id, late = "wlate" + id, group = "reg" + id;
        String held = "mh" + id, frozen = "mf" + id;
        List<String> hosts = fleet.hosts();
        String coordinator = "--coordinator=" + fleet.coordinators().get(0);
        CuratorFramework zk = fleet.zk();
        ZkPaths paths = fleet.paths();
        Path dir = Files.createTempDirectory("maintenance-it");
        Map<String, EngineEvents> events = new HashMap<>();
        List<String> modules = List.of(gc, ga, gb, late, held, frozen);
        try {
            for (String host : hosts) events.put(host, EngineEvents.record(host, fleet.dockerHost(host), modules::contains));
            FleetIT.Run r1 = mesh("push", Fleet.write(dir, "r1.yaml", plain(held, "v1") + "---\n" + plain(frozen, "v1")).toString(),
                    "--revision", "v1", "--wait", "--timeout", "60s", "--interval", "300ms", coordinator);
            assertThat(r1.code()).as(r1.out() + r1.err()).isEqualTo(ExitCodes.OK);

            // An operator hold on the second host's app, placed before its agent restarts.
            String holdHost = hosts.get(1), holdContainer = held + "-app";
            FleetIT.Run hold = mesh("hold", holdHost, holdContainer, "--reason", "disk check", "--for", "60s", coordinator);
            assertThat(hold.code()).as(hold.out() + hold.err()).isEqualTo(ExitCodes.OK);
            Instant holdEnds = Instant.now().plusSeconds(60);
            String heldId = container(fleet, holdHost, holdContainer);
            fleet.stopAgent(2, false);
            fleet.startAgent(2);
            assertThat(zk.checkExists().forPath(paths.held(holdHost, holdContainer)).getEphemeralOwner()).as("a persistent node").isZero();

            // The windows' cron minute: the first whole minute at least 20 s ahead (between 20 and 80 s of waiting).
            ZonedDateTime fire = ZonedDateTime.now(ZoneOffset.UTC).plusSeconds(20).plusMinutes(1).minusNanos(1).truncatedTo(ChronoUnit.MINUTES);
            String cron = fire.getMinute() + " " + fire.getHour() + " * * *";
            Path manifest = Fleet.write(dir, "m.yaml", String.join("---\n",
                    module(gc, "[\"*\"]", cron, "    max-concurrent: 1\n", STEP_SECONDS),
                    module(ga, "[" + hosts.get(0) + "]", cron, "    group: " + group + "\n", STEP_SECONDS),
                    module(gb, "[" + hosts.get(1) + "]", cron, "    group: " + group + "\n    max-concurrent: 1\n", STEP_SECONDS),
                    module(late, "[\"*\"]", cron, "    max-concurrent: 1\n    start-by: 4s\n", 10)));
            FleetIT.Run push = mesh("push", manifest.toString(), "--revision", "r1", "--wait", "--timeout", "60s", "--interval", "300ms", coordinator);
            assertThat(push.code()).as(push.out() + push.err()).isEqualTo(ExitCodes.OK);
            assertThat(Instant.now()).as("pushed and applied before the cron minute").isBefore(fire.toInstant().minusSeconds(2));

            // While they wait: the queue, from ZooKeeper's nodes and from mesh windows (watched in the background).
            String gcSlot = paths.windowSlots(gc, "gc");
            CompletableFuture<String[]> queueSeen = CompletableFuture.supplyAsync(() -> {
                int most = 0;
                String seen = "";
                Instant until = fire.toInstant().plusSeconds(60);
                try {
                    while (Instant.now().isBefore(until)) {
                        // at the cron instant all three queue for a moment; what counts is who waits while one runs
                        int queued = waitingWhileOneRuns(zk, gcSlot);
                        if (queued > most) {
                            most = queued;
                            seen = mesh("windows", coordinator).out();
                        }
                        if (Instant.now().isAfter(fire.toInstant().plusSeconds(3)) && children(zk, ZkPaths.slotQueue(gcSlot)).isEmpty()
                                && children(zk, ZkPaths.slotClaims(gcSlot)).isEmpty() && lastWindowsDone(zk, paths, hosts, gc)) break;
                        Thread.sleep(100);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                return new String[] {String.valueOf(most), seen};
            });

            // The hold, obeyed by the restarted agent: a push's apply leaves the held app alone and applies its side.
            long v2From = EngineEvents.nanos(Instant.now());
            FleetIT.Run v2 = mesh("push", Fleet.write(dir, "held-v2.yaml", plain(held, "v2")).toString(), "--revision", "v2", coordinator);
            assertThat(v2.code()).as(v2.out() + v2.err()).isEqualTo(ExitCodes.OK);
            for (String host : hosts) {
                await().atMost(Duration.ofSeconds(30)).until(() -> fleet.env(host, held + "-side").contains("VERSION=v2"));
                if (!host.equals(holdHost)) await().atMost(Duration.ofSeconds(30)).until(() -> fleet.env(host, holdContainer).contains("VERSION=v2"));
            }
            assertThat(Instant.now()).as("checked before the hold's end").isBefore(holdEnds);
            events.get(holdHost).settle();
            assertThat(container(fleet, holdHost, holdContainer)).as("the held container on %s", holdHost).isEqualTo(heldId);
            assertThat(changes(events.get(holdHost), holdContainer, v2From)).as("Docker events of the held container").isEmpty();
            // ... and ends at its expiry: the push lands there with no new push.
            await().atMost(Duration.ofSeconds(60)).until(() -> fleet.env(holdHost, holdContainer).contains("VERSION=v2"));
            assertThat(Instant.now()).as("landed after the hold's until").isAfter(holdEnds.minusSeconds(2));
            await().atMost(Duration.ofSeconds(10)).until(() -> zk.checkExists().forPath(paths.held(holdHost, holdContainer)) == null);

            // A freeze defers a push on every host, with no Docker event; the push lands when it thaws.
            FleetIT.Run freeze = mesh("freeze", frozen, "--for", "10m", "--reason", "release weekend", coordinator);
            assertThat(freeze.code()).as(freeze.out() + freeze.err()).isEqualTo(ExitCodes.OK);
            long f2From = EngineEvents.nanos(Instant.now());
            FleetIT.Run f2 = mesh("push", Fleet.write(dir, "frozen-v2.yaml", plain(frozen, "v2")).toString(), "--revision", "v2", coordinator);
            assertThat(f2.code()).as(f2.out() + f2.err()).isEqualTo(ExitCodes.OK);
            String f2Push = f2.out().substring(0, f2.out().indexOf(' '));
            await().atMost(Duration.ofSeconds(30)).until(() -> mesh("status", f2Push, coordinator).out().lines()
                    .filter(l -> hosts.stream().anyMatch(l::startsWith) && l.contains(frozen) && l.contains("deferred") && l.contains("frozen: release weekend")).count() == hosts.size());
            Thread.sleep(2_000); // deliberate: a host that wrongly applied would act within this
            for (String host : hosts) {
                events.get(host).settle();
                assertThat(changes(events.get(host), frozen + "-app", f2From)).as("Docker events of the frozen module on %s", host).isEmpty();
                assertThat(fleet.env(host, frozen + "-app")).contains("VERSION=v1");
                JsonNode report = Json.MAPPER.readTree(zk.getData().forPath(paths.report(host, frozen)));
                assertThat(report.path("outcome").asText()).isEqualTo("deferred");
                assertThat(report.path("freeze").path("reason").asText()).isEqualTo("release weekend");
            }
            FleetIT.Run thaw = mesh("thaw", frozen, coordinator);
            assertThat(thaw.code()).as(thaw.out() + thaw.err()).isEqualTo(ExitCodes.OK);
            for (String host : hosts) await().atMost(Duration.ofSeconds(30)).until(() -> fleet.env(host, frozen + "-app").contains("VERSION=v2"));

            String[] seen = queueSeen.get(150, java.util.concurrent.TimeUnit.SECONDS);
            int mostQueued = Integer.parseInt(seen[0]);
            String windowsSeen = seen[1];
            assertThat(mostQueued).as("windows seen waiting in the slot's queue while one runs").isEqualTo(2);
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

    /** A module of two containers on every host, app and side, each carrying {@code VERSION}. */
    static String plain(String module, String version) {
        StringBuilder b = new StringBuilder("module: " + module + "\nhosts: [\"*\"]\ncontainers:\n");
        for (String c : List.of("app", "side")) {
            b.append("  ").append(c).append(":\n    image: ").append(BUSYBOX).append("\n")
                    .append("    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n")
                    .append("    env: {VERSION: \"").append(version).append("\"}\n")
                    .append("    network: none\n    stop-timeout: 2s\n    ready: {min-healthy: 1s}\n");
        }
        return b.toString();
    }

    /** @return the id of the container of that Docker name on that host's engine */
    private static String container(Fleet fleet, String host, String name) {
        return fleet.docker(host).inspectContainerCmd(name).exec().getId();
    }

    /** @return the engine's events since {@code from} that change the named container */
    private static List<Event> changes(EngineEvents e, String name, long from) {
        return e.all().stream().filter(ev -> EngineEvents.time(ev) >= from && name.equals(EngineEvents.name(ev))
                && RolloutIT.CHANGES.contains(EngineEvents.action(ev))).toList();
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

    /**
     * @return how many windows wait in the slot's queue while at least one holds a claim, 0 when none holds one, and -1
     *     when a claim came or went during the reading, so that the queue and the claims do not describe one moment
     */
    private static int waitingWhileOneRuns(CuratorFramework zk, String slot) throws Exception {
        java.util.Set<String> claims = new java.util.HashSet<>(children(zk, ZkPaths.slotClaims(slot)));
        if (claims.isEmpty()) return 0;
        java.util.Set<String> running = new java.util.HashSet<>();
        for (String c : claims) {
            try {
                running.add(Json.read(zk.getData().forPath(slot + "/claims/" + c), io.mesh.wire.SlotRecord.class).window());
            } catch (Exception e) {
                return -1; // gone meanwhile
            }
        }
        int n = 0;
        for (String q : children(zk, ZkPaths.slotQueue(slot))) {
            try {
                // WindowSlot leaves the queue before it claims; this guards against a slot that did not
                if (!running.contains(Json.read(zk.getData().forPath(slot + "/queue/" + q), io.mesh.wire.SlotRecord.class).window())) n++;
            } catch (Exception e) {
                // gone meanwhile
            }
        }
        // a claim is named by its window (host--module--window id, each window's id its own), so equal sets mean no
        // claim came or went while the queue was read
        return claims.equals(new java.util.HashSet<>(children(zk, ZkPaths.slotClaims(slot)))) ? n : -1;
    }

    private static List<String> children(CuratorFramework zk, String path) throws Exception {
        return zk.checkExists().forPath(path) == null ? List.of() : zk.getChildren().forPath(path);
    }
}
