package io.mesh.apply;

import io.mesh.manifest.ContainerSpec;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * {@code depends-on} inside a module (SPEC.md, "Health and readiness"): the order of an apply's calls, and whether a
 * dependency's outcome lets a dependent be created or recreated. Pure; the parser has refused unknown names and cycles.
 */
final class DependencyOrder {
    private DependencyOrder() {}

    /**
     * @param plan the plan, in its order
     * @param want the desired containers by name
     * @return the same actions, each after the actions of the containers it depends on, otherwise in plan order
     */
    static List<PlannedAction> sort(List<PlannedAction> plan, Map<String, ContainerSpec> want) {
        List<PlannedAction> out = new ArrayList<>();
        Set<String> placed = new LinkedHashSet<>();
        Set<String> inPlan = new LinkedHashSet<>();
        for (PlannedAction a : plan) inPlan.add(a.name());
        List<PlannedAction> left = new ArrayList<>(plan);
        while (!left.isEmpty()) {
            boolean moved = false;
            for (int i = 0; i < left.size(); i++) {
                PlannedAction a = left.get(i);
                ContainerSpec spec = want.get(a.name());
                boolean ready = spec == null || spec.dependsOn().keySet().stream().allMatch(d -> placed.contains(d) || !inPlan.contains(d));
                if (ready) {
                    out.add(a);
                    left.remove(i);
                    // a removal shares its name with nothing desired; a recreate's leftover shares the name: both placed
                    if (left.stream().noneMatch(o -> o.name().equals(a.name()))) placed.add(a.name());
                    moved = true;
                    break;
                }
            }
            if (!moved) { // a cycle the parser did not see (a desired node written by hand): plan order for the rest
                out.addAll(left);
                break;
            }
        }
        return out;
    }

    /**
     * @param spec   a container about to be created or recreated
     * @param result the result of a dependency of this apply, by container name ({@code null}: not in this apply)
     * @return why a dependency does not satisfy its condition, or {@code null} when every one does
     */
    static String unmet(ContainerSpec spec, Function<String, ContainerResult> result) {
        for (Map.Entry<String, ContainerSpec.DependsOn> d : spec.dependsOn().entrySet()) {
            ContainerResult r = result.apply(d.getKey());
            if (r == null) continue;
            ContainerAction action = r.action();
            // A container a window holds runs again when the window ends (it waits for its readiness): no hold-up.
            if (action == ContainerAction.HELD) continue;
            boolean runs = action == ContainerAction.CREATED || action == ContainerAction.RECREATED || action == ContainerAction.UNCHANGED;
            if (!runs) return "depends on " + d.getKey() + ", which is " + action + " (" + String.join("; ", r.reasons()) + ")";
            if (ContainerSpec.DependsOn.HEALTHY.equals(d.getValue().condition()) && !"healthy".equals(r.health())) {
                return "depends on " + d.getKey() + " being healthy, and Docker says " + (r.health() == null ? "nothing of its health" : r.health());
            }
        }
        return null;
    }
}
