package io.mesh.manifest;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.math.BigDecimal;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * One container of a module (SPEC.md, "Manifest" and "Containers"). Built by {@link ManifestParser}, or by name with
 * {@link #builder(String)}; the JSON names are SPEC's (kebab-case), in alphabetic order, and absent or empty fields are
 * left out of the JSON, so that a spec using none of a newer field keeps its canonical form and spec hash (decision 17).
 *
 * @param image          image reference, such as {@code mesh-demo/registry:2.8.2}
 * @param command        command and arguments; empty for the image's own
 * @param env            environment variables
 * @param network        {@code host | none | bridge | <network name>}; default {@code host}, {@code null} when
 *                       {@code networks} is given
 * @param ports          {@code "host:container"} bindings, only with bridge networks
 * @param volumes        {@code "<named volume or absolute host path>:<container path>[:ro]"}
 * @param restart        {@code no | on-failure | unless-stopped | always}; default {@code unless-stopped}
 * @param stopTimeout    how long a stop waits before SIGKILL, as {@code 10s}; default {@code 10s}
 * @param privileged     {@code true} for Docker's privileged mode, else {@code null} (an agent refuses it unless started
 *                       with {@code --allow-privileged})
 * @param pid            {@code host} to share the host's PID namespace, else {@code null} (refused unless
 *                       {@code --allow-host-pid})
 * @param capAdd         Linux capabilities to add, such as {@code NET_ADMIN} (each refused unless {@code --allow-cap NAME})
 * @param healthcheck    Docker's healthcheck, or {@code null} for the image's own
 * @param ready          when a created or recreated container counts, or {@code null} for the defaults
 *                       ({@link ReadySpec}); not part of the spec hash
 * @param dependsOn      containers of the same module this one is created and started after, each with its condition
 *                       ({@link DependsOn}); not part of the spec hash (it orders the apply, Docker does not see it)
 * @param entrypoint     the program run instead of the image's entrypoint, with its first arguments; empty for the image's
 * @param user           {@code user[:group]}, by name or number, or {@code null} for the image's
 * @param workingDir     absolute working directory, or {@code null} for the image's
 * @param hostname       the container's host name, or {@code null} (Docker's: the container id)
 * @param labels         the operator's Docker labels (no key starts with {@code mesh.}: those are mesh's own)
 * @param memory         memory limit in compose's byte units, such as {@code 512m} ({@link ByteSize}), or {@code null}
 * @param cpus           CPUs the container may use, such as {@code 1.5} (Docker's {@code NanoCpus}), or {@code null}
 * @param pidsLimit      most processes in the container, {@code -1} for unlimited, or {@code null} for Docker's default
 * @param ulimits        resource limits by name, such as {@code nofile}
 * @param tmpfs          {@code "<container path>[:<mount options>]"} tmpfs mounts
 * @param readOnly       {@code true} for a read-only root filesystem, else {@code null}
 * @param extraHosts     {@code "name:ip"} lines added to the container's {@code /etc/hosts}
 * @param stopSignal     the signal a stop sends first, such as {@code SIGINT}, or {@code null} for the image's (SIGTERM)
 * @param init           {@code true} to run Docker's init as PID 1 (it reaps zombies and forwards signals), else {@code null}
 * @param logging        the log driver and its options, or {@code null} for the engine's default
 * @param dns            DNS server addresses
 * @param devices        {@code "<host device>[:<container path>[:<rwm>]]"} (each refused unless {@code --allow-device})
 * @param sysctls        kernel parameters by name (each refused unless {@code --allow-sysctl})
 * @param securityOpt    Docker security options such as {@code no-new-privileges:true} (each refused unless
 *                       {@code --allow-security-opt})
 * @param createHostPath {@code true} to let Docker create a missing host-path volume source, else {@code null} (a
 *                       missing one fails the container); not part of the spec hash (Docker does not see it)
 * @param secrets        by environment variable name (or, with a target, secret name), where each secret's value lives
 *                       under the agent's {@code --secrets-dir} ({@link SecretRef}; SPEC.md, "Secrets"); the values
 *                       themselves are never in a spec
 * @param pull           when the agent pulls the image, or {@code null} for {@link PullPolicy#DEFAULT}; not part of the
 *                       spec hash (it says where the image comes from, not how Docker runs it: a changed policy alone
 *                       recreates nothing; a pull that changes the image does, decision 20)
 * @param networks       the module networks the container joins, by key, each with its aliases
 *                       ({@link NetworkSpec.Attachment}); empty when it has one {@code network}. An agent plans with
 *                       them keyed by Docker name ({@link ModuleSpec#containersAsRun}), so that the spec hash names
 *                       the networks Docker joins (decision 31)
 * @param hooks          commands mesh runs in the container around its stops and starts ({@link HooksSpec}), or
 *                       {@code null}; not part of the spec hash (decision 38)
 */
@JsonPropertyOrder(alphabetic = true)
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record ContainerSpec(String image, List<String> command, Map<String, String> env, String network,
                            List<String> ports, List<String> volumes, String restart,
                            @JsonProperty("stop-timeout") String stopTimeout, Boolean privileged, String pid,
                            @JsonProperty("cap-add") List<String> capAdd, Healthcheck healthcheck, ReadySpec ready,
                            @JsonProperty("depends-on") Map<String, DependsOn> dependsOn,
                            List<String> entrypoint, String user, @JsonProperty("working-dir") String workingDir,
                            String hostname, Map<String, String> labels, String memory, String cpus,
                            @JsonProperty("pids-limit") Long pidsLimit, Map<String, Ulimit> ulimits, List<String> tmpfs,
                            @JsonProperty("read-only") Boolean readOnly, @JsonProperty("extra-hosts") List<String> extraHosts,
                            @JsonProperty("stop-signal") String stopSignal, Boolean init, Logging logging, List<String> dns,
                            List<String> devices, Map<String, String> sysctls,
                            @JsonProperty("security-opt") List<String> securityOpt,
                            @JsonProperty("create-host-path") Boolean createHostPath, Map<String, SecretRef> secrets,
                            PullPolicy pull, Map<String, NetworkSpec.Attachment> networks, HooksSpec hooks) {
    /** Default network: the host's, so that nothing leaves loopback unless a container binds elsewhere. */
    public static final String DEFAULT_NETWORK = "host";
    /** Default restart policy. */
    public static final String DEFAULT_RESTART = "unless-stopped";
    /** Default stop timeout. */
    public static final String DEFAULT_STOP_TIMEOUT = "10s";

    /** The one {@code pid} value mesh knows: the host's PID namespace. */
    public static final String PID_HOST = "host";

    /** Label keys with this prefix are mesh's own ({@code mesh.module}, {@code mesh.spec-hash} ...), never the operator's. */
    public static final String MESH_LABEL_PREFIX = "mesh.";

    /**
     * Normalises: missing lists and maps are empty, defaults are filled in, and a {@code false} flag
     * ({@code privileged}, {@code read-only}, {@code init}, {@code create-host-path}) is {@code null}, so that a spec
     * without a field has the same canonical form (and spec hash) as before the field existed.
     */
    public ContainerSpec {
        command = list(command);
        env = sorted(env);
        networks = sorted(networks);
        network = network == null && networks.isEmpty() ? DEFAULT_NETWORK : network;
        ports = list(ports);
        volumes = list(volumes);
        restart = restart == null ? DEFAULT_RESTART : restart;
        stopTimeout = stopTimeout == null ? DEFAULT_STOP_TIMEOUT : stopTimeout;
        privileged = onlyTrue(privileged);
        capAdd = list(capAdd);
        dependsOn = sorted(dependsOn);
        entrypoint = list(entrypoint);
        labels = sorted(labels);
        ulimits = sorted(ulimits);
        tmpfs = list(tmpfs);
        readOnly = onlyTrue(readOnly);
        extraHosts = list(extraHosts);
        init = onlyTrue(init);
        dns = list(dns);
        devices = list(devices);
        sysctls = sorted(sysctls);
        securityOpt = list(securityOpt);
        createHostPath = onlyTrue(createHostPath);
        secrets = sorted(secrets);
    }

    private static <T> List<T> list(List<T> l) { return l == null ? List.of() : List.copyOf(l); }

    private static <V> Map<String, V> sorted(Map<String, V> m) {
        return m == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(m));
    }

    private static Boolean onlyTrue(Boolean b) { return Boolean.TRUE.equals(b) ? Boolean.TRUE : null; }

    /**
     * @param image the image reference
     * @return a builder of a spec with that image and every other field absent (its default)
     */
    public static Builder builder(String image) { return new Builder().image(image); }

    /** @return a builder holding this spec's fields, to change some by name */
    public Builder toBuilder() {
        return new Builder().image(image).command(command).env(env).network(network).ports(ports).volumes(volumes)
                .restart(restart).stopTimeout(stopTimeout).privileged(privileged).pid(pid).capAdd(capAdd)
                .healthcheck(healthcheck).ready(ready).dependsOn(dependsOn).entrypoint(entrypoint).user(user)
                .workingDir(workingDir).hostname(hostname).labels(labels).memory(memory).cpus(cpus).pidsLimit(pidsLimit)
                .ulimits(ulimits).tmpfs(tmpfs).readOnly(readOnly).extraHosts(extraHosts).stopSignal(stopSignal).init(init)
                .logging(logging).dns(dns).devices(devices).sysctls(sysctls).securityOpt(securityOpt)
                .createHostPath(createHostPath).secrets(secrets).pull(pull).networks(networks).hooks(hooks);
    }

    /** Builds a {@link ContainerSpec} field by field, by SPEC's names; unset fields are absent. Not thread-safe. */
    public static final class Builder {
        private String image;
        private List<String> command;
        private Map<String, String> env;
        private String network;
        private List<String> ports;
        private List<String> volumes;
        private String restart;
        private String stopTimeout;
        private Boolean privileged;
        private String pid;
        private List<String> capAdd;
        private Healthcheck healthcheck;
        private ReadySpec ready;
        private Map<String, DependsOn> dependsOn;
        private List<String> entrypoint;
        private String user;
        private String workingDir;
        private String hostname;
        private Map<String, String> labels;
        private String memory;
        private String cpus;
        private Long pidsLimit;
        private Map<String, Ulimit> ulimits;
        private List<String> tmpfs;
        private Boolean readOnly;
        private List<String> extraHosts;
        private String stopSignal;
        private Boolean init;
        private Logging logging;
        private List<String> dns;
        private List<String> devices;
        private Map<String, String> sysctls;
        private List<String> securityOpt;
        private Boolean createHostPath;
        private Map<String, SecretRef> secrets;
        private PullPolicy pull;
        private Map<String, NetworkSpec.Attachment> networks;
        private HooksSpec hooks;

        private Builder() {}

        /** @return this, with {@code image} */
        public Builder image(String v) { image = v; return this; }
        /** @return this, with {@code command} */
        public Builder command(List<String> v) { command = v; return this; }
        /** @return this, with {@code env} */
        public Builder env(Map<String, String> v) { env = v; return this; }
        /** @return this, with {@code network} */
        public Builder network(String v) { network = v; return this; }
        /** @return this, with {@code ports} */
        public Builder ports(List<String> v) { ports = v; return this; }
        /** @return this, with {@code volumes} */
        public Builder volumes(List<String> v) { volumes = v; return this; }
        /** @return this, with {@code restart} */
        public Builder restart(String v) { restart = v; return this; }
        /** @return this, with {@code stop-timeout} */
        public Builder stopTimeout(String v) { stopTimeout = v; return this; }
        /** @return this, with {@code privileged} */
        public Builder privileged(Boolean v) { privileged = v; return this; }
        /** @return this, with {@code pid} */
        public Builder pid(String v) { pid = v; return this; }
        /** @return this, with {@code cap-add} */
        public Builder capAdd(List<String> v) { capAdd = v; return this; }
        /** @return this, with {@code healthcheck} */
        public Builder healthcheck(Healthcheck v) { healthcheck = v; return this; }
        /** @return this, with {@code ready} */
        public Builder ready(ReadySpec v) { ready = v; return this; }
        /** @return this, with {@code depends-on} */
        public Builder dependsOn(Map<String, DependsOn> v) { dependsOn = v; return this; }
        /** @return this, with {@code entrypoint} */
        public Builder entrypoint(List<String> v) { entrypoint = v; return this; }
        /** @return this, with {@code user} */
        public Builder user(String v) { user = v; return this; }
        /** @return this, with {@code working-dir} */
        public Builder workingDir(String v) { workingDir = v; return this; }
        /** @return this, with {@code hostname} */
        public Builder hostname(String v) { hostname = v; return this; }
        /** @return this, with {@code labels} */
        public Builder labels(Map<String, String> v) { labels = v; return this; }
        /** @return this, with {@code memory} */
        public Builder memory(String v) { memory = v; return this; }
        /** @return this, with {@code cpus} */
        public Builder cpus(String v) { cpus = v; return this; }
        /** @return this, with {@code pids-limit} */
        public Builder pidsLimit(Long v) { pidsLimit = v; return this; }
        /** @return this, with {@code ulimits} */
        public Builder ulimits(Map<String, Ulimit> v) { ulimits = v; return this; }
        /** @return this, with {@code tmpfs} */
        public Builder tmpfs(List<String> v) { tmpfs = v; return this; }
        /** @return this, with {@code read-only} */
        public Builder readOnly(Boolean v) { readOnly = v; return this; }
        /** @return this, with {@code extra-hosts} */
        public Builder extraHosts(List<String> v) { extraHosts = v; return this; }
        /** @return this, with {@code stop-signal} */
        public Builder stopSignal(String v) { stopSignal = v; return this; }
        /** @return this, with {@code init} */
        public Builder init(Boolean v) { init = v; return this; }
        /** @return this, with {@code logging} */
        public Builder logging(Logging v) { logging = v; return this; }
        /** @return this, with {@code dns} */
        public Builder dns(List<String> v) { dns = v; return this; }
        /** @return this, with {@code devices} */
        public Builder devices(List<String> v) { devices = v; return this; }
        /** @return this, with {@code sysctls} */
        public Builder sysctls(Map<String, String> v) { sysctls = v; return this; }
        /** @return this, with {@code security-opt} */
        public Builder securityOpt(List<String> v) { securityOpt = v; return this; }
        /** @return this, with {@code create-host-path} */
        public Builder createHostPath(Boolean v) { createHostPath = v; return this; }
        /** @return this, with {@code secrets} */
        public Builder secrets(Map<String, SecretRef> v) { secrets = v; return this; }
        /** @return this, with {@code pull} */
        public Builder pull(PullPolicy v) { pull = v; return this; }
        /** @return this, with {@code networks} */
        public Builder networks(Map<String, NetworkSpec.Attachment> v) { networks = v; return this; }
        /** @return this, with {@code hooks} */
        public Builder hooks(HooksSpec v) { hooks = v; return this; }

        /** @return the spec, normalised as the record's constructor does */
        public ContainerSpec build() {
            return new ContainerSpec(image, command, env, network, ports, volumes, restart, stopTimeout, privileged, pid,
                    capAdd, healthcheck, ready, dependsOn, entrypoint, user, workingDir, hostname, labels, memory, cpus,
                    pidsLimit, ulimits, tmpfs, readOnly, extraHosts, stopSignal, init, logging, dns, devices, sysctls,
                    securityOpt, createHostPath, secrets, pull, networks, hooks);
        }
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
     * One entry of {@code ulimits}: compose's {@code {soft, hard}}; its short form {@code nproc: 65535} is both.
     *
     * @param soft the soft limit, &ge; 0
     * @param hard the hard limit, &ge; {@code soft}
     */
    @JsonPropertyOrder(alphabetic = true)
    public record Ulimit(long soft, long hard) {}

    /**
     * {@code logging}: compose's {@code {driver, options}}.
     *
     * @param driver  a log driver of {@link #DRIVERS}, or {@code null} for the engine's default
     * @param options the driver's options, such as {@code max-size: 10m}
     */
    @JsonPropertyOrder(alphabetic = true)
    @JsonInclude(JsonInclude.Include.NON_EMPTY)
    public record Logging(String driver, Map<String, String> options) {
        /** The drivers Docker ships (and docker-java 3.7.1's {@code LogConfig.LoggingType} can send), plus {@code loki}. */
        public static final Set<String> DRIVERS = Set.of("none", "local", "json-file", "syslog", "journald", "gelf", "fluentd",
                "awslogs", "splunk", "etwlogs", "gcplogs", "loki");

        public Logging {
            options = sorted(options);
        }
    }

    /**
     * @param volume one of {@code volumes}, {@code <source>:<target>[:ro]}
     * @return its source: a host path when it starts with {@code /}, else a named volume
     */
    public static String volumeSource(String volume) { return volume.split(":", -1)[0]; }

    /** @return true when the container joins networks by {@code networks} rather than one {@code network} */
    public boolean joinsNetworks() { return !networks.isEmpty(); }

    /**
     * @return true when published ports take effect: on a bridge network (a module's, {@code bridge} or a named one),
     *         not with {@code host} or {@code none}, where Docker discards them
     */
    public boolean publishesPorts() {
        return !ports.isEmpty() && (joinsNetworks() || !(network.equals("host") || network.equals("none")));
    }

    /** @return {@code ready}, or the defaults */
    public ReadySpec readiness() { return ready == null ? ReadySpec.DEFAULT : ready; }

    /** @return {@code hooks}, or none */
    public HooksSpec hooksOrNone() { return hooks == null ? NO_HOOKS : hooks; }

    /** The hooks of a container without {@code hooks}. */
    private static final HooksSpec NO_HOOKS = new HooksSpec(null, null, null);

    /** @return {@code pull}, or its default {@link PullPolicy#MISSING} */
    public PullPolicy pullPolicy() { return pull == null ? PullPolicy.DEFAULT : pull; }

    /** @return true when the container asks for Docker's privileged mode */
    public boolean runsPrivileged() { return Boolean.TRUE.equals(privileged); }

    /** @return true when the container asks for the host's PID namespace */
    public boolean sharesHostPid() { return PID_HOST.equals(pid); }

    /** @return true when the root filesystem is mounted read-only */
    public boolean readOnlyRootfs() { return Boolean.TRUE.equals(readOnly); }

    /** @return true when Docker's init runs as PID 1 */
    public boolean runsInit() { return Boolean.TRUE.equals(init); }

    /** @return true when Docker may create a missing host-path volume source */
    public boolean createsHostPath() { return Boolean.TRUE.equals(createHostPath); }

    /** @return the memory limit in bytes, or {@code null} when none is set */
    public Long memoryBytes() { return memory == null ? null : ByteSize.parse(memory); }

    /** @return {@code cpus} in billionths of a CPU (Docker's {@code NanoCpus}), or {@code null} when none is set */
    public Long nanoCpus() { return cpus == null ? null : new BigDecimal(cpus.strip()).movePointRight(9).longValueExact(); }

    /** @return the stop timeout in whole seconds */
    public int stopTimeoutSeconds() { return (int) Durations.parse(stopTimeout).toSeconds(); }
}
