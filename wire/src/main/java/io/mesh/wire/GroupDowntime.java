package io.mesh.wire;

import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.ScheduleSpec;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The one disruption budget's rule (SPEC.md "The rest of the operator's stack": a group's limit counts every cause of
 * a group's host being down; docs/decisions/0037-recurring-freezes-drains-and-one-budget.md, item 3), without
 * ZooKeeper, so that an agent's window and a coordinator's {@code mesh windows} count the same: a host of a group is
 * down for a cause other than a window while an operator's hold with {@code --stop} (a drain's among them) holds a
 * container of a module that has a schedule in the group. A window of the group counts such hosts beside the running
 * windows' leases and claims ({@code WindowSlot}).
 */
public final class GroupDowntime {
    private GroupDowntime() {}

    /** A cause that takes a place of a group's limit, other than a running window. */
    public enum Kind implements io.mesh.manifest.WireName {
        /** An operator's hold with {@code --stop} ({@code mesh hold --stop}). */
        HOLD,
        /** A drain with {@code --stop} ({@code mesh drain --stop}): its holds. */
        DRAIN
    }

    /**
     * A host of the group down for a cause other than a window: one per host (the first of its causes by container).
     *
     * @param host      the host
     * @param kind      what keeps it down
     * @param module    the container's module
     * @param container the container held
     * @param by        who holds it
     * @param reason    why
     * @param since     since when
     */
    public record Cause(String host, Kind kind, String module, String container, String by, String reason, Instant since) {
        /** @return how {@code mesh windows} and a waiting window name it */
        public String describe() {
            return host + ": " + container + " " + (kind == Kind.DRAIN ? "drained" : "held --stop") + " by " + by + " (" + reason + ")";
        }
    }

    /**
     * @param group   the group's name
     * @param specs   every module's desired spec
     * @return the modules with a schedule naming the group
     */
    public static Set<String> modulesOf(String group, Collection<ModuleSpec> specs) {
        Set<String> out = new TreeSet<>();
        for (ModuleSpec m : specs) {
            if (m == null) continue;
            for (ScheduleSpec s : m.schedules().values()) if (group.equals(s.group())) out.add(m.module());
        }
        return out;
    }

    /**
     * @param group the group's name
     * @param specs every module's desired spec
     * @param held  every host's held nodes ({@code HeldRegistry.readAll}: each record names its host)
     * @param now   ZooKeeper's clock at its earliest (a hold past its {@code until} holds nothing)
     * @return the hosts of the group down for a cause other than a window, one per host (its first cause by
     *         container), by host
     */
    public static List<Cause> causes(String group, Collection<ModuleSpec> specs, Collection<HeldRecord> held, Instant now) {
        Set<String> modules = modulesOf(group, specs);
        Map<String, ModuleSpec> byName = new TreeMap<>();
        for (ModuleSpec m : specs) if (m != null && modules.contains(m.module())) byName.put(m.module(), m);
        Map<String, Cause> byHost = new TreeMap<>();
        List<HeldRecord> sorted = new ArrayList<>(held);
        sorted.sort(java.util.Comparator.comparing(HeldRecord::container));
        for (HeldRecord r : sorted) {
            if (!r.operatorHold() || !r.hold().stops() || r.expiredAt(now) || byHost.containsKey(r.host())) continue;
            ModuleSpec m = byName.get(r.module());
            if (m == null || !m.runsOn(r.host())) continue;
            byHost.put(r.host(), new Cause(r.host(), r.hold().ofDrain() ? Kind.DRAIN : Kind.HOLD, r.module(), r.container(), r.hold().by(),
                    r.hold().reason(), r.hold().since()));
        }
        return new ArrayList<>(byHost.values());
    }
}
