package io.mesh.apply;

import io.mesh.docker.ObservedContainer;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.PullPolicy;
import io.mesh.wire.HeldRecord;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Plans an apply: compares what runs with what is wanted (SPEC.md, "Apply"). Pure: no Docker, no ZooKeeper.
 *
 * <ul>
 *   <li>held (a held node names its Docker name) → {@code HELD}, whatever else is true: never stopped, started,
 *       removed or created by an apply;</li>
 *   <li>missing → {@code CREATE};</li>
 *   <li>present, same spec hash, running → {@code UNCHANGED};</li>
 *   <li>present, same spec hash, restarting (Docker restarts it by its policy) → {@code CRASH_LOOP}: left alone,
 *       reported {@code failed};</li>
 *   <li>present, same spec hash (and image), not running, stopped by an operator's hold that has ended and not started
 *       since → {@code START}: the same container is started again (decision 33);</li>
 *   <li>present but spec changed or not running, or ({@code pull: always}) the pull just made gave its image reference
 *       another image than the one it runs → {@code RECREATE} with reasons;</li>
 *   <li>a container of the module the spec no longer names, or a second container for the same name (left by a
 *       crash mid-recreate) → {@code REMOVE};</li>
 *   <li>a try that was not ready, kept stopped under {@code <name>.mesh-failed} while its container is in the spec →
 *       nothing: the apply replaces it at the container's next try.</li>
 * </ul>
 */
public final class ApplyPlanner {
    /** Suffix of a new container's Docker name until the old one is out of the way. */
    static final String NEXT_SUFFIX = ".mesh-next";
    /** Suffix of an old container's Docker name while its replacement starts. */
    static final String PREV_SUFFIX = ".mesh-prev";
    /**
     * Suffix of the Docker name a container that was not ready is kept under, stopped, for {@code docker logs} and
     * {@code docker inspect}: one per container name, until its next try or until the container leaves the spec
     * (docs/design.md, "Apply").
     */
    static final String FAILED_SUFFIX = ".mesh-failed";
    /**
     * Infix of the Docker name a container Docker marked for removal and cannot remove waits under, out of its name's
     * way, followed by 12 digits of its id: {@code <name>.mesh-dead-<id>} (failure model row 129).
     */
    static final String DEAD_INFIX = ".mesh-dead-";

    /**
     * @param dockerName the Docker name the dead container stands in the way of (its container's, without a suffix)
     * @param id         its container id
     * @return the name it waits under until Docker can remove it
     */
    static String deadName(String dockerName, String id) {
        return dockerName + DEAD_INFIX + id.substring(0, Math.min(12, id.length()));
    }

    /** @return true for a container moved out of its name's way because Docker cannot remove it ({@link #DEAD_INFIX}) */
    static boolean deadAside(String dockerName) {
        return dockerName.contains(DEAD_INFIX);
    }

    /** @return the container's Docker name without a temporary suffix: the name of the container it stands for */
    static String baseName(String dockerName) {
        int dead = dockerName.indexOf(DEAD_INFIX);
        if (dead >= 0) return dockerName.substring(0, dead);
        for (String suffix : new String[] {NEXT_SUFFIX, PREV_SUFFIX, FAILED_SUFFIX}) {
            if (dockerName.endsWith(suffix)) return dockerName.substring(0, dockerName.length() - suffix.length());
        }
        return dockerName;
    }

    /**
     * @param dockerName a container's Docker name
     * @return true for a recreate's copy kept aside under a suffixed name ({@link #NEXT_SUFFIX}, {@link #PREV_SUFFIX},
     *         {@link #FAILED_SUFFIX}) or a dead one moved aside ({@link #DEAD_INFIX}), not the container of its name
     */
    static boolean keptAside(String dockerName) {
        return dockerName.endsWith(NEXT_SUFFIX) || dockerName.endsWith(PREV_SUFFIX) || dockerName.endsWith(FAILED_SUFFIX)
                || deadAside(dockerName);
    }

    private ApplyPlanner() {}

