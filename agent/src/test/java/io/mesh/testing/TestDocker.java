package io.mesh.testing;

import com.github.dockerjava.api.model.Event;
import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.DockerEngine;
import io.mesh.docker.Labels;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The real Docker engine the tests run against (started by {@code deploy/dev/docker-engine.sh}). Tests fail loudly
 * when it does not answer: nothing here skips.
 */
public final class TestDocker {
    /** One call to a runtime, as {@link #intercepting} hands it on. */
    public interface Interceptor {
        /**
         * @param method  the {@link ContainerRuntime} method called
         * @param args    its arguments
         * @param proceed makes the call on the real runtime and returns its result
         * @return what the call returns
         * @throws Throwable what the call throws, or a fault given to it
         */
        Object call(Method method, Object[] args, Proceed proceed) throws Throwable;
    }

    /** The real call, as the runtime makes it (its own exception, not a reflective wrapper). */
    public interface Proceed {
        Object call() throws Throwable;
    }

    /**
     * A runtime whose every call passes through {@code interceptor} on its way to {@code docker}: how a test gives one
     * call Docker's answer that cannot be made on demand, or kills the process after one, on the real engine otherwise.
     */
    public static ContainerRuntime intercepting(ContainerRuntime docker, Interceptor interceptor) {
        return (ContainerRuntime) Proxy.newProxyInstance(ContainerRuntime.class.getClassLoader(), new Class<?>[] {ContainerRuntime.class},
                (p, m, args) -> {
                    Proceed real = () -> {
                        try {
                            return m.invoke(docker, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    };
                    return m.getDeclaringClass() == Object.class ? real.call() : interceptor.call(m, args, real);
                });
    }

    /** A small image every test may use (imported by docker-engine.sh). */
    public static final String BUSYBOX = "mesh-demo/busybox:1";
    /** The registry image. */
    public static final String REGISTRY = "mesh-demo/registry:2.8.2";
    /** A long-running command that stops within a second of SIGTERM (busybox sh as PID 1 ignores it otherwise). */
    public static final List<String> SERVE = List.of("sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done");

    private static DockerEngine engine;

    private TestDocker() {}

    /** @return the shared engine, pinged */
    public static synchronized DockerEngine engine() {
        if (engine == null) {
            engine = new DockerEngine(null);
            engine.ping();
        }
        return engine;
    }

    /** @return a fresh module name such as {@code t3f2a9c}, so that tests never depend on a fixed name being free */
    public static String uniqueModule(String prefix) {
        recorder();
        return prefix + String.format("%06x", ThreadLocalRandom.current().nextInt(1 << 24));
    }

    /** Removes every container of a module (managed and step containers) and the named volumes given. */
    public static void clean(String module, String... volumes) {
        DockerEngine d = engine();
        for (String id : d.containersWithLabel(Labels.MODULE, module)) d.remove(id);
        for (String n : d.moduleNetworks(module)) {
            try {
                d.removeNetwork(n);
            } catch (RuntimeException inUse) {
                // another test's container on it: that test removes it
            }
        }
        for (String v : volumes) {
            try {
                d.client().removeVolumeCmd(v).exec();
            } catch (RuntimeException ignored) {
                // not there
            }
        }
    }

    /**
     * Leaves a container in Docker's {@code Dead} state, as an engine killed during a removal does (seen by
     * FleetHistoryIT): its removal is made to fail by an immutable file in its directory, then the file is made
     * mutable again when {@code stuck} is false. Needs root and the engine's directory on this machine.
     *
     * @param id    container id
     * @param stuck true to leave the file immutable, so that removing the container keeps failing; undo with
     *              {@link #unstick}
     * @return the immutable file
     */
    public static java.nio.file.Path makeDead(String id, boolean stuck) throws Exception {
        DockerEngine d = engine();
        java.nio.file.Path file = java.nio.file.Path.of(d.client().infoCmd().exec().getDockerRootDir(), "containers", id, "hostname");
        chattr("+i", file);
        try {
            d.client().removeContainerCmd(id).withForce(true).exec();
            throw new IllegalStateException("container " + id + " was removed although " + file + " is immutable");
        } catch (com.github.dockerjava.api.exception.DockerException expected) {
            // "unable to remove filesystem": Docker marks the container Dead
        } finally {
            if (!stuck) chattr("-i", file);
        }
        String state = d.inspect(id).getState().getStatus();
        if (!"dead".equals(state)) throw new IllegalStateException("container " + id + " is " + state + ", not dead");
        return file;
    }

    /** Makes a file left immutable by {@link #makeDead} mutable again, so that the container can be removed. */
    public static void unstick(java.nio.file.Path file) throws Exception {
        if (java.nio.file.Files.exists(file)) chattr("-i", file);
    }

    private static void chattr(String flag, java.nio.file.Path file) throws Exception {
        Process p = new ProcessBuilder("chattr", flag, file.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) throw new IllegalStateException("chattr " + flag + " " + file + " failed (root needed): " + out);
    }

    /** Every module's events since the first {@link #uniqueModule}, recorded live (see {@link #events}). */
    private static DockerEvents recorder;
    /** Not the class's lock: the recorder's thread takes that one in {@link #engine()} while it subscribes. */
    private static final Object RECORDER_LOCK = new Object();

    private static DockerEvents recorder() {
        synchronized (RECORDER_LOCK) {
            if (recorder == null) recorder = DockerEvents.record(m -> true, java.time.Duration.ofMinutes(30));
            return recorder;
        }
    }

    /**
     * Docker's events between two instants for containers of one module (by label), in order. They come from a
     * recorder that follows the engine's stream live from this JVM's first {@link #uniqueModule}: asking dockerd
     * afterwards ({@code since}/{@code until}) loses events once other tests have pushed them out of its in-memory
     * buffer, which keeps only the last 256 (moby {@code daemon/events}).
     *
     * @param module module name
     * @param from   start (seconds precision, as Docker's {@code since} was)
     * @param to     end
     * @return events (action, container id, name)
     */
    public static List<Event> events(String module, Instant from, Instant to) {
        DockerEvents d = recorder();
        d.settle();
        long lo = (from.getEpochSecond() - 1) * 1_000_000_000L, hi = (to.getEpochSecond() + 2) * 1_000_000_000L;
        List<Event> out = new ArrayList<>();
        for (Event e : d.all()) {
            Map<String, String> attrs = e.getActor() == null || e.getActor().getAttributes() == null ? Map.of() : e.getActor().getAttributes();
            if (!module.equals(attrs.get(Labels.MODULE)) || e.getTimeNano() == null) continue;
            if (e.getTimeNano() >= lo && e.getTimeNano() < hi) out.add(e);
        }
        return out;
    }

    /** @return the action of an event ({@code create}, {@code start}, {@code die}, {@code destroy} ...) */
    public static String action(Event e) {
        return e.getAction() != null ? e.getAction() : e.getStatus();
    }

    /** @return the container name an event is about */
    public static String name(Event e) {
        return e.getActor() == null || e.getActor().getAttributes() == null ? null : e.getActor().getAttributes().get("name");
    }
}
