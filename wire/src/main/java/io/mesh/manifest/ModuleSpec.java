package io.mesh.manifest;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One manifest document: a module, the hosts it runs on, its containers and its schedules (SPEC.md, "Manifest").
 * Built by {@link ManifestParser}, which has validated every field.
 *
 * @param module     module name, {@code [a-z0-9][a-z0-9-]{0,39}}
 * @param hosts      host ids, or {@code ["*"]} for every host
 * @param containers containers by name (same name rule); the Docker name is {@code <module>-<name>}
 * @param schedules  schedules by name (same name rule); may be empty
 * @param rollout    how a change moves across the fleet ({@link RolloutSpec}); {@code null}: every host at once
 * @param networks   the module's networks by key ({@link NetworkSpec}); may be empty
 */
@JsonPropertyOrder({"module", "hosts", "networks", "containers", "schedules", "rollout"})
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record ModuleSpec(String module, List<String> hosts, Map<String, ContainerSpec> containers,
                         Map<String, ScheduleSpec> schedules, RolloutSpec rollout, Map<String, NetworkSpec> networks) {
    /** The host wildcard. */
    public static final String ALL_HOSTS = "*";

    /** A module without {@code networks}. */
    public ModuleSpec(String module, List<String> hosts, Map<String, ContainerSpec> containers, Map<String, ScheduleSpec> schedules,
                      RolloutSpec rollout) {
        this(module, hosts, containers, schedules, rollout, null);
    }

    /** A module without {@code rollout} or {@code networks}. */
    public ModuleSpec(String module, List<String> hosts, Map<String, ContainerSpec> containers, Map<String, ScheduleSpec> schedules) {
        this(module, hosts, containers, schedules, null, null);
    }

    public ModuleSpec {
        hosts = hosts == null ? List.of() : List.copyOf(hosts);
        containers = containers == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(containers));
        schedules = schedules == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(schedules));
        networks = networks == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(networks));
    }

    /**
     * The containers as an agent plans and creates them: each one's {@code networks} keyed by the networks' Docker
     * names ({@link NetworkSpec#dockerName}) and led by its own name as an alias, as compose's service names are
     * (SPEC.md, "Containers"). The spec hash is of this form, so a network's Docker name or an alias that changes
     * recreates the container; a change of the network itself recreates the network, not the container (decision 31).
     *
     * @return containers by name, in the manifest's order
     */
    public Map<String, ContainerSpec> containersAsRun() {
        if (networks.isEmpty()) return containers;
        Map<String, ContainerSpec> out = new LinkedHashMap<>();
        containers.forEach((name, spec) -> {
            if (!spec.joinsNetworks()) {
                out.put(name, spec);
                return;
            }
            Map<String, NetworkSpec.Attachment> joined = new TreeMap<>();
            spec.networks().forEach((key, a) -> {
                NetworkSpec n = networks.get(key);
                List<String> aliases = new ArrayList<>();
                aliases.add(name);
                a.aliases().stream().filter(x -> !aliases.contains(x)).forEach(aliases::add);
                joined.put(n == null ? key : n.dockerName(module, key), new NetworkSpec.Attachment(aliases));
            });
            out.put(name, spec.toBuilder().networks(joined).build());
        });
        return Collections.unmodifiableMap(out);
    }

    /**
     * @param host a host id
     * @return the networks this module owns that its containers join on that host, by Docker name (none when the
     *         module does not run there): the networks the agent creates and keeps there
     */
    public Map<String, Owned> ownedNetworksOn(String host) {
        Map<String, Owned> out = new TreeMap<>();
        if (!runsOn(host)) return out;
        for (ContainerSpec c : containers.values()) {
            for (String key : c.networks().keySet()) {
                NetworkSpec n = networks.get(key);
                if (n != null && n.owned()) out.put(n.dockerName(module, key), new Owned(key, n));
            }
        }
        return out;
    }

    /**
     * A network a module owns, as a host keeps it.
     *
     * @param key  its key in the module's {@code networks}
     * @param spec its spec
     */
    public record Owned(String key, NetworkSpec spec) {}

    /**
     * @param module module name
     * @return the spec of a deleted module as agents apply it: no host, no container, no schedule, so that its
     *         containers are removed wherever they are ({@code DesiredRecord.tombstone()})
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

    /**
     * @param dockerName a Docker name, {@code <module>-<name>}
     * @return the spec of this module's container of that Docker name, or {@code null} when it names none
     */
    public ContainerSpec containerOf(String dockerName) {
        String prefix = module + "-";
        return dockerName != null && dockerName.startsWith(prefix) ? containers.get(dockerName.substring(prefix.length())) : null;
    }

    /** @return the Docker name of container {@code name} of {@code module}: {@code <module>-<name>} */
    public static String dockerName(String module, String name) { return module + "-" + name; }
}