    /** Image ids are shown as {@code docker ps} shows them: 12 hex digits, enough to tell builds apart. */
    private static final int SHORT_ID = "sha256:".length() + 12;

    /**
     * @param running the image id the container runs
     * @param pulled  the image id its reference names after the pull
     * @return the reason {@code image changed: sha256:<12 hex> -> sha256:<12 hex> (pulled)}
     */
    static String imageChanged(String running, String pulled) {
        return "image changed: " + shortId(running) + " -> " + shortId(pulled) + " (pulled)";
    }

    private static String shortId(String id) { return id.length() > SHORT_ID && id.startsWith("sha256:") ? id.substring(0, SHORT_ID) : id; }

    /**
     * @param dockerName a container's Docker name
     * @param held       held nodes of this host, by Docker name
     * @return true when a held node names it, or names the container whose previous one it is ({@code <name>.mesh-prev},
     *         what ran before a cut recreate): held containers are touched by nothing but their holder
     */
    static boolean isHeld(String dockerName, Map<String, HeldRecord> held) {
        if (held.containsKey(dockerName)) return true;
        return (dockerName.endsWith(PREV_SUFFIX) || deadAside(dockerName)) && held.containsKey(baseName(dockerName));
    }

    /**
     * @param module   module name
     * @param desired  the desired containers by name (empty map: the module should not run on this host)
     * @param observed the module's containers on this host ({@link io.mesh.docker.DockerEngine#moduleContainers})
     * @param held     held nodes of this host, by Docker name
     * @return one action per desired container, in spec order, then removals
     */
    public static List<PlannedAction> plan(String module, Map<String, ContainerSpec> desired,
                                           List<ObservedContainer> observed, Map<String, HeldRecord> held) {
        return plan(module, desired, observed, held, Map.of(), Map.of());
    }

    /**
     * As {@link #plan(String, Map, List, Map)}, for containers with secrets or {@code pull: always}.
     *
     * @param secretDigests by container name, by secret name, the digest of each secret file on this host
     *                      ({@link io.mesh.secrets.SecretsDir}); missing for containers without secrets: a spec hash
     *                      takes them in, so a changed secret file recreates (decision 18)
     * @param pulled        by image reference, the image id it names after the pulls this apply made for its
     *                      {@code pull: always} containers (decision 20); an image not pulled is not compared
     */
    public static List<PlannedAction> plan(String module, Map<String, ContainerSpec> desired, List<ObservedContainer> observed,
                                           Map<String, HeldRecord> held, Map<String, Map<String, String>> secretDigests,
                                           Map<String, String> pulled) {
        return plan(module, desired, observed, held, secretDigests, pulled, Map.of());
    }

