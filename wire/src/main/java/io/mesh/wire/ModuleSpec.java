package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One manifest document: a module, the hosts it runs on, its containers and its schedules (SPEC.md, "Manifest").
 * Built by {@link ManifestParser}, which has validated every field.
 *
 * @param module     module name, {@code [a-z0-9][a-z0-9-]{0,39}}
 * @param hosts      host ids, or {@code ["*"]} for every host
 * @param containers containers by name (same name rule); the Docker name is {@code <module>-<name>}
 * @param schedules  schedules by name (same name rule); may be empty
 * @param rollout    how a change moves across the fleet ({@link RolloutSpec}); {@code null}: every host at once
 */
@JsonPropertyOrder({"module", "hosts", "containers", "schedules", "rollout"})
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record ModuleSpec(String module, List<String> hosts, Map<String, ContainerSpec> containers,
                         Map<String, ScheduleSpec> schedules, RolloutSpec rollout) {
    /** The host wildcard. */
    public static final String ALL_HOSTS = "*";

    /** A module without {@code rollout}. */
    public ModuleSpec(String module, List<String> hosts, Map<String, ContainerSpec> containers, Map<String, ScheduleSpec> schedules) {
        this(module, hosts, containers, schedules, null);
    }

    public ModuleSpec {
        hosts = hosts == null ? List.of() : List.copyOf(hosts);
        containers = containers == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(containers));
        schedules = schedules == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(schedules));
    }

    /**
     * @param module module name
     * @return the spec of a deleted module as agents apply it: no host, no container, no schedule, so that its
     *         containers are removed wherever they are ({@link DesiredRecord#tombstone()})
     */
    public static ModuleSpec nowhere(String module) { return new ModuleSpec(module, List.of(), Map.of(), Map.of()); }

    /**
     * @param host a host id
     * @return true when this module runs on that host ({@code hosts} names it, or is {@code ["*"]})
     */
    public boolean runsOn(String host) {
        return hosts.contains(ALL_HOSTS) || hosts.contains(host);
    }

    /**
     * @param name a container name of this module
     * @return its Docker name, {@code <module>-<name>}
     */
    public String dockerName(String name) { return dockerName(module, name); }

    /** @return the Docker name of container {@code name} of {@code module}: {@code <module>-<name>} */
    public static String dockerName(String module, String name) { return module + "-" + name; }
}
