package io.mesh.manifest;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The manifest's fields by where they sit ({@code containers.*.hooks}: {@code *} for a name the operator chose), and the
 * mesh version each came in: what a push checks against the versions its hosts' agents publish, so that an agent is
 * never sent a field its parser refuses (SPEC.md "Running it for real"; docs/decisions/0041-upgrades.md).
 */
public final class ManifestFields {
    private ManifestFields() {}

    /** The first version: every field not in {@link #SINCE} came in it. */
    public static final String FIRST = "0.1.0";

    /**
     * Fields that came after {@link #FIRST}, by pattern, with their version. Add a field here in the change that makes
     * it, with the version it ships in: a coordinator then refuses it for hosts whose agents are older.
     */
    static final Map<String, String> SINCE = Map.of();

    /** The objects whose keys are fields, by where they sit, and the fields each may hold (as the parser checks them). */
    static final Map<String, Set<String>> OBJECTS = Map.ofEntries(
            Map.entry("", ManifestParser.MODULE_FIELDS),
            Map.entry("rollout", ManifestParser.ROLLOUT_FIELDS),
            Map.entry("rollout.gate", ManifestParser.GATE_FIELDS),
            Map.entry("rollout.gate.prometheus", ManifestParser.PROMETHEUS_FIELDS),
            Map.entry("rollout.silence", ManifestParser.SILENCE_FIELDS),
            Map.entry("containers.*", ManifestParser.CONTAINER_FIELDS),
            Map.entry("containers.*.healthcheck", ManifestParser.HEALTHCHECK_FIELDS),
            Map.entry("containers.*.ready", ManifestParser.READY_FIELDS),
            Map.entry("containers.*.hooks", ManifestParser.HOOKS_FIELDS),
            Map.entry("schedules.*", ManifestParser.SCHEDULE_FIELDS),
            Map.entry("schedules.*.step", ManifestParser.STEP_FIELDS),
            Map.entry("schedules.*.gate", ManifestParser.GATE_FIELDS),
            Map.entry("schedules.*.gate.prometheus", ManifestParser.PROMETHEUS_FIELDS),
            Map.entry("schedules.*.silence", ManifestParser.SILENCE_FIELDS));

    /** @return every field this version knows, as patterns such as {@code containers.*.hooks} */
    public static Set<String> known() {
        Set<String> out = new TreeSet<>();
        OBJECTS.forEach((at, fields) -> fields.forEach(f -> out.add(at.isEmpty() ? f : at + "." + f)));
        return out;
    }

    /**
     * @param spec a module's spec as its desired node carries it (what an agent's parser reads)
     * @return the fields it uses, as patterns
     */
    public static Set<String> used(JsonNode spec) {
        Set<String> out = new TreeSet<>();
        for (String at : OBJECTS.keySet()) {
            for (JsonNode object : at(spec, at)) {
                object.fieldNames().forEachRemaining(f -> out.add(at.isEmpty() ? f : at + "." + f));
            }
        }
        return out;
    }

    /** @return the objects at a pattern: {@code *} stands for every value of a mapping */
    private static List<JsonNode> at(JsonNode root, String pattern) {
        List<JsonNode> level = new ArrayList<>(List.of(root));
        if (!pattern.isEmpty()) {
            for (String step : pattern.split("\\.")) {
                List<JsonNode> next = new ArrayList<>();
                for (JsonNode n : level) {
                    if (!n.isObject()) continue;
                    if (step.equals("*")) n.elements().forEachRemaining(next::add);
                    else if (n.has(step)) next.add(n.get(step));
                }
                level = next;
            }
        }
        level.removeIf(n -> !n.isObject());
        return level;
    }

    /** @return the version a field came in: {@link #FIRST} unless {@link #SINCE} names a later one */
    public static String since(String field) { return SINCE.getOrDefault(field, FIRST); }
}
