package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One container of a module (SPEC.md, "Manifest").
 *
 * @param image       image reference, such as {@code mesh-demo/registry:2.8.2}
 * @param command     command and arguments; empty for the image's own
 * @param env         environment variables
 * @param network     {@code host | none | bridge | <network name>}; default {@code host}
 * @param ports       {@code "host:container"} bindings, only with bridge networks
 * @param volumes     {@code "<named volume or absolute host path>:<container path>[:ro]"}
 * @param restart     {@code no | on-failure | unless-stopped | always}; default {@code unless-stopped}
 * @param stopTimeout how long a stop waits before SIGKILL, as {@code 10s}; default {@code 10s} (a mesh extension)
 * @param privileged  {@code true} for Docker's privileged mode, else {@code null} (a mesh extension; an agent refuses
 *                    it unless started with {@code --allow-privileged})
 * @param pid         {@code host} to share the host's PID namespace, else {@code null} (a mesh extension; refused
 *                    unless {@code --allow-host-pid})
 * @param capAdd      Linux capabilities to add, such as {@code NET_ADMIN} (a mesh extension; each refused unless
 *                    {@code --allow-cap NAME})
 * @param healthcheck Docker's healthcheck, or {@code null} for the image's own
 * @param ready       when a created or recreated container counts, or {@code null} for the defaults
 *                    ({@link ReadySpec}); not part of the spec hash
 * @param dependsOn   containers of the same module this one is created and started after, each with its condition
 *                    ({@link DependsOn}); not part of the spec hash (it orders the apply, Docker does not see it)
 * @param pull        when the agent pulls the image, or {@code null} for {@link PullPolicy#DEFAULT}; not part of the
 *                    spec hash (it says where the image comes from, not how Docker runs it: a changed policy alone
 *                    recreates nothing; a pull that changes the image does, decision 20)
 */
@JsonPropertyOrder(alphabetic = true)
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record ContainerSpec(String image, List<String> command, Map<String, String> env, String network,
                            List<String> ports, List<String> volumes, String restart,
                            @JsonProperty("stop-timeout") String stopTimeout, Boolean privileged, String pid,
                            @JsonProperty("cap-add") List<String> capAdd, Healthcheck healthcheck, ReadySpec ready,
                            @JsonProperty("depends-on") Map<String, DependsOn> dependsOn, PullPolicy pull) {
    /** Default network: the host's, so that nothing leaves loopback unless a container binds elsewhere. */
    public static final String DEFAULT_NETWORK = "host";
    /** Default restart policy. */
    public static final String DEFAULT_RESTART = "unless-stopped";
    /** Default stop timeout. */
    public static final String DEFAULT_STOP_TIMEOUT = "10s";

    /** The one {@code pid} value mesh knows: the host's PID namespace. */
    public static final String PID_HOST = "host";

    /**
     * Normalises: missing lists and maps are empty, defaults are filled in, and {@code privileged: false} is
     * {@code null}, so that a spec without the security fields has the same canonical form (and spec hash) as
     * before they existed.
     */
    public ContainerSpec {
        command = command == null ? List.of() : List.copyOf(command);
        env = env == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(env));
        network = network == null ? DEFAULT_NETWORK : network;
        ports = ports == null ? List.of() : List.copyOf(ports);
        volumes = volumes == null ? List.of() : List.copyOf(volumes);
        restart = restart == null ? DEFAULT_RESTART : restart;
        stopTimeout = stopTimeout == null ? DEFAULT_STOP_TIMEOUT : stopTimeout;
        privileged = Boolean.TRUE.equals(privileged) ? Boolean.TRUE : null;
        capAdd = capAdd == null ? List.of() : List.copyOf(capAdd);
        dependsOn = dependsOn == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(dependsOn));
    }

    /** A spec without {@code depends-on}. */
    public ContainerSpec(String image, List<String> command, Map<String, String> env, String network, List<String> ports,
                         List<String> volumes, String restart, String stopTimeout, Boolean privileged, String pid,
                         List<String> capAdd, Healthcheck healthcheck, ReadySpec ready) {
        this(image, command, env, network, ports, volumes, restart, stopTimeout, privileged, pid, capAdd, healthcheck, ready, null, null);
    }

    /** A spec without {@code pull}. */
    public ContainerSpec(String image, List<String> command, Map<String, String> env, String network, List<String> ports,
                         List<String> volumes, String restart, String stopTimeout, Boolean privileged, String pid,
                         List<String> capAdd, Healthcheck healthcheck, ReadySpec ready, Map<String, DependsOn> dependsOn) {
        this(image, command, env, network, ports, volumes, restart, stopTimeout, privileged, pid, capAdd, healthcheck, ready, dependsOn, null);
    }


    /**
     * One entry of {@code depends-on} (compose's meaning, SPEC.md "Health and readiness"; decision 10).
     *
     * @param condition {@link #STARTED}: the dependency's apply is done (it runs, created or recreated and ready by
     *                  its own {@code ready}, or unchanged); {@link #HEALTHY}: that, and Docker calls it healthy
     */
    public record DependsOn(String condition) {
        /** The dependency runs. */
        public static final String STARTED = "started";
        /** The dependency runs and its healthcheck passes. */
        public static final String HEALTHY = "healthy";
    }

    /**
     * A spec without the security fields ({@code privileged}, {@code pid}, {@code cap-add}).
     *
     * @param image       image reference
     * @param command     command and arguments
     * @param env         environment variables
     * @param network     network mode
     * @param ports       port bindings
     * @param volumes     volumes
     * @param restart     restart policy
     * @param stopTimeout stop timeout
     */
    public ContainerSpec(String image, List<String> command, Map<String, String> env, String network,
                         List<String> ports, List<String> volumes, String restart, String stopTimeout) {
        this(image, command, env, network, ports, volumes, restart, stopTimeout, null, null, null, null, null, null, null);
    }

    /** @return {@code ready}, or the defaults */
    public ReadySpec readiness() { return ready == null ? ReadySpec.DEFAULT : ready; }

    /** @return {@code pull}, or its default {@link PullPolicy#MISSING} */
    public PullPolicy pullPolicy() { return pull == null ? PullPolicy.DEFAULT : pull; }

    /** @return true when the container asks for Docker's privileged mode */
    public boolean runsPrivileged() { return Boolean.TRUE.equals(privileged); }

    /** @return true when the container asks for the host's PID namespace */
    public boolean sharesHostPid() { return PID_HOST.equals(pid); }

    /** @return the stop timeout in whole seconds */
    public int stopTimeoutSeconds() { return (int) Durations.parse(stopTimeout).toSeconds(); }
}
