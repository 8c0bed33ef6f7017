package io.mesh.docker;

import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.StepSpec;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The container operations an apply and a window make. {@link DockerEngine} is the real one (docker-java against a
 * Docker engine); benchmarks that simulate many hosts use a recording runtime instead, and say so in their results.
 * Tests of behaviour always use {@link DockerEngine}.
 *
 * <p>Failures are runtime exceptions carrying the engine's message; missing containers are not failures where a
 * method says so.
 */
public interface ContainerRuntime {
    /** @throws IllegalStateException naming the engine when it does not answer */
    void ping();

    /**
     * @param module module name (label {@code mesh.module})
     * @return the module's managed containers, running or not, step containers excluded
     */
    List<ObservedContainer> moduleContainers(String module);

    /**
     * A module's containers and its step containers in one look: what a no-op reconcile needs to see that nothing
     * changed. {@link DockerEngine} makes it one labelled list call.
     *
     * @param module module name (label {@code mesh.module})
     * @return the managed containers as {@link #moduleContainers} gives them, and the labels of the step containers
     *         as {@link #stepLabels} gives them
     */
    default ModuleView moduleView(String module) {
        return new ModuleView(moduleContainers(module), stepLabels(module));
    }

    /**
     * @param containers the module's managed containers, running or not
     * @param steps      the labels of its step containers (label {@code mesh.window}), running or not
     */
    record ModuleView(List<ObservedContainer> containers, List<Map<String, String>> steps) {}

    /**
     * @param name Docker name, without the leading slash
     * @return the id of the container with exactly that name, or {@code null}
     */
    String idByName(String name);

    /** Pulls an image when it is not on this host. @throws IllegalStateException naming the image when it cannot be had */
    void ensureImage(String image);

    /**
     * Pulls an image from its registry whether or not it is on this host ({@code pull: always}).
     *
     * @throws IllegalStateException naming the image, its registry and the fix when it cannot be pulled
     */
    void pull(String image);

    /**
     * As {@link #pull(String)}, telling {@code progress} the pull's layers each time their counts change (on the
     * pull's callback thread; docs/decisions/0032-apply-progress.md). A runtime that cannot tell just pulls.
     */
    default void pull(String image, java.util.function.Consumer<PullLayers> progress) { pull(image); }

    /** As {@link #ensureImage(String)}, telling {@code progress} the layers of a pull it makes ({@link #pull(String, java.util.function.Consumer)}). */
    default void ensureImage(String image, java.util.function.Consumer<PullLayers> progress) { ensureImage(image); }

    /**
     * Read only: never pulls.
     *
     * @param image image reference or id
     * @return the image's id and repo digests, or {@code null} when it is not on this host (one image inspect)
     */
    ImageInfo inspectImage(String image);

    /**
     * Read only: never pulls (a plan uses it, and a plan changes nothing).
     *
     * @param image image reference
     * @return true when the image is on this host (one image inspect)
     */
    boolean imagePresent(String image);

    /**
     * Creates (does not start) a container.
     *
     * @return its id
     */
    String create(String dockerName, ContainerSpec spec, Map<String, String> labels);

    /**
     * Creates (does not start) a container with its secrets (decision 18). A runtime that cannot deliver secrets
     * refuses a container that has some rather than create it without them.
     *
     * @param secrets environment values and files to mount read-only; {@link SecretDelivery#NONE} for none
     * @return its id
     * @throws UnsupportedOperationException when there are secrets and this runtime cannot deliver them
     */
    default String create(String dockerName, ContainerSpec spec, Map<String, String> labels, SecretDelivery secrets) {
        if (!secrets.isEmpty()) throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot deliver secrets");
        return create(dockerName, spec, labels);
    }

    /**
     * Starts a container; a running one is left as it is.
     *
     * @throws NoSuchContainerException when it no longer exists
     * @throws StaleTaskException       when Docker refuses it for good: only a new container runs
     */
    void start(String id);

    /** Stops a container, SIGKILL after {@code timeoutSeconds}; a stopped one is left as it is. */
    void stop(String id, int timeoutSeconds);

    /** Removes a container (forcefully), keeping volumes; a missing one is ignored. */
    void remove(String id);

    /** Renames a container. */
    void rename(String id, String newName);

    /** @return the restart policy name: {@code no}, {@code always}, {@code unless-stopped} or {@code on-failure} */
    String restartPolicy(String id);

    /** Changes the restart policy of an existing container and checks it took. */
    void updateRestartPolicy(String id, String policy);

    /**
     * Creates (does not start) a window's step container.
     *
     * @return its id
     */
    String createStep(String name, StepSpec step, String volumesFrom, Map<String, String> labels);

