package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.ScheduleSpec;
import io.mesh.manifest.WireName;
import io.mesh.wire.Json;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * How a manifest would change a module's schedules, against its desired state now: what {@code mesh push --plan} shows
 * beside the agents' container plans (docs/decisions/0012-plans.md). Computed on the coordinator from the desired
 * node's spec and the manifest's, so no agent is asked: a schedule is the same on every host of its module.
 */
public final class ScheduleDiff {
    private ScheduleDiff() {}

    /** What happens to one schedule. */
    public enum Kind implements WireName {
        /** The manifest adds it (or the module is new, or was deleted). */
        ADDED,
        /** Both have it, with some fields different. */
        CHANGED,
        /** The desired state has it, the manifest not: its windows stop being fired. */
        REMOVED;

        @Override
        public String toString() { return wire(); }
    }

    /**
     * One schedule's change.
     *
     * @param module   module name
     * @param schedule schedule name
     * @param change   added, changed or removed
     * @param fields   for {@code changed}: each field that differs, as {@code cron: 30 3 * * * -> 0 4 * * *} (a field
     *                 of objects or lists, such as {@code step}, by its name and what changed below it); for
     *                 {@code added}, the new {@code cron} and {@code timezone}; else empty
     */
    public record Change(String module, String schedule, Kind change, List<String> fields) {}

    /**
     * @param now  the module's desired spec now; {@code null} for a module not desired (never pushed, or a tombstone)
     * @param next the spec the manifest gives it
     * @return its schedules' changes, by schedule name; empty when they are the same
     */
    public static List<Change> of(ModuleSpec now, ModuleSpec next) {
        Map<String, ScheduleSpec> before = now == null ? Map.of() : now.schedules();
        Map<String, ScheduleSpec> after = next.schedules();
        TreeSet<String> names = new TreeSet<>(before.keySet());
        names.addAll(after.keySet());
        List<Change> out = new ArrayList<>();
        for (String name : names) {
            ScheduleSpec b = before.get(name), a = after.get(name);
            if (b == null) {
                out.add(new Change(next.module(), name, Kind.ADDED, List.of("cron: " + a.cron() + (a.timezone() == null ? "" : " " + a.timezone()))));
            } else if (a == null) {
                out.add(new Change(next.module(), name, Kind.REMOVED, List.of()));
            } else {
                List<String> fields = fields(Json.MAPPER.valueToTree(b), Json.MAPPER.valueToTree(a));
                if (!fields.isEmpty()) out.add(new Change(next.module(), name, Kind.CHANGED, fields));
            }
        }
        return out;
    }

    /** @return each top-level field that differs, as {@code name: before -> after} ({@code -} for absent) */
    private static List<String> fields(JsonNode before, JsonNode after) {
        TreeMap<String, String> out = new TreeMap<>();
        TreeSet<String> names = new TreeSet<>();
        for (Iterator<String> i = before.fieldNames(); i.hasNext(); ) names.add(i.next());
        for (Iterator<String> i = after.fieldNames(); i.hasNext(); ) names.add(i.next());
        for (String f : names) {
            JsonNode b = before.get(f), a = after.get(f);
            if (b != null && b.equals(a)) continue;
            out.put(f, f + ": " + shown(b) + " -> " + shown(a));
        }
        return List.copyOf(out.values());
    }

    /** @return a scalar as it is, an object or list as its compact JSON, an absent field as {@code -} */
    private static String shown(JsonNode n) {
        if (n == null || n.isNull()) return "-";
        return n.isValueNode() ? n.asText() : n.toString();
    }
}
