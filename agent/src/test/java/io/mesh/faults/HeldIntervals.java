package io.mesh.faults;

import com.github.dockerjava.api.model.Event;
import io.mesh.docker.Labels;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZkTxnLog;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ZkPaths;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The checker's rule for held containers, from evidence outside mesh: held intervals (a held node's life, from
 * ZooKeeper's transaction log) against Docker's events (recorded live). Shared by the history checker and the fault
 * tests. For each interval:
 * <ul>
 *   <li>no create, destroy or rename of the held container (or of a replacement under its name) inside it;</li>
 *   <li>at most one stop and one start of it inside it; the stop (and its signals, {@code kill} events) before its
 *       window's step container starts, the start after that step container died: so the only hand on it is its own
 *       window's;</li>
 *   <li>it runs when the interval ends (every window ends with its containers running).</li>
 * </ul>
 */
final class HeldIntervals {
    private HeldIntervals() {}

    /** A held node's life, from the transaction log. */
    record Held(String host, String container, String containerId, String window, long createdMs, long deletedMs) {}

    /** Held nodes of the given modules, create to delete; merged per (container, window) when a node was re-created. */
    static List<Held> of(List<ZkTxnLog.Change> changes, ZkPaths paths, Set<String> modules, List<String> violations) {
        Map<String, HeldRecord> open = new HashMap<>();
        Map<String, Long> openedAt = new HashMap<>();
        Map<String, Held> byWindow = new LinkedHashMap<>();
        String prefix = paths.held() + "/";
        for (ZkTxnLog.Change c : changes) {
            if (!c.path().startsWith(prefix)) continue;
            String[] parts = c.path().substring(prefix.length()).split("/");
            if (parts.length != 2) continue;
            String container = parts[1];
            String module = container.contains("-") ? container.substring(0, container.indexOf('-')) : container;
            if (!modules.contains(module)) continue;
            if (c.kind() == ZkTxnLog.Kind.CREATE || c.kind() == ZkTxnLog.Kind.SET) {
                HeldRecord r = Json.read(c.data(), HeldRecord.class);
                open.put(c.path(), r);
                openedAt.putIfAbsent(c.path(), c.time());
            } else {
                HeldRecord r = open.remove(c.path());
                Long from = openedAt.remove(c.path());
                if (r == null || from == null) continue;
                String key = container + "|" + r.window();
                Held prev = byWindow.get(key);
                long start = prev == null ? from : Math.min(prev.createdMs(), from);
                byWindow.put(key, new Held(parts[0], container, r.containerId(), r.window(), start, c.time()));
            }
        }
        for (Map.Entry<String, HeldRecord> o : open.entrySet()) {
            violations.add("held node " + o.getKey() + " of window " + o.getValue().window() + " was never deleted");
        }
        return new ArrayList<>(byWindow.values());
    }

    /** Rules for one held interval (see the class comment); what breaks them is added to {@code violations}. */
    static void check(Held h, List<Event> docker, List<String> violations) {
        long from = h.createdMs() * 1_000_000L;
        long to = (h.deletedMs() + 1) * 1_000_000L;
        String what = h.container() + " held by " + h.window() + " [" + Instant.ofEpochMilli(h.createdMs()) + ", "
                + Instant.ofEpochMilli(h.deletedMs()) + "]";
        // The step container is created before the first stop (it is Docker's own mark of the open window); it is
        // *started* only after every held container stopped.
        long stepStarted = Long.MAX_VALUE, stepDied = -1;
        List<Event> inside = new ArrayList<>();
        boolean running = true;   // a held container existed and ran when its window was opened, unless events say otherwise
        boolean seen = false;
        for (Event e : docker) {
            long t = e.getTimeNano() == null ? 0 : e.getTimeNano();
            String action = TestDocker.action(e);
            String name = TestDocker.name(e);
            Map<String, String> attrs = e.getActor() == null || e.getActor().getAttributes() == null ? Map.of() : e.getActor().getAttributes();
            if (h.window().equals(attrs.get(Labels.WINDOW))) {
                if (action.equals("start")) stepStarted = Math.min(stepStarted, t);
                if (action.equals("die")) stepDied = Math.max(stepDied, t);
                continue;
            }
            boolean ours = h.containerId().equals(e.getId());
            boolean sameName = h.container().equals(name) || (name != null && name.startsWith(h.container() + ".mesh-"));
            if (ours && t < to) {
                if (action.equals("start")) { running = true; seen = true; }
                if (action.equals("die")) { running = false; seen = true; }
            }
            if (t <= from || t >= to) continue;
            if (ours || sameName) inside.add(e);
        }
        int starts = 0, stops = 0;
        for (Event e : inside) {
            String action = TestDocker.action(e);
            long t = e.getTimeNano();
            switch (action) {
                case "create", "destroy", "rename" -> violations.add(what + ": " + action + " of " + TestDocker.name(e) + " at " + at(t));
                case "start" -> {
                    if (!h.containerId().equals(e.getId())) {
                        violations.add(what + ": start of another container named " + TestDocker.name(e) + " at " + at(t));
                    } else if (++starts > 1) {
                        violations.add(what + ": started more than once (again at " + at(t) + ")");
                    } else if (stepStarted != Long.MAX_VALUE && t < stepDied) {
                        violations.add(what + ": started at " + at(t) + " before its window's step ended");
                    }
                }
                case "stop" -> {
                    if (++stops > 1) violations.add(what + ": stopped more than once (again at " + at(t) + ")");
                    else if (stepStarted != Long.MAX_VALUE && t > stepStarted) violations.add(what + ": stopped at " + at(t) + " while its window's step ran");
                }
                case "kill" -> {
                    // a stop's signals come before the step starts; a signal after that is someone else's hand
                    if (stepStarted != Long.MAX_VALUE && t > stepStarted) violations.add(what + ": killed at " + at(t) + " while its window's step ran");
                }
                default -> {
                    // die, attach ... : follow from a stop or a start
                }
            }
        }
        if (seen && !running) violations.add(what + ": not running when its window ended");
    }

    static String at(long nanos) {
        return Instant.ofEpochSecond(0, nanos).toString();
    }
}
