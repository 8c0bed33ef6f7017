package io.mesh.docker;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.command.HealthState;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.command.PullImageResultCallback;
import com.github.dockerjava.api.command.WaitContainerResultCallback;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.DockerClientException;
import com.github.dockerjava.api.exception.DockerException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.exception.NotModifiedException;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Capability;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.ContainerNetwork;
import com.github.dockerjava.api.model.Event;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.HealthCheck;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Mount;
import com.github.dockerjava.api.model.MountType;
import com.github.dockerjava.api.model.Network;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import com.github.dockerjava.api.model.PullResponseItem;
import com.github.dockerjava.api.model.RestartPolicy;
import com.github.dockerjava.api.model.VolumesFrom;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.httpclient5.ApacheDockerHttpClient;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.Durations;
import io.mesh.manifest.Healthcheck;
import io.mesh.manifest.NetworkSpec;
import io.mesh.manifest.StepSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The Docker Engine API calls mesh makes, through docker-java. One instance per process; thread-safe.
 *
 * <p>Errors surface as docker-java's runtime exceptions ({@code DockerException} and subclasses such as
 * {@link NotFoundException} and {@link ConflictException}) or as {@link DockerClientException} for time-outs;
 * callers turn them into {@code failed} results. Images are pulled as a container's {@code pull} says (the apply
 * decides, {@link #ensureImage}, {@link #pull}), with the credentials of {@link RegistryAuth}.
 *
 * <p><b>Nothing waits for ever</b>, so that a hung dockerd cannot hold a module lock and its fence: every call is
 * bounded ({@link #CALL_TIMEOUT}, {@link #PULL_TIMEOUT}; docs/design.md, "Docker calls are bounded") and then throws
 * {@link DockerTimeoutException}. docker-java's unix-socket channel has no read timeout, so a watchdog interrupts the
 * calling thread, which closes that call's connection only.
 */
public final class DockerEngine implements ContainerRuntime, Closeable {
    private static final Logger log = LoggerFactory.getLogger(DockerEngine.class);
    /** Default Docker host when neither {@code --docker-host} nor {@code DOCKER_HOST} is set. */
    public static final String DEFAULT_HOST = "unix:///var/run/docker.sock";
    /**
     * The longest a Docker call that dockerd answers at once (list, inspect, create, start, rename, update, remove,
     * kill, ping) may take before it is abandoned with a {@link DockerTimeoutException}; a stop gets its stop timeout
     * on top. The default of {@code mesh-agent --docker-timeout}.
     */
    public static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);
    /** The longest a missing image's pull may take. */
    public static final Duration PULL_TIMEOUT = Duration.ofMinutes(10);
    /** How long the exit of a step killed at its timeout is waited for. */
    static final Duration KILLED_STEP_WAIT = Duration.ofSeconds(30);

    /** For calls that dockerd answers at once: response timeout {@link #callTimeout} (honoured on tcp), and the watchdog. */
    private final DockerClient docker;
    /** For calls that wait (stop, wait, pull): no response timeout; each call bounds its own wait. */
    private final DockerClient waits;
    private final String host;
    private final Duration callTimeout;
    private final RegistryAuth registryAuth;
    private final ScheduledThreadPoolExecutor watchdog;

    /**
     * @param dockerHost such as {@code unix:///var/run/docker.sock}; {@code null} for {@code DOCKER_HOST} or the default
     */
    public DockerEngine(String dockerHost) {
        this(dockerHost, CALL_TIMEOUT);
    }

    /**
     * @param dockerHost  such as {@code unix:///var/run/docker.sock}; {@code null} for {@code DOCKER_HOST} or the default
     * @param callTimeout the longest a call that dockerd answers at once may take ({@link #CALL_TIMEOUT})
     * @throws IllegalArgumentException when the timeout is not positive
     */
    public DockerEngine(String dockerHost, Duration callTimeout) {
        this(dockerHost, callTimeout, RegistryAuth.of(null));
    }

    /**
     * @param dockerHost   such as {@code unix:///var/run/docker.sock}; {@code null} for {@code DOCKER_HOST} or the default
     * @param callTimeout  the longest a call that dockerd answers at once may take ({@link #CALL_TIMEOUT})
     * @param registryAuth the credentials pulls send ({@code --docker-config})
     * @throws IllegalArgumentException when the timeout is not positive
     */
    public DockerEngine(String dockerHost, Duration callTimeout, RegistryAuth registryAuth) {
        if (callTimeout == null || callTimeout.isNegative() || callTimeout.isZero()) {
            throw new IllegalArgumentException("the Docker call timeout must be positive, not " + callTimeout);
        }
        SecretSafeLogging.hold(); // before the first call: docker-java's DEBUG line of a create prints its Env
        String h = dockerHost != null && !dockerHost.isBlank() ? dockerHost
                : System.getenv("DOCKER_HOST") != null && !System.getenv("DOCKER_HOST").isBlank() ? System.getenv("DOCKER_HOST")
                : DEFAULT_HOST;
        DefaultDockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(h).build();
        this.docker = DockerClientImpl.getInstance(config, http(config, Duration.ofSeconds(10), callTimeout));
        this.waits = DockerClientImpl.getInstance(config, http(config, Duration.ofSeconds(10), null));
        this.host = h;
        this.callTimeout = callTimeout;
        this.registryAuth = registryAuth;
        this.watchdog = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "docker-watchdog");
            t.setDaemon(true);
            return t;
        });
        watchdog.setRemoveOnCancelPolicy(true); // a call that answers in time leaves nothing queued
        // ... so its thread can end when no call is under way: no thread of its own while the agent is at rest (B8).
        watchdog.setKeepAliveTime(IdleThreads.IDLE.toMillis(), TimeUnit.MILLISECONDS);
        watchdog.allowCoreThreadTimeOut(true);
    }

    private static ApacheDockerHttpClient http(DefaultDockerClientConfig config, Duration connect, Duration response) {
        return new ApacheDockerHttpClient.Builder()
                .dockerHost(config.getDockerHost())
                .sslConfig(config.getSSLConfig())
                .maxConnections(32)
                .connectionTimeout(connect)
                .responseTimeout(response)
                .build();
    }

    /** @return the Docker host URI in use */
    public String host() { return host; }

    /** @return the bound of a call that dockerd answers at once ({@link #CALL_TIMEOUT} unless configured) */
    public Duration callTimeout() { return callTimeout; }

    /**
     * @return a docker-java client for tests and tools, without a response timeout (event streams may be quiet for
     *         long): what a caller does with it is bounded by the caller
     */
    public DockerClient client() { return waits; }

    /** @return the engine's container events and clock, as the ledger reads them (decision 28) */
    public EngineEvents events() { return new EngineEvents(waits); }

    /**
     * Runs a synchronous docker-java call on this thread, abandoning it after {@code limit}.
     *
     * @param what  the call, for the error message
     * @param limit its bound
     * @param call  the call
     * @return its result
     * @throws DockerTimeoutException when it did not answer within {@code limit}
     */
    private <T> T bounded(String what, Duration limit, Supplier<T> call) {
        Deadline d = new Deadline(Thread.currentThread());
        ScheduledFuture<?> timer = watchdog.schedule(d, limit.toMillis(), TimeUnit.MILLISECONDS);
        T result;
        try {
            result = call.get();
        } catch (RuntimeException e) {
            timer.cancel(false);
            if (d.finish()) throw new DockerTimeoutException(host, what, limit, e);
            throw e;
        }
        timer.cancel(false);
        d.finish(); // answered just as the watchdog fired: the answer stands, the interrupt is taken back
        return result;
    }

    private void bounded(String what, Duration limit, Runnable call) {
        bounded(what, limit, () -> {
            call.run();
            return null;
        });
    }

    /** A bounded call's state: the watchdog interrupts the caller only while the call is still on its way. */
    private static final class Deadline implements Runnable {
        private final Thread caller;
        private boolean done;
        private boolean fired;

        Deadline(Thread caller) { this.caller = caller; }

        @Override
        public synchronized void run() {
            if (done) return;
            fired = true;
            caller.interrupt(); // closes the connection the caller reads from; nobody else's
        }

        /** @return true when the watchdog fired; clears the interrupt it sent (one that came from elsewhere stays) */
        synchronized boolean finish() {
            done = true;
            if (fired) Thread.interrupted();
            return fired;
        }
    }

    /**
     * @throws RuntimeException naming the Docker host when the engine does not answer a ping
     */
    @Override
    public void ping() {
        try {
            bounded("a ping", callTimeout, () -> docker.pingCmd().exec());
        } catch (RuntimeException e) {
            throw new IllegalStateException("Docker engine at " + host + " does not answer (" + e.getMessage()
                    + "): start dockerd, or set --docker-host", e);
        }
    }

    /**
     * Lists every container of a module, running or not, except step containers.
     *
     * @param module module name (label {@code mesh.module})
     * @return the module's managed containers
     */
    @Override
    public List<ObservedContainer> moduleContainers(String module) {
        return moduleView(module).containers();
    }

    /** One {@code GET /containers/json?all=1&filters={"label":["mesh.module=<module>"]}}, split by {@code mesh.window}. */
    @Override
    public ModuleView moduleView(String module) {
        List<Container> list = bounded("the list of module " + module + "'s containers", callTimeout,
                () -> docker.listContainersCmd().withShowAll(true).withLabelFilter(Map.of(Labels.MODULE, module)).exec());
        List<ObservedContainer> out = new ArrayList<>();
        List<Map<String, String>> steps = new ArrayList<>();
        for (Container c : list) {
            Map<String, String> labels = c.getLabels() == null ? Map.of() : c.getLabels();
            if (labels.containsKey(Labels.WINDOW)) { // step containers are the window's, never an apply's
                steps.add(labels);
                continue;
            }
            boolean running = "running".equals(c.getState());
            out.add(new ObservedContainer(c.getId(), name(c), labels.get(Labels.CONTAINER), labels.get(Labels.SPEC_HASH),
                    labels.get(Labels.SPEC), labels.get(Labels.REVISION), running, running ? "running" : describeState(c),
                    health(c.getStatus()), c.getImageId()));
        }
        return new ModuleView(out, steps);
    }

    private static String name(Container c) {
        String[] names = c.getNames();
        if (names == null || names.length == 0) return c.getId();
        String n = names[0];
        return n.startsWith("/") ? n.substring(1) : n;
    }

    /** @return the health in the list's status ({@code Up 5 minutes (healthy)}, {@code (health: starting)}), else {@code none} */
    static String health(String status) {
        if (status == null) return RunState.NO_HEALTH;
        if (status.contains("(healthy)")) return "healthy";
        if (status.contains("(unhealthy)")) return "unhealthy";
        if (status.contains("(health: starting)")) return "starting";
        return RunState.NO_HEALTH;
    }

    /** "exited (137)" from the list's state and status ("Exited (137) 3 seconds ago"). */
    private static String describeState(Container c) {
        String state = c.getState() == null ? "unknown" : c.getState();
        String status = c.getStatus() == null ? "" : c.getStatus();
        int open = status.indexOf('('), close = status.indexOf(')');
        if (open >= 0 && close > open) return state + " " + status.substring(open, close + 1);
        return state;
    }

    /**
     * @param idOrName container id or name
     * @return Docker's inspect, or {@code null} when there is no such container
     */
    public InspectContainerResponse inspect(String idOrName) {
        try {
            return bounded("an inspect of container " + idOrName, callTimeout, () -> docker.inspectContainerCmd(idOrName).exec());
        } catch (NotFoundException e) {
            return null;
        }
    }

    @Override
    public String idByName(String name) {
        InspectContainerResponse i = inspect(name);
        return i == null || !("/" + name).equals(i.getName()) ? null : i.getId();
    }

    /**
     * Makes sure an image is on this host, pulling it when it is not ({@code pull: missing}).
     *
     * @param image image reference
     * @throws IllegalStateException naming the image, its registry and the fix when it is missing and cannot be pulled
     */
    @Override
    public void ensureImage(String image) {
        ensureImage(image, null);
    }

    @Override
    public void ensureImage(String image, Consumer<PullLayers> progress) {
        if (!imagePresent(image)) pull(image, true, progress);
    }

    /**
     * Pulls an image from its registry with this host's credentials for that registry ({@link RegistryAuth}), whether
     * or not it is here, and waits for the pull's end (at most {@link #PULL_TIMEOUT}).
     *
     * @param image image reference; one with neither tag nor digest pulls {@code latest}, as {@code docker pull} does
     * @throws IllegalStateException naming the image, its registry and the fix (credentials in {@code --docker-config}
     *                               when the registry refused them) when the pull fails, or a credential helper does
     * @throws DockerTimeoutException when the pull did not end in time
     */
    @Override
    public void pull(String image) {
        pull(image, false, null);
    }

    @Override
    public void pull(String image, Consumer<PullLayers> progress) {
        pull(image, false, progress);
    }

    /**
     * {@link #pull(String)}; {@code absent}: the image is not on this host, which the failure's message says;
     * {@code progress}: told the layers as they change, or {@code null}
     */
    private void pull(String image, boolean absent, Consumer<PullLayers> progress) {
        ImageReference ref = ImageReference.parse(image);
        RegistryAuth.Credentials creds = registryAuth.forImage(ref);
        // docker-java fills in credentials from its own idea of the config directory: the ones looked up here win,
        // none included (an anonymous pull sends no X-Registry-Auth)
        try (QuietPull pull = waits.pullImageCmd(ref.repository()).withTag(ref.pullTag()).withAuthConfig(creds.auth())
                .exec(new QuietPull(progress))) {
            boolean done;
            try {
                done = pull.awaitCompletion(PULL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (RuntimeException e) {
                pull.throwError(); // the engine's own answer, when there is one, says more than "Could not pull image"
                throw e;
            }
            pull.throwError();
            if (!done) throw new DockerTimeoutException(host, "the pull of image " + image, PULL_TIMEOUT, null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while pulling image " + image, e);
        } catch (DockerTimeoutException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException(PullFailure.describe(image, ref, creds, registryAuth.dir(), engineMessage(e), absent), e);
        }
        if (inspectImage(image) == null) { // a pull by digest of another platform's image, or a tag moved meanwhile
            throw new IllegalStateException("image " + image + " is not on this host after its pull from " + ref.registry()
                    + ": check the reference and the image's platform");
        }
    }

    /**
     * A pull's callback that keeps the pull's error for {@link #pull} instead of logging it: docker-java's
     * {@code ResultCallbackTemplate.onError} logs every error at ERROR with its stack trace, and an agent retrying a
     * push of a missing image logged one at every retry. The apply reports the error instead, in one line (decision 17).
     */
    private static final class QuietPull extends PullImageResultCallback {
        private volatile Throwable error;
        private final Consumer<PullLayers> progress;
        private final PullLayers layers = new PullLayers();

        QuietPull(Consumer<PullLayers> progress) { this.progress = progress; }

        @Override
        public void onNext(PullResponseItem item) {
            super.onNext(item);
            if (progress == null || item == null || !layers.seen(item.getId(), item.getStatus())) return;
            try {
                progress.accept(layers);
            } catch (RuntimeException e) {
                log.debug("pull progress not told: {}", e.toString()); // progress is display only: never the pull's failure
            }
        }

        @Override
        public void onError(Throwable t) {
            if (error == null) error = t;
            try {
                close(); // ends the wait; the caller throws the error
            } catch (IOException e) {
                // closing only frees the connection
            }
        }

        /** Throws the error the pull met, if any. */
        void throwError() {
            Throwable e = error;
            if (e instanceof RuntimeException r) throw r;
            if (e != null) throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /**
     * @return the engine's message in a docker-java error ({@code Status 404: {"message":"pull access denied ..."}}
     *         reads {@code pull access denied ...}), else the error's first line
     */
    static String engineMessage(Throwable e) {
        String m = firstLine(e.getMessage());
        int json = m.indexOf("{\"message\":");
        if (json >= 0) {
            try {
                String text = new ObjectMapper().readTree(m.substring(json)).path("message").asText("");
                if (!text.isBlank()) return firstLine(text);
            } catch (IOException ignored) {
                // not JSON after all: the line as it is
            }
        }
        return m;
    }

    /** One image inspect; never pulls. */
    @Override
    public boolean imagePresent(String image) {
        return inspectImage(image) != null;
    }

    /** One image inspect; never pulls. */
    @Override
    public ImageInfo inspectImage(String image) {
        try {
            var i = bounded("an inspect of image " + image, callTimeout, () -> docker.inspectImageCmd(image).exec());
            return new ImageInfo(i.getId(), i.getRepoDigests(), i.getConfig() == null ? null : i.getConfig().getLabels());
        } catch (NotFoundException e) {
            return null;
        }
    }

    /**
     * Refuses an image carrying a label in mesh's namespace, before anything is created: Docker merges an image's
     * labels into its container's, so {@code LABEL mesh.window=...} would stand in for mesh's own (decision 20).
     *
     * @throws IllegalStateException naming the image, the label and the fix
     */
    private void refuseMeshLabels(String image) {
        ImageInfo i = inspectImage(image);
        String label = i == null ? null : i.meshLabel();
        if (label != null) {
            throw new IllegalStateException("image " + image + " carries the label " + label + ", and only mesh may set labels starting "
                    + Labels.PREFIX + " (Docker copies an image's labels onto its containers): rebuild the image without it; nothing was created");
        }
    }

    /**
     * Creates (does not start) a managed container.
     *
     * @param dockerName Docker name to give it
     * @param spec       the container's spec
     * @param labels     labels to set ({@link Labels})
     * @return the new container's id
     * @throws ConflictException when the name is taken
     */
    @Override
    public String create(String dockerName, ContainerSpec spec, Map<String, String> labels) {
        return create(dockerName, spec, labels, SecretDelivery.NONE);
    }

    /**
     * Creates (does not start) a managed container with its secrets: their env values join the spec's (the parser
     * keeps the names apart), their files are bind mounts, read-only, of the checked file itself (a mount, unlike a
     * bind, is never made when its source is missing). Nothing here logs the delivery's values.
     *
     * @param secrets what the container's secrets deliver ({@link io.mesh.secrets.SecretsDir})
     */
    @Override
    public String create(String dockerName, ContainerSpec spec, Map<String, String> labels, SecretDelivery secrets) {
        refuseMeshLabels(spec.image());
        Map<String, String> allEnv = new TreeMap<>(spec.env());
        allEnv.putAll(secrets.env());
        CreateContainerCmd cmd = docker.createContainerCmd(spec.image()).withName(dockerName)
                .withEnv(env(allEnv)).withStopTimeout(spec.stopTimeoutSeconds());
        if (!spec.command().isEmpty()) cmd.withCmd(spec.command());
        // On module networks, the first (by Docker name) is the one Docker joins at create, with its aliases; the others
        // are connected before the container is handed back, so that it never starts on fewer than its spec names.
        List<Map.Entry<String, NetworkSpec.Attachment>> joined = List.copyOf(spec.networks().entrySet());
        HostConfig hc = HostConfig.newHostConfig()
                .withNetworkMode(joined.isEmpty() ? spec.network() : joined.get(0).getKey())
                .withRestartPolicy(RestartPolicy.parse(spec.restart()))
                .withBinds(spec.volumes().stream().map(Bind::parse).toList());
        if (!secrets.files().isEmpty()) {
            hc.withMounts(secrets.files().stream().map(f -> new Mount().withType(MountType.BIND).withSource(f.source().toString())
                    .withTarget(f.target()).withReadOnly(true)).toList());
        }
        // What the agent's Policy allowed (it refuses these unless configured to allow them).
        if (spec.runsPrivileged()) hc.withPrivileged(true);
        if (spec.sharesHostPid()) hc.withPidMode(ContainerSpec.PID_HOST);
        if (!spec.capAdd().isEmpty()) hc.withCapAdd(spec.capAdd().stream().map(Capability::valueOf).toArray(Capability[]::new));
        // Published ports mean something only on a bridge network; Docker discards them with host or none.
        if (!joined.isEmpty() && !joined.get(0).getValue().aliases().isEmpty()) cmd.withAliases(joined.get(0).getValue().aliases());
        if (spec.publishesPorts()) {
            Ports ports = new Ports();
            List<ExposedPort> exposed = new ArrayList<>();
            for (String p : spec.ports()) {
                PortBinding b = PortBinding.parse(p);
                ports.add(b);
                exposed.add(b.getExposedPort());
            }
            hc.withPortBindings(ports);
            cmd.withExposedPorts(exposed);
        }
        if (spec.healthcheck() != null) cmd.withHealthcheck(healthCheck(spec.healthcheck()));
        ComposeOptions.apply(spec, cmd, hc, labels); // the operator's labels, then mesh's
        cmd.withHostConfig(hc);
        namedVolumes(spec, labels.get(Labels.MODULE));
        String id = bounded("the create of container " + dockerName, callTimeout, () -> cmd.exec().getId());
        try {
            for (Map.Entry<String, NetworkSpec.Attachment> n : joined.subList(Math.min(1, joined.size()), joined.size())) {
                connect(id, n.getKey(), n.getValue().aliases());
            }
        } catch (RuntimeException e) {
            // A container on fewer networks than its spec would run wrong and plan as unchanged: not created at all.
            try {
                remove(id);
            } catch (RuntimeException removal) {
                e.addSuppressed(removal);
            }
            throw e;
        }
        return id;
    }

    /**
     * Makes each named volume the spec mounts that is not there yet, labelled {@code mesh.module} with its module, so
     * that {@code docker volume ls --filter label=mesh.module=M} finds the data a module keeps after {@code mesh delete}
     * (Docker would make it bare at the container's create). One already there is used as it is, labelled or not.
     */
    private void namedVolumes(ContainerSpec spec, String module) {
        if (module == null) return;
        for (String v : spec.volumes()) {
            String source = ContainerSpec.volumeSource(v);
            if (source.isEmpty() || source.startsWith("/")) continue;
            try {
                bounded("an inspect of volume " + source, callTimeout, () -> docker.inspectVolumeCmd(source).exec());
                continue;
            } catch (NotFoundException missing) {
                // made below
            }
            try {
                bounded("the create of volume " + source, callTimeout,
                        () -> docker.createVolumeCmd().withName(source).withLabels(Map.of(Labels.MODULE, module)).exec());
            } catch (ConflictException raced) {
                // made meanwhile (another container of the module): used as it is
            }
        }
    }

    /** @return the network of this very name, or {@code null} when there is none */
    private Network network(String name) {
        try {
            Network n = bounded("an inspect of network " + name, callTimeout, () -> docker.inspectNetworkCmd().withNetworkId(name).exec());
            // Docker finds a network by id prefix too: only the one of this very name is it.
            return n == null || !name.equals(n.getName()) ? null : n;
        } catch (NotFoundException e) {
            return null;
        }
    }

    @Override
    public Map<String, String> networkLabels(String name) {
        Network n = network(name);
        return n == null ? null : n.getLabels() == null ? Map.of() : n.getLabels();
    }

    @Override
    public Boolean networkInternal(String name) {
        Network n = network(name);
        return n == null ? null : Boolean.TRUE.equals(n.getInternal());
    }

    @Override
    public void createNetwork(String name, boolean internal, Map<String, String> labels) {
        bounded("the create of network " + name, callTimeout, () -> docker.createNetworkCmd().withName(name)
                .withDriver(NetworkSpec.BRIDGE).withInternal(internal).withLabels(labels).withCheckDuplicate(true).exec());
    }

    @Override
    public void removeNetwork(String name) {
        try {
            bounded("the removal of network " + name, callTimeout, () -> docker.removeNetworkCmd(name).exec());
        } catch (NotFoundException e) {
            // already gone
        }
    }

    @Override
    public List<String> moduleNetworks(String module) {
        return bounded("the list of networks of module " + module, callTimeout,
                () -> docker.listNetworksCmd().withFilter("label", List.of(Labels.MODULE + "=" + module)).exec())
                .stream().map(Network::getName).toList();
    }

    @Override
    public List<String> networkMembers(String name) {
        return bounded("the list of containers on network " + name, callTimeout,
                () -> docker.listContainersCmd().withShowAll(true).withNetworkFilter(List.of(name)).exec())
                .stream().map(Container::getId).toList();
    }

    @Override
    public void connect(String id, String network, List<String> aliases) {
        bounded("the connect of container " + id + " to network " + network, callTimeout, () -> docker.connectToNetworkCmd()
                .withNetworkId(network).withContainerId(id).withContainerNetwork(new ContainerNetwork().withAliases(aliases)).exec());
    }

    @Override
    public void disconnect(String id, String network) {
        try {
            bounded("the disconnect of container " + id + " from network " + network, callTimeout,
                    () -> docker.disconnectFromNetworkCmd().withNetworkId(network).withContainerId(id).withForce(true).exec());
        } catch (NotFoundException e) {
            // the container or the network is gone: nothing is attached
        }
    }

    /** Docker's healthcheck from the manifest's: durations in nanoseconds, unset ones left to Docker's defaults. */
    private static HealthCheck healthCheck(Healthcheck h) {
        HealthCheck out = new HealthCheck().withTest(h.test());
        if (h.interval() != null) out.withInterval(Durations.parse(h.interval()).toNanos());
        if (h.timeout() != null) out.withTimeout(Durations.parse(h.timeout()).toNanos());
        if (h.startPeriod() != null) out.withStartPeriod(Durations.parse(h.startPeriod()).toNanos());
        if (h.retries() != null) out.withRetries(h.retries());
        return out;
    }

    @Override
    public RunState runState(String id) {
        InspectContainerResponse i = inspect(id);
        if (i == null) throw new NoSuchContainerException("container " + id + " no longer exists", null);
        InspectContainerResponse.ContainerState s = i.getState();
        HealthState h = s == null ? null : s.getHealth();
        String output = null;
        if (h != null && h.getLog() != null && !h.getLog().isEmpty()) {
            var last = h.getLog().get(h.getLog().size() - 1);
            output = last.getOutput() == null ? null : last.getOutput().strip();
            if (output != null && output.length() > 300) output = output.substring(0, 300) + "...";
            if (last.getExitCodeLong() != null && last.getExitCodeLong() != 0) output = "exit " + last.getExitCodeLong() + (output == null || output.isEmpty() ? "" : ": " + output);
        }
        Long exit = s == null ? null : s.getExitCodeLong();
        return new RunState(s != null && Boolean.TRUE.equals(s.getRunning()), s == null ? "unknown" : s.getStatus(),
                i.getRestartCount() == null ? 0 : i.getRestartCount(), s == null ? null : s.getStartedAt(),
                exit == null ? null : exit.intValue(), h == null || h.getStatus() == null ? RunState.NO_HEALTH : h.getStatus(),
                output, i.getImageId(), h == null || h.getFailingStreak() == null ? 0 : h.getFailingStreak());
    }

    /**
     * @param e a failed call
     * @return true when dockerd answered the call with an error (an HTTP status), not when it could not be reached,
     *         was cut or timed out: an answer is Docker's word on the container, the others may pass
     */
    public static boolean answered(RuntimeException e) {
        return e instanceof DockerException d && d.getHttpStatus() > 0;
    }

    /** Starts a container; a container already running is left as it is. */
    @Override
    public void start(String id) {
        try {
            bounded("the start of container " + id, callTimeout, () -> docker.startContainerCmd(id).exec());
        } catch (NotModifiedException e) {
            // already running
        } catch (NotFoundException e) {
            // A 404 is a missing container only when Docker says so: a start also answers 404 for a network it needs.
            if (!DockerAnswer.noSuchContainer(e)) throw e;
            throw new NoSuchContainerException("container " + id + " no longer exists", e);
        } catch (RuntimeException e) {
            if (!StaleTaskException.is(e, id)) throw e;
            throw new StaleTaskException("container " + id + " cannot be started again: Docker keeps a task of it from a start"
                    + " that a dockerd restart cut (" + e.getMessage().strip() + "); a new container runs, the old one does not", e);
        }
    }

    /**
     * Stops a container: SIGTERM, then SIGKILL after the timeout. A stopped container is left as it is. dockerd
     * answers when the container has stopped: the call is bounded by the stop timeout plus the call timeout.
     *
     * @param id             container id
     * @param timeoutSeconds seconds between SIGTERM and SIGKILL
     * @throws DockerTimeoutException when dockerd has not answered within {@code timeoutSeconds} plus the call timeout
     */
    @Override
    public void stop(String id, int timeoutSeconds) {
        try {
            bounded("the stop of container " + id + " (stop timeout " + timeoutSeconds + "s)",
                    callTimeout.plusSeconds(Math.max(0, timeoutSeconds)),
                    () -> waits.stopContainerCmd(id).withTimeout(timeoutSeconds).exec());
        } catch (NotModifiedException e) {
            // already stopped
        }
    }

    /** Removes a container, stopping it first if it runs; volumes are kept. A missing container is ignored. */
    @Override
    public void remove(String id) {
        try {
            bounded("the removal of container " + id, callTimeout,
                    () -> docker.removeContainerCmd(id).withForce(true).withRemoveVolumes(false).exec());
        } catch (NotFoundException e) {
            // already gone
        }
    }

    /** Renames a container. */
    @Override
    public void rename(String id, String newName) {
        bounded("the rename of container " + id + " to " + newName, callTimeout,
                () -> docker.renameContainerCmd(id).withName(newName).exec());
    }

    /**
     * @param id container id
     * @return its restart policy name ({@code no}, {@code always}, {@code unless-stopped}, {@code on-failure})
     */
    @Override
    public String restartPolicy(String id) {
        InspectContainerResponse i = bounded("an inspect of container " + id, callTimeout, () -> docker.inspectContainerCmd(id).exec());
        RestartPolicy p = i.getHostConfig() == null ? null : i.getHostConfig().getRestartPolicy();
        String name = p == null ? null : p.getName();
        if (name == null || name.isEmpty()) return "no";
        Integer max = p.getMaximumRetryCount();
        return name.equals("on-failure") && max != null && max > 0 ? name + ":" + max : name;
    }

    /**
     * Changes the restart policy of an existing container and checks, with an inspect, that Docker took it. docker-java
     * 3.7.1's {@code RestartPolicy.noRestart()} sends an empty name, which dockerd ignores (SPEC.md, "Notes"), so
     * {@code no} is sent by its name.
     *
     * @param id     container id
     * @param policy {@code no}, {@code always}, {@code unless-stopped}, {@code on-failure} or {@code on-failure:N}
     * @throws IllegalStateException when the policy read back differs
     */
    @Override
    public void updateRestartPolicy(String id, String policy) {
        RestartPolicy p = policy.equals("no") ? NAMED_NO : RestartPolicy.parse(policy);
        bounded("the update of container " + id, callTimeout, () -> docker.updateContainerCmd(id).withRestartPolicy(p).exec());
        String now = restartPolicy(id);
        if (!now.equals(policy)) {
            throw new IllegalStateException("restart policy of " + id + " is '" + now + "' after an update to '" + policy + "'");
        }
    }

    /** Restart policy {@code no} with its name spelled out (see {@link #updateRestartPolicy}). */
    private static final RestartPolicy NAMED_NO = namedNo();

    private static RestartPolicy namedNo() {
        try {
            return new ObjectMapper().readValue("{\"Name\":\"no\",\"MaximumRetryCount\":0}", RestartPolicy.class);
        } catch (IOException e) {
            throw new IllegalStateException("cannot build restart policy 'no'", e);
        }
    }

    /**
     * Creates (does not start) a window's one-shot step container. A window creates it before it stops anything, so
     * that Docker itself shows, to every mesh process on the host, that a window of the module is open (its labels
     * carry the window's journal entry).
     *
     * @param name        Docker name for the step container
     * @param step        the step
     * @param volumesFrom Docker name of the container whose volumes to mount, or {@code null}
     * @param labels      labels ({@code mesh.window}, {@code mesh.module}, {@code mesh.journal} ...)
     * @return the step container's id
     */
    @Override
    public String createStep(String name, StepSpec step, String volumesFrom, Map<String, String> labels) {
        ensureImage(step.image());
        refuseMeshLabels(step.image());
        CreateContainerCmd cmd = docker.createContainerCmd(step.image()).withName(name).withLabels(labels)
                .withEnv(env(step.env()));
        if (!step.command().isEmpty()) cmd.withCmd(step.command());
        HostConfig hc = HostConfig.newHostConfig().withNetworkMode(step.network())
                .withBinds(step.volumes().stream().map(Bind::parse).toList());
        if (volumesFrom != null) hc.withVolumesFrom(new VolumesFrom(volumesFrom));
        return bounded("the create of step container " + name, callTimeout, () -> cmd.withHostConfig(hc).exec().getId());
    }

    /**
     * Runs a created step container to its end: start, wait (kill at the timeout), read its last log lines. The
     * caller removes it.
     *
     * @param id       the step container
     * @param timeout  kill after this long
     * @param logLines how many last log lines to keep
     * @return exit code, whether it timed out, last log lines
     */
    @Override
    public StepResult runStep(String id, Duration timeout, int logLines) {
        bounded("the start of step container " + id, callTimeout, () -> docker.startContainerCmd(id).exec());
        boolean timedOut = false;
        Integer code;
        try {
            code = awaitStatus(id, timeout);
        } catch (DockerClientException e) {
            timedOut = true;
            try {
                bounded("the kill of step container " + id, callTimeout, () -> docker.killContainerCmd(id).exec());
            } catch (RuntimeException ignored) {
                // it may have ended meanwhile
            }
            code = awaitStatus(id, KILLED_STEP_WAIT);
        }
        return new StepResult(code == null ? -1 : code, timedOut, logTail(id, logLines));
    }

    /**
     * Docker's wait (a long poll that answers when the container exits), bounded by {@code max}, on the client without
     * a response timeout. The stream is closed after the wait, whatever happened, so that no connection stays with it.
     *
     * @throws DockerClientException when it has not exited within {@code max} (or the wait stream broke)
     */
    private Integer awaitStatus(String id, Duration max) {
        WaitContainerResultCallback wait = waits.waitContainerCmd(id).exec(new WaitContainerResultCallback());
        try {
            return wait.awaitStatusCode(max.toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            try {
                wait.close();
            } catch (IOException | RuntimeException ignored) {
                // closing only frees the connection
            }
        }
    }

    @Override
    public List<Map<String, String>> stepLabels(String module) {
        return bounded("the list of module " + module + "'s step containers", callTimeout, () -> docker.listContainersCmd()
                .withShowAll(true).withLabelFilter(List.of(Labels.WINDOW, Labels.MODULE + "=" + module)).exec()).stream()
                .map(c -> c.getLabels() == null ? Map.<String, String>of() : c.getLabels()).toList();
    }

    @Override
    public Map<String, String> labels(String id) {
        InspectContainerResponse i = inspect(id);
        return i == null || i.getConfig() == null || i.getConfig().getLabels() == null ? Map.of() : i.getConfig().getLabels();
    }

    @Override
    public Integer awaitExit(String id, Duration max) {
        if (max.isNegative() || max.isZero()) return isRunning(id) ? null : exitCode(id);
        try {
            return awaitStatus(id, max);
        } catch (DockerClientException e) {
            return null; // still running at the end of the wait
        } catch (NotFoundException e) {
            return null;
        }
    }

    private Integer exitCode(String id) {
        InspectContainerResponse i = inspect(id);
        return i == null || i.getState() == null ? null : i.getState().getExitCode();
    }

    @Override
    public boolean isRunning(String id) {
        InspectContainerResponse i = inspect(id);
        return i != null && i.getState() != null && Boolean.TRUE.equals(i.getState().getRunning());
    }

    @Override
    public void kill(String id) {
        try {
            bounded("the kill of container " + id, callTimeout, () -> docker.killContainerCmd(id).exec());
        } catch (NotFoundException | ConflictException e) {
            // gone, or not running
        }
    }

    /**
     * @param id    container id
     * @param lines how many last lines
     * @return the container's last log lines, stdout and stderr together
     */
    @Override
    public List<String> logTail(String id, int lines) {
        Deque<String> tail = new ArrayDeque<>();
        StringBuilder partial = new StringBuilder();
        try (ResultCallback.Adapter<Frame> cb = docker.logContainerCmd(id).withStdOut(true).withStdErr(true)
                .withTail(lines).exec(new ResultCallback.Adapter<>() {
                    @Override
                    public void onNext(Frame f) {
                        partial.append(new String(f.getPayload(), StandardCharsets.UTF_8));
                        int nl;
                        while ((nl = partial.indexOf("\n")) >= 0) {
                            tail.addLast(partial.substring(0, nl));
                            partial.delete(0, nl + 1);
                            while (tail.size() > lines) tail.removeFirst();
                        }
                    }
                })) {
            cb.awaitCompletion(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException e) {
            tail.addLast("(logs unavailable: " + firstLine(e.getMessage()) + ")");
        }
        if (partial.length() > 0) tail.addLast(partial.toString());
        while (tail.size() > lines) tail.removeFirst();
        return List.copyOf(tail);
    }

    /**
     * One bounded {@code GET /events?since=..&until=..&filters={"container":[id],"event":["die"]}}: dockerd answers at
     * once from its buffer of recent events (it keeps the last few hundred), as {@code until} is not in the future. What
     * has not come within the call timeout, or an engine that cannot answer, leaves the answer short, never the caller
     * waiting: the caller falls back on an inspect.
     */
    @Override
    public List<Exit> exits(String id, Instant since, Instant until) {
        List<Exit> out = new ArrayList<>();
        Instant end = until.isAfter(Instant.now()) ? Instant.now() : until;
        ResultCallback.Adapter<Event> cb = new ResultCallback.Adapter<>() {
            @Override
            public void onNext(Event e) {
                Map<String, String> a = e.getActor() == null || e.getActor().getAttributes() == null ? Map.of() : e.getActor().getAttributes();
                String code = a.get("exitCode");
                if (code == null || !id.equals(e.getId())) return;
                try {
                    Instant at = e.getTimeNano() != null ? Instant.ofEpochSecond(0, e.getTimeNano())
                            : e.getTime() != null ? Instant.ofEpochSecond(e.getTime()) : null;
                    synchronized (out) {
                        out.add(new Exit(Integer.parseInt(code.strip()), at));
                    }
                } catch (NumberFormatException ignored) {
                    // not a code: left out
                }
            }
        };
        try (ResultCallback.Adapter<Event> c = docker.eventsCmd().withEventTypeFilter("container").withContainerFilter(id)
                .withEventFilter("die").withSince(eventTime(since)).withUntil(eventTime(end)).exec(cb)) {
            if (!c.awaitCompletion(callTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                log.debug("the die events of container {} did not all come within {}", id, callTimeout);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | RuntimeException e) {
            log.debug("the die events of container {} could not be read: {}", id, firstLine(e.getMessage()));
        }
        synchronized (out) {
            return List.copyOf(out);
        }
    }

    /** @return an instant as the events API takes it: seconds since the epoch, with nanoseconds after the point */
    static String eventTime(Instant t) {
        return t.getEpochSecond() + "." + String.format(java.util.Locale.ROOT, "%09d", t.getNano());
    }

    /**
     * Lists containers carrying a label, running or not (for clean-up and step containers).
     *
     * @param label label key
     * @param value label value, or {@code null} for any value
     * @return container ids
     */
    @Override
    public List<String> containersWithLabel(String label, String value) {
        var list = docker.listContainersCmd().withShowAll(true);
        var cmd = value == null ? list.withLabelFilter(List.of(label)) : list.withLabelFilter(Map.of(label, value));
        return bounded("the list of containers labelled " + label + (value == null ? "" : "=" + value), callTimeout, () -> cmd.exec())
                .stream().map(Container::getId).toList();
    }

    /**
     * {@code docker exec}: the exec is created (a call dockerd answers at once, bounded by the call timeout), started
     * with its output attached on the client without a response timeout, and waited for at most {@code timeout}; its
     * exit code is read with an inspect. Docker's API cannot kill an exec: one still running at its timeout is killed by
     * its host pid (the inspect's {@code Pid}), with its descendants, when that pid is visible here and is in the
     * container's cgroup (so a reused pid is never killed); else it is left, and {@link ExecResult#killed()} is false.
     */
    @Override
    public ExecResult exec(String id, List<String> command, Duration timeout, int outputLines) {
        String execId;
        try {
            execId = bounded("the exec create in container " + id, callTimeout, () -> docker.execCreateCmd(id)
                    .withCmd(command.toArray(String[]::new)).withAttachStdout(true).withAttachStderr(true).exec().getId());
        } catch (NotFoundException e) {
            if (!DockerAnswer.noSuchContainer(e)) throw e;
            throw new NoSuchContainerException("container " + id + " no longer exists", e);
        }
        Deque<String> tail = new ArrayDeque<>();
        StringBuilder partial = new StringBuilder();
        boolean ended;
        ResultCallback.Adapter<Frame> cb = waits.execStartCmd(execId).exec(new ResultCallback.Adapter<>() {
            @Override
            public void onNext(Frame f) {
                synchronized (tail) {
                    partial.append(new String(f.getPayload(), StandardCharsets.UTF_8));
                    int nl;
                    while ((nl = partial.indexOf("\n")) >= 0) {
                        tail.addLast(partial.substring(0, nl));
                        partial.delete(0, nl + 1);
                        while (tail.size() > outputLines) tail.removeFirst();
                    }
                    if (partial.length() > 4096) partial.setLength(4096); // one endless line holds no heap
                }
            }
        });
        try {
            ended = cb.awaitCompletion(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ended = false;
        } finally {
            try {
                cb.close(); // frees the connection, whatever happened
            } catch (IOException | RuntimeException ignored) {
                // closing only frees the connection
            }
        }
        var inspect = bounded("an inspect of exec " + execId + " in container " + id, callTimeout,
                () -> docker.inspectExecCmd(execId).exec());
        boolean running = Boolean.TRUE.equals(inspect.isRunning());
        List<String> out;
        synchronized (tail) {
            if (partial.length() > 0) tail.addLast(partial.toString());
            while (tail.size() > outputLines) tail.removeFirst();
            out = List.copyOf(tail);
        }
        if (ended && !running) {
            Long code = inspect.getExitCodeLong();
            return new ExecResult(code == null ? null : code.intValue(), false, false, out);
        }
        if (!running) { // ended as the wait ran out: its code stands
            Long code = inspect.getExitCodeLong();
            if (code != null) return new ExecResult(code.intValue(), false, false, out);
        }
        String full = inspect.getContainerID() == null ? id : inspect.getContainerID();
        return new ExecResult(null, true, killExec(full, inspect.getPidLong()), out);
    }

    /**
     * Kills an exec's process by its host pid, with its descendants, when it is visible to this process and in the
     * container's cgroup ({@code /proc/<pid>/cgroup} names the container's id).
     *
     * @return true when the kill was sent
     */
    private static boolean killExec(String containerId, Long pid) {
        if (pid == null || pid <= 0) return false;
        try {
            String cgroup = java.nio.file.Files.readString(java.nio.file.Path.of("/proc", Long.toString(pid), "cgroup"));
            if (!cgroup.contains(containerId)) return false; // another namespace's pid, or reused: never ours to kill
            var p = ProcessHandle.of(pid);
            if (p.isEmpty()) return false;
            p.get().descendants().forEach(ProcessHandle::destroyForcibly);
            return p.get().destroyForcibly() || !p.get().isAlive();
        } catch (IOException | RuntimeException e) {
            log.debug("exec pid {} in container {} not killed: {}", pid, containerId, e.toString());
            return false;
        }
    }

    private static List<String> env(Map<String, String> env) {
        return env.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toList();
    }

    static String firstLine(String s) {
        if (s == null) return "no message";
        return s.lines().findFirst().orElse(s).strip();
    }

    @Override
    public void close() throws IOException {
        watchdog.shutdownNow();
        try {
            docker.close();
        } finally {
            waits.close();
        }
    }
}
