package io.mesh.manifest;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The one-shot container a schedule runs (SPEC.md, "Manifest", {@code schedules.*.step}).
 *
 * @param image       image reference
 * @param command     command and arguments; empty for the image's own
 * @param env         environment variables
 * @param volumesFrom name of a container of the module whose volumes the step mounts, or {@code null}
 * @param volumes     extra volumes, same form as {@link ContainerSpec#volumes()}
 * @param network     network mode; default {@code none}: a step needs no network unless it says so
 */
@JsonPropertyOrder(alphabetic = true)
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record StepSpec(String image, List<String> command, Map<String, String> env,
                       @JsonProperty("volumes-from") String volumesFrom, List<String> volumes, String network) {
    /** Default network of a step. */
    public static final String DEFAULT_NETWORK = "none";

    public StepSpec {
        command = command == null ? List.of() : List.copyOf(command);
        env = env == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(env));
        volumes = volumes == null ? List.of() : List.copyOf(volumes);
        network = network == null ? DEFAULT_NETWORK : network;
    }
}
