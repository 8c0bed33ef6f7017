package io.mesh.bench;

import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.Labels;
import io.mesh.docker.ObservedContainer;
import io.mesh.docker.StepResult;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.StepSpec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A SIMULATED container runtime for benchmarks: every call is recorded in memory and returns at once; no Docker
 * engine is involved. Benchmarks that use it (B4, B5) say so in their results. Never used by tests of behaviour,
 * and never on the product's main path.
 */
public final class RecordingRuntime implements ContainerRuntime {
    private record Box(String id, String name, Map<String, String> labels, boolean running) {}

    private final Map<String, Box> byId = new ConcurrentHashMap<>();
    private final AtomicLong calls = new AtomicLong();

    /** @return how many runtime calls were recorded */
    public long calls() { return calls.get(); }

    private static String newId() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return String.format("%016x%016x", r.nextLong(), r.nextLong());
    }

    private Box byName(String name) {
        for (Box b : byId.values()) if (b.name.equals(name)) return b;
        return null;
    }

    @Override public void ping() { calls.incrementAndGet(); }

    @Override
    public List<ObservedContainer> moduleContainers(String module) {
        calls.incrementAndGet();
        List<ObservedContainer> out = new ArrayList<>();
        for (Box b : byId.values()) {
            if (!module.equals(b.labels.get(Labels.MODULE)) || b.labels.containsKey(Labels.WINDOW)) continue;
            out.add(new ObservedContainer(b.id, b.name, b.labels.get(Labels.CONTAINER), b.labels.get(Labels.SPEC_HASH),
                    b.labels.get(Labels.SPEC), b.labels.get(Labels.REVISION), b.running, b.running ? "running" : "exited (0)"));
        }
        return out;
    }

    @Override
    public String idByName(String name) {
        calls.incrementAndGet();
        Box b = byName(name);
        return b == null ? null : b.id;
    }

    @Override public void ensureImage(String image) { calls.incrementAndGet(); }

    @Override public boolean imagePresent(String image) { calls.incrementAndGet(); return true; }

    @Override public void pull(String image) { calls.incrementAndGet(); }

    /** Every image is here, under an id made of its name, and came from no registry. */
    @Override
    public io.mesh.docker.ImageInfo inspectImage(String image) {
        calls.incrementAndGet();
        return new io.mesh.docker.ImageInfo("sha256:" + Integer.toHexString(image.hashCode()), java.util.List.of());
    }

    @Override
    public synchronized String create(String dockerName, ContainerSpec spec, Map<String, String> labels) {
        calls.incrementAndGet();
        if (byName(dockerName) != null) throw new IllegalStateException("Conflict: name " + dockerName + " is in use");
        String id = newId();
        byId.put(id, new Box(id, dockerName, Map.copyOf(labels), false));
        return id;
    }

    private void set(String id, boolean running) {
        byId.computeIfPresent(id, (k, b) -> new Box(b.id, b.name, b.labels, running));
    }

    @Override
    public void start(String id) {
        calls.incrementAndGet();
        if (!byId.containsKey(id)) throw new io.mesh.docker.NoSuchContainerException("no such container: " + id, null);
        set(id, true);
    }
    @Override public void stop(String id, int timeoutSeconds) { calls.incrementAndGet(); set(id, false); }
    @Override public void remove(String id) { calls.incrementAndGet(); byId.remove(id); }

    @Override
    public synchronized void rename(String id, String newName) {
        calls.incrementAndGet();
        byId.computeIfPresent(id, (k, b) -> new Box(b.id, newName, b.labels, b.running));
    }

    @Override public String restartPolicy(String id) { calls.incrementAndGet(); return "unless-stopped"; }
    @Override public void updateRestartPolicy(String id, String policy) { calls.incrementAndGet(); }

    @Override
    public synchronized String createStep(String name, StepSpec step, String volumesFrom, Map<String, String> labels) {
        calls.incrementAndGet();
        String id = newId();
        byId.put(id, new Box(id, name, Map.copyOf(labels), false));
        return id;
    }

    @Override
    public StepResult runStep(String id, Duration timeout, int logLines) {
        calls.incrementAndGet();
        return new StepResult(0, false, List.of("(simulated step)"));
    }

    @Override
    public List<Map<String, String>> stepLabels(String module) {
        calls.incrementAndGet();
        List<Map<String, String>> out = new ArrayList<>();
        for (Box b : byId.values()) {
            if (module.equals(b.labels.get(Labels.MODULE)) && b.labels.containsKey(Labels.WINDOW)) out.add(b.labels);
        }
        return out;
    }

    @Override
    public Map<String, String> labels(String id) {
        calls.incrementAndGet();
        Box b = byId.get(id);
        return b == null ? Map.of() : b.labels;
    }

    @Override public Integer awaitExit(String id, Duration max) { calls.incrementAndGet(); return 0; }

    @Override
    public boolean isRunning(String id) {
        calls.incrementAndGet();
        Box b = byId.get(id);
        return b != null && b.running;
    }

    @Override
    public io.mesh.docker.RunState runState(String id) {
        calls.incrementAndGet();
        Box b = byId.get(id);
        if (b == null) throw new io.mesh.docker.NoSuchContainerException("container " + id + " no longer exists", null);
        return new io.mesh.docker.RunState(b.running, b.running ? "running" : "exited", 0, "simulated", b.running ? null : 0,
                io.mesh.docker.RunState.NO_HEALTH, null, "sha256:simulated");
    }

    @Override public void kill(String id) { calls.incrementAndGet(); set(id, false); }
    @Override public List<String> logTail(String id, int lines) { calls.incrementAndGet(); return List.of(); }

    @Override
    public List<String> containersWithLabel(String label, String value) {
        calls.incrementAndGet();
        List<String> out = new ArrayList<>();
        for (Box b : byId.values()) {
            String v = b.labels.get(label);
            if (v != null && (value == null || value.equals(v))) out.add(b.id);
        }
        return out;
    }
}