    /**
     * Starts a created step container and waits for its end (kill at {@code timeout}); the caller removes it.
     *
     * @return exit code, whether it timed out, its last {@code logLines} log lines
     */
    StepResult runStep(String id, Duration timeout, int logLines);

    /**
     * @param module module name
     * @return the labels of every step container of the module (label {@code mesh.window}), running or not
     */
    List<Map<String, String>> stepLabels(String module);

    /** @return a container's labels; empty when it does not exist */
    Map<String, String> labels(String id);

    /**
     * Waits for a container to exit.
     *
     * @param id  container id
     * @param max the longest wait
     * @return its exit code, or {@code null} when it still runs after {@code max}
     */
    Integer awaitExit(String id, Duration max);

    /** @return true when the container exists and runs */
    boolean isRunning(String id);

    /** Sends SIGKILL to a container; a stopped or missing one is ignored. */
    void kill(String id);

    /**
     * @param id container id
     * @return its state, health and image from one inspect
     * @throws NoSuchContainerException when it does not exist
     */
    RunState runState(String id);

    /** @return the container's last {@code lines} log lines, stdout and stderr together */
    List<String> logTail(String id, int lines);

    /**
     * Docker's {@code die} events of one container in a span, each with the exit code it carries (attribute
     * {@code exitCode}). An inspect forgets the exit code as soon as a restart policy starts the container again
     * ({@code State.ExitCode} is 0 while it runs); the event keeps it. Bounded: what has not come by the call's bound is
     * left out, and a runtime that cannot say answers nothing.
     *
     * @param id    container id
     * @param since start of the span
     * @param until end of the span (not after now: Docker would wait for it)
     * @return its exits in the span, oldest first; empty when none is known
     */
    default List<Exit> exits(String id, Instant since, Instant until) {
        return List.of();
    }

    /**
     * One exit of a container, from its {@code die} event.
     *
     * @param code its exit code
     * @param at   when Docker saw it exit
     */
    record Exit(int code, Instant at) {}

    /**
     * @param label label key
     * @param value label value, or {@code null} for any
     * @return ids of every container carrying it, running or not
     */
    List<String> containersWithLabel(String label, String value);

    /**
     * Runs a command in a running container ({@code docker exec}, no TTY, stdout and stderr attached): a container's
     * hook (docs/decisions/0038-container-hooks.md). Not a change of the container's state: Docker makes
     * {@code exec_create}, {@code exec_start} and {@code exec_die} events, which touch nothing (SPEC.md, "Audit").
     *
     * @param id          the container
     * @param command     the argv, run without a shell
     * @param timeout     how long it may run; then it is abandoned, and its process killed where this process can see
     *                    it ({@link ExecResult#killed()})
     * @param outputLines how many of its last output lines to keep
     * @return how it ended
     * @throws NoSuchContainerException when the container does not exist
     * @throws RuntimeException         as Docker answered (a container that does not run: 409), or
     *                                  {@link DockerTimeoutException} when dockerd did not answer the exec's create
     */
    default ExecResult exec(String id, List<String> command, java.time.Duration timeout, int outputLines) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot exec in a container");
    }

    /**
     * @param name a network's Docker name
     * @return its labels (empty when it has none), or {@code null} when there is no such network on this host
     */
    default Map<String, String> networkLabels(String name) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no networks");
    }

    /**
     * @param name a network's Docker name
     * @return Docker's {@code Internal} of it, or {@code null} when there is no such network (or the runtime cannot say)
     */
    default Boolean networkInternal(String name) {
        return null;
    }

    /**
     * Creates a bridge network (decision 31).
     *
     * @param name     its Docker name
     * @param internal true: no route out of it
     * @param labels   its labels, the operator's and mesh's
     */
    default void createNetwork(String name, boolean internal, Map<String, String> labels) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no networks");
    }

    /** Removes a network; a missing one is ignored. */
    default void removeNetwork(String name) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no networks");
    }

    /**
     * @param name a network's Docker name
     * @return the ids of every container attached to it, running or not (a stopped one keeps its attachment)
     */
    default List<String> networkMembers(String name) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no networks");
    }

    /** Connects a container to a network, answering there to {@code aliases}. */
    default void connect(String id, String network, List<String> aliases) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no networks");
    }

    /** Disconnects a container from a network; one not attached is left as it is. */
    default void disconnect(String id, String network) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no networks");
    }

    /**
     * @param module module name
     * @return the Docker names of the networks labelled {@code mesh.module=<module>} on this host
     */
    default List<String> moduleNetworks(String module) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no networks");
    }
}
