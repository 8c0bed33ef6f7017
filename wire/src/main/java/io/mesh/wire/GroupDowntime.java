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
 * container of a module that has a schedule in the group, or while its last apply of such a module failed and left one
 * of the spec's containers not running ({@link ApplyReport#down}). A window of the group counts such hosts beside the running
 * windows' leases and claims ({@code WindowSlot}).
 */
public final class GroupDowntime {
    private GroupDowntime() {}

    /** A cause that takes a place of a group's limit, other than a running window. */
    public enum Kind implements io.mesh.manifest.WireName {
        /** An operator's hold with {@code --stop} ({@code mesh hold --stop}). */
        HOLD,
        /** A drain with {@code --stop} ({@code mesh drain --stop}): its holds. */
        DRAIN,
        /** A failed apply (a reverting rollout's among them) that left a container of the spec not running. */
        FAILED_APPLY
    }

    /**
     * A host of the group down for a cause other than a window: one per host (the first of its causes by container).
     *
     * @param host      the host
     * @param kind      what keeps it down
     * @param module    the container's module
     * @param container the container held
     * @param by        who holds it (a failed apply: its push)
     * @param reason    why (a failed apply: its error)
     * @param since     since when (a failed apply: when it ended)
     */
    public record Cause(String host, Kind kind, String module, String container, String by, String reason, Instant since) {
        /** @return how {@code mesh windows} and a waiting window name it */
        public String describe() {
            return switch (kind) {
                case FAILED_APPLY -> host + ": " + container + " left down by the failed apply of " + by + " (" + reason + ")";
                case DRAIN -> host + ": " + container + " drained by " + by + " (" + reason + ")";
                case HOLD -> host + ": " + container + " held --stop by " + by + " (" + reason + ")";
            };
        }
    }

    /**
     * @param group the group's name
     * @param specs every module's desired spec
     * @param also  the {@code max-concurrent} of a schedule naming the group that {@code specs} may not hold yet (a
     *              window's own), or {@code null}
     * @return the group's limit: the least {@code max-concurrent} of the schedules naming it, else
     *         {@link ScheduleSpec#DEFAULT_GROUP_LIMIT} (SPEC.md "Fleet-wide windows": a group's windows share one limit)
     */
    public static int limitOf(String group, Collection<ModuleSpec> specs, Integer also) {
        int min = also == null ? Integer.MAX_VALUE : also;
        for (ModuleSpec m : specs) {
            if (m == null) continue;
            for (ScheduleSpec o : m.schedules().values()) {
                if (group.equals(o.group()) && o.maxConcurrent() != null) min = Math.min(min, o.maxConcurrent());
            }
        }
        return min == Integer.MAX_VALUE ? ScheduleSpec.DEFAULT_GROUP_LIMIT : min;
    }

    /**
     * @param specs every module's desired spec
     * @return every group a schedule names
     */
    public static Set<String> groups(Collection<ModuleSpec> specs) {
        Set<String> out = new TreeSet<>();
        for (ModuleSpec m : specs) {
            if (m == null) continue;
            for (ScheduleSpec s : m.schedules().values()) if (s.group() != null) out.add(s.group());
        }
        return out;
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
     * @param held    every host's held nodes ({@code HeldRegistry.readAll}: each record names its host)
     * @param reports the last reports of the group's modules, any hosts ({@code ApplyReports.readAll})
     * @param now     ZooKeeper's clock at its earliest (a hold past its {@code until} holds nothing)
     * @return the hosts of the group down for a cause other than a window, one per host (an operator's stop first, then
     *         a failed apply; the first by container), by host
     */
    public static List<Cause> causes(String group, Collection<ModuleSpec> specs, Collection<HeldRecord> held,
                                     Collection<ApplyReport> reports, Instant now) {
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
        // A node edited by hand may name no host or module: not a cause
        List<ApplyReport> failed = new ArrayList<>(reports.stream().filter(r -> r != null && r.host() != null && r.module() != null).toList());
        failed.sort(java.util.Comparator.comparing(ApplyReport::module));
        for (ApplyReport r : failed) {
            if (r.outcome() != ApplyOutcome.FAILED || r.down().isEmpty() || byHost.containsKey(r.host())) continue;
            ModuleSpec m = byName.get(r.module());
            if (m == null || !m.runsOn(r.host())) continue;
            byHost.put(r.host(), new Cause(r.host(), Kind.FAILED_APPLY, r.module(), r.down().stream().sorted().findFirst().orElseThrow(),
                    r.push(), cut(r.error()), r.finishedAt()));
        }
        return new ArrayList<>(byHost.values());
    }

    /** How much of a failed apply's error a cause keeps: a line of {@code mesh windows}. */
    static final int ERROR_CHARS = 120;

    private static String cut(String error) {
        if (error == null) return "no error said";
        return error.length() <= ERROR_CHARS ? error : error.substring(0, ERROR_CHARS - 3) + "...";
    }
}
