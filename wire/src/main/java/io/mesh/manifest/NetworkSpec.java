package io.mesh.manifest;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One network of a module, compose's meaning (SPEC.md, "Containers": networks; decision 31). The agent creates a
 * managed network on a host before the first container that joins it there, labels it with the module, and removes it
 * when no container uses it; an external one it only joins.
 *
 * @param driver   {@link #BRIDGE}, the one driver a module network has; {@code null} for an external network
 * @param internal {@code true}: no route out of the network (Docker's {@code --internal}), else {@code null}
 * @param labels   the operator's Docker labels on the network (no key starts with {@code mesh.})
 * @param external {@code true}: the network exists on the host already and is not the module's, else {@code null}
 * @param name     an external network's Docker name when it is not the key; {@code null} otherwise
 */
@JsonPropertyOrder(alphabetic = true)
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record NetworkSpec(String driver, Boolean internal, Map<String, String> labels, Boolean external, String name) {
    /** The driver of every network a module owns. */
    public static final String BRIDGE = "bridge";

    /** Normalises: a managed network's driver defaults to {@link #BRIDGE}; a {@code false} flag is {@code null}. */
    public NetworkSpec {
        external = Boolean.TRUE.equals(external) ? Boolean.TRUE : null;
        internal = Boolean.TRUE.equals(internal) ? Boolean.TRUE : null;
        driver = external != null ? null : driver == null ? BRIDGE : driver;
        labels = labels == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(labels));
    }

    /** @return a managed bridge network with no options */
    public static NetworkSpec bridge() { return new NetworkSpec(null, null, null, null, null); }

    /** @return true when the module owns the network: the agent creates, changes and removes it */
    public boolean owned() { return external == null; }

    /** @return true when containers on the network have no route out of it */
    public boolean internalOnly() { return internal != null; }

    /**
     * @param module the module
     * @param key    the network's key in the module's {@code networks}
     * @return its Docker name: {@code <module>_<key>} for a network the module owns (as compose names a project's),
     *         the {@code name} (else the key) of an external one
     */
    public String dockerName(String module, String key) {
        return owned() ? module + "_" + key : name != null ? name : key;
    }

    /**
     * One container's membership of a network (SPEC.md, "Containers").
     *
     * @param aliases further names the container answers to on the network; its container name is always one
     *                (compose's service name), whether listed or not
     */
    @JsonPropertyOrder(alphabetic = true)
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Attachment(List<String> aliases) {
        public Attachment {
            aliases = aliases == null ? List.of() : List.copyOf(aliases);
        }

        /** @return a membership with no alias beyond the container's name */
        public static Attachment plain() { return new Attachment(List.of()); }
    }
}