    /**
     * As {@link #plan(String, Map, List, Map, Map, Map)}, knowing which stopped containers an operator's hold stopped.
     *
     * @param startAsItWas by container id, the stopped containers an ended hold stopped and nobody started since
     *                     ({@link io.mesh.hold.HoldStops}), each with the reason a start of it gives: planned
     *                     {@code START} when their spec is unchanged, {@code RECREATE} as usual when it changed
     */
    public static List<PlannedAction> plan(String module, Map<String, ContainerSpec> desired, List<ObservedContainer> observed,
                                           Map<String, HeldRecord> held, Map<String, Map<String, String>> secretDigests,
                                           Map<String, String> pulled, Map<String, String> startAsItWas) {
        Map<String, ObservedContainer> primary = new LinkedHashMap<>();
        for (ObservedContainer c : observed) primary.put(c.dockerName(), c);
        Set<String> claimed = new HashSet<>();
        List<PlannedAction> out = new ArrayList<>();
        for (Map.Entry<String, ContainerSpec> e : desired.entrySet()) {
            String name = e.getKey();
            String dockerName = ModuleSpec.dockerName(module, name);
            ObservedContainer now = primary.get(dockerName);
            if (now != null) claimed.add(now.id());
            String id = now == null ? null : now.id();
            HeldRecord h = held.get(dockerName);
            if (h != null) {
                out.add(new PlannedAction(name, dockerName, PlannedAction.Kind.HELD,
                        List.of(h.reason()), id != null ? id : h.containerId()));
                continue;
            }
            if (now == null) {
                out.add(PlannedAction.create(name, dockerName));
                continue;
            }
            ContainerSpec want = e.getValue();
            Map<String, String> digests = secretDigests.getOrDefault(name, Map.of());
            String hash = SpecDiff.hash(want, digests);
            List<String> reasons = new ArrayList<>();
            if (!hash.equals(now.specHash())) {
                reasons.addAll(SpecDiff.reasons(SpecDiff.parse(now.specJson()), want, digests));
                if (reasons.isEmpty()) reasons.add("spec changed (hash " + now.specHash() + " -> " + hash + ")");
            }
            // A new build under the same tag may be the fix of a crash loop: checked before it.
            String newImage = want.pullPolicy() == PullPolicy.ALWAYS ? pulled.get(want.image()) : null;
            if (newImage != null && now.imageId() != null && !newImage.equals(now.imageId())
                    && reasons.stream().noneMatch(r -> r.startsWith("image: "))) { // a new reference says it already
                reasons.add(imageChanged(now.imageId(), newImage));
            }
            if (reasons.isEmpty() && now.state() != null && now.state().startsWith("restarting")) {
                out.add(new PlannedAction(name, dockerName, PlannedAction.Kind.CRASH_LOOP, List.of("crash-looping: Docker restarts it by its "
                        + "restart policy (" + now.state() + "); the same spec would crash the same way: fix the image or the spec and push"), now.id()));
                continue;
            }
            if (!now.running() && reasons.isEmpty() && startAsItWas.containsKey(now.id()) && !now.markedForRemoval()) {
                out.add(new PlannedAction(name, dockerName, PlannedAction.Kind.START,
                        List.of("not running: " + now.state(), startAsItWas.get(now.id())), now.id()));
                continue;
            }
            if (!now.running()) reasons.add("not running: " + now.state());
            out.add(new PlannedAction(name, dockerName, reasons.isEmpty() ? PlannedAction.Kind.UNCHANGED : PlannedAction.Kind.RECREATE,
                    List.copyOf(reasons), now.id()));
        }
        for (ObservedContainer c : observed) {
            if (claimed.contains(c.id())) continue;
            String name = c.name() != null ? c.name() : c.dockerName();
            if (held.containsKey(c.dockerName())) {
                HeldRecord h = held.get(c.dockerName());
                out.add(new PlannedAction(name, c.dockerName(), PlannedAction.Kind.HELD,
                        List.of(h.reason()), c.id()));
                continue;
            }
            if (c.name() != null && desired.containsKey(c.name())
                    && c.dockerName().equals(ModuleSpec.dockerName(module, c.name()) + FAILED_SUFFIX)) {
                continue; // a try that was not ready, kept stopped for its logs: the next try of its container replaces it
            }
            String base = c.dockerName().endsWith(PREV_SUFFIX) || deadAside(c.dockerName()) ? baseName(c.dockerName()) : null;
            if (base != null && isHeld(c.dockerName(), held)) {
                // what ran before a cut recreate of a container a window now holds, or a dead one moved out of its
                // way: kept until the hold ends
                out.add(new PlannedAction(name, c.dockerName(), PlannedAction.Kind.HELD,
                        List.of((deadAside(c.dockerName()) ? "a container of " : "the previous container of ") + base
                                + ", kept while " + base + " is held"), c.id()));
                continue;
            }
            String why = deadAside(c.dockerName()) ? "Docker marked it for removal; moved out of " + baseName(c.dockerName()) + "'s way"
                    : c.name() != null && desired.containsKey(c.name())
                    ? "duplicate of " + ModuleSpec.dockerName(module, c.name()) + " (left by an interrupted recreate)"
                    : "no longer in the spec";
            // Debris goes by its Docker name: its result must not stand for its container's (a try's back-off is kept
            // by container name).
            out.add(new PlannedAction(deadAside(c.dockerName()) ? c.dockerName() : name, c.dockerName(), PlannedAction.Kind.REMOVE,
                    List.of(why), c.id()));
        }
        return out;
    }
}
