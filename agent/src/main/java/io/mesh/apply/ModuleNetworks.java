package io.mesh.apply;

import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.DockerAnswer;
import io.mesh.docker.Labels;
import io.mesh.docker.ObservedContainer;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.NetworkSpec;
import io.mesh.wire.HeldRecord;
import io.mesh.zk.SessionGuard;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A module's networks on this host, as an apply keeps them (decision 31): the ones its containers here join are
 * created before the plan runs, recreated in place when their settings changed, and removed after it when no
 * container uses them. Every call goes through the apply's guarded runtime.
 */
final class ModuleNetworks {
    private static final Logger log = LoggerFactory.getLogger(ModuleNetworks.class);

    private final ContainerRuntime docker;

    /** @param docker the section's guarded runtime */
    ModuleNetworks(ContainerRuntime docker) {
        this.docker = docker;
    }

    /**
     * What {@link #ensure} did and could not do.
     *
     * @param notes    by Docker name, what happened to the network (created, recreated, kept with old settings)
     * @param problems by Docker name, why containers cannot join it: a create or recreate of one that joins it fails so
     */
    record Outcome(Map<String, String> notes, Map<String, String> problems) {
        static final Outcome NONE = new Outcome(Map.of(), Map.of());
    }

    /**
     * Creates the networks the module's containers on this host join and that are missing, and recreates those whose
     * settings changed, reconnecting their containers (none of them held).
     *
     * @param spec     the desired module
     * @param host     this host's id
     * @param observed the module's containers as the plan sees them
     * @param held     this host's held nodes, by Docker name
     * @return what was done, and the networks containers cannot join
     */
    Outcome ensure(ModuleSpec spec, String host, List<ObservedContainer> observed, Map<String, HeldRecord> held) {
        Map<String, ModuleSpec.Owned> owned = spec.ownedNetworksOn(host);
        Set<String> external = externalOn(spec, host, owned.keySet());
        if (owned.isEmpty() && external.isEmpty()) return Outcome.NONE;
        Map<String, String> notes = new TreeMap<>();
        Map<String, String> problems = new TreeMap<>();
        externalMissing(external, problems);
        for (Map.Entry<String, ModuleSpec.Owned> e : owned.entrySet()) {
            String name = e.getKey();
            NetworkSpec want = e.getValue().spec();
            Map<String, String> labels = labels(spec.module(), e.getValue().key(), want);
            try {
                switch (state(spec.module(), name, labels)) {
                    case MISSING -> {
                        docker.createNetwork(name, want.internalOnly(), labels);
                        notes.put(name, "network " + name + " created");
                        log.info("network {} of module {} created", name, spec.module());
                    }
                    case NOT_THE_MODULES -> problems.put(name, notTheModules(spec.module(), name));
                    case CHANGED -> recreate(spec.module(), name, want, labels, observed, held, notes, problems);
                    case READY -> { }
                }
                if (!problems.containsKey(name)) reattach(spec.module(), name, observed, held, notes);
            } catch (SessionGuard.SessionLostException lost) {
                throw lost;
            } catch (RuntimeException failed) {
                problems.put(name, "network " + name + " could not be made ready: " + DockerAnswer.explained(failed));
            }
        }
        return new Outcome(notes, problems);
    }

    /**
     * What {@link #ensure} would do, read only, for a plan: the same lines as an apply's report, in the conditional.
     *
     * @return by Docker name, what an apply would do to the network; problems as {@link #ensure} finds them
     */
    Outcome forecast(ModuleSpec spec, String host, List<ObservedContainer> observed, Map<String, HeldRecord> held) {
        Map<String, ModuleSpec.Owned> owned = spec.ownedNetworksOn(host);
        Map<String, String> notes = new TreeMap<>();
        Map<String, String> problems = new TreeMap<>();
        externalMissing(externalOn(spec, host, owned.keySet()), problems);
        for (Map.Entry<String, ModuleSpec.Owned> e : owned.entrySet()) {
            String name = e.getKey();
            switch (state(spec.module(), name, labels(spec.module(), e.getValue().key(), e.getValue().spec()))) {
                case MISSING -> notes.put(name, "network " + name + " would be created");
                case NOT_THE_MODULES -> problems.put(name, notTheModules(spec.module(), name));
                case CHANGED -> {
                    Blocker b = blocker(spec.module(), name, observed, held);
                    if (b == null) {
                        notes.put(name, "network " + name + " would be recreated with its new settings" + changes(name, e.getValue().spec())
                                + ": its containers reconnected, not restarted");
                    } else if (b.held()) {
                        notes.put(name, b.why());
                    } else {
                        problems.put(name, b.why());
                    }
                }
                case READY -> { }
            }
        }
        return new Outcome(notes, problems);
    }

    /**
     * Why a changed network cannot be recreated now.
     *
     * @param held true when a held container of the module is on it (the change waits for the hold); false when a
     *             container of another module, or of none, is (the change fails until it leaves)
     * @param why  the reason, naming the container
     */
    record Blocker(boolean held, String why) {}

    /** @return why the network's containers may not be disconnected now, or {@code null} when they may */
    private Blocker blocker(String module, String name, List<ObservedContainer> observed, Map<String, HeldRecord> held) {
        Map<String, ObservedContainer> ours = new LinkedHashMap<>();
        observed.forEach(o -> ours.put(o.id(), o));
        for (String id : docker.networkMembers(name)) {
            ObservedContainer o = ours.get(id);
            if (o == null) {
                String who = who(id);
                return new Blocker(false, "network " + name + " keeps its old settings: container " + who + " is on it, and it is not"
                        + " module " + module + "'s to disconnect; take it off the network (docker network disconnect " + name + " "
                        + who.split(" ")[0] + ", or remove it from its module), and the next apply makes the change");
            }
            if (ApplyPlanner.isHeld(o.dockerName(), held)) {
                return new Blocker(true, "network " + name + " keeps its old settings while " + o.dockerName() + " is held; the apply"
                        + " after the hold makes the change");
            }
        }
        return null;
    }

    /** @return a container's Docker name and module from its labels, else its short id */
    private String who(String id) {
        String shortId = id.substring(0, Math.min(12, id.length()));
        try {
            Map<String, String> l = docker.labels(id);
            String m = l == null ? null : l.get(Labels.MODULE), c = l == null ? null : l.get(Labels.CONTAINER);
            return m != null && c != null ? ModuleSpec.dockerName(m, c) + " (module " + m + ")" : shortId;
        } catch (RuntimeException e) {
            return shortId;
        }
    }

    /** @return the Docker names of the networks the module's containers on this host join that it does not own */
    private static Set<String> externalOn(ModuleSpec spec, String host, Set<String> owned) {
        Set<String> out = new TreeSet<>();
        if (!spec.runsOn(host)) return out;
        for (ContainerSpec c : spec.containersAsRun().values()) {
            for (String n : c.networks().keySet()) if (!owned.contains(n)) out.add(n);
        }
        return out;
    }

    /** Names each external network that is not on this host: mesh joins one, never creates it. */
    private void externalMissing(Set<String> external, Map<String, String> problems) {
        for (String n : external) {
            if (docker.networkLabels(n) == null) {
                problems.put(n, "network " + n + " is not on this host: it is declared external, so mesh joins it and never creates"
                        + " it; create it here (docker network create " + n + ")");
            }
        }
    }

    /**
     * Whether the module's networks on this host are as its spec says, read only: every network it owns there is
     * there with the spec's settings, and every container of the module whose spec puts it on one is on it (held ones
     * aside). The no-op reconcile asks it, so that drift of a network (a change a foreign container held up, a
     * container disconnected by hand) is healed at a reconcile, not only at a push.
     */
    boolean asSpecSays(ModuleSpec spec, String host, List<ObservedContainer> observed) {
        Map<String, ModuleSpec.Owned> owned = spec.ownedNetworksOn(host);
        for (Map.Entry<String, ModuleSpec.Owned> e : owned.entrySet()) {
            String name = e.getKey();
            if (state(spec.module(), name, labels(spec.module(), e.getValue().key(), e.getValue().spec())) != State.READY) return false;
            List<String> members = null;
            for (ObservedContainer o : observed) {
                ContainerSpec was = SpecDiff.parse(o.specJson());
                if (was == null || !was.networks().containsKey(name)) continue;
                if (members == null) members = docker.networkMembers(name);
                if (!members.contains(o.id())) return false;
            }
        }
        return true;
    }

    /** Where a network the module's containers join on this host stands. */
    enum State {
        /** Not on this host: the apply creates it. */
        MISSING,
        /** A network of that name that is not this module's: never adopted. */
        NOT_THE_MODULES,
        /** The module's, with other settings than the spec's: recreated in place. */
        CHANGED,
        /** The module's, as the spec has it. */
        READY
    }

    private State state(String module, String name, Map<String, String> labels) {
        Map<String, String> there = docker.networkLabels(name);
        if (there == null) return State.MISSING;
        if (!module.equals(there.get(Labels.MODULE))) return State.NOT_THE_MODULES;
        return labels.get(Labels.SPEC_HASH).equals(there.get(Labels.SPEC_HASH)) ? State.READY : State.CHANGED;
    }

    /**
     * What differs between the network there and the spec, as Docker shows the network (its {@code Internal}, its labels
     * but mesh's own), for the report of its recreate.
     *
     * @return {@code " (internal: false -> true; labels: added tier)"}, or {@code ""} when Docker shows no difference
     */
    String changes(String name, NetworkSpec want) {
        List<String> out = new ArrayList<>();
        Boolean internal = docker.networkInternal(name);
        if (internal != null && internal != want.internalOnly()) out.add("internal: " + internal + " -> " + want.internalOnly());
        Map<String, String> there = docker.networkLabels(name);
        if (there != null) {
            Map<String, String> was = new TreeMap<>(there);
            was.keySet().removeIf(k -> k.startsWith(Labels.PREFIX));
            Map<String, String> now = new TreeMap<>(want.labels());
            List<String> labels = new ArrayList<>();
            now.forEach((k, v) -> {
                if (!was.containsKey(k)) labels.add("added " + k);
                else if (!was.get(k).equals(v)) labels.add("changed " + k);
            });
            was.keySet().forEach(k -> { if (!now.containsKey(k)) labels.add("removed " + k); });
            if (!labels.isEmpty()) out.add("labels: " + String.join(", ", labels));
        }
        return out.isEmpty() ? "" : " (" + String.join("; ", out) + ")";
    }

    private static String notTheModules(String module, String name) {
        return "network " + name + " exists on this host and is not module " + module + "'s (it has no label " + Labels.MODULE + "="
                + module + "): remove it (docker network rm " + name + ") once nothing uses it, or declare it with external: true,"
                + " name: " + name + " to join it as it is";
    }

    /**
     * A network whose settings changed: its containers are disconnected, it is made anew and they are connected again
     * with the aliases their specs give; the containers keep running. Not while a held container or one of another
     * module is on it: those are not this apply's to touch. A container Docker marked for removal
     * ({@link ObservedContainer#markedForRemoval}) is neither disconnected nor connected again: Docker refuses both for
     * it ("is marked for removal and cannot be connected or disconnected to the network"), it can never run again, and
     * its own plan removes it, or fails it with Docker's answer to that removal (failure model rows 69, 70, 111).
     * When the disconnects or the network's removal fail, the containers taken off are connected again to the network
     * as it was, so that they run on with their old network rather than none.
     */
    private void recreate(String module, String name, NetworkSpec want, Map<String, String> labels, List<ObservedContainer> observed,
                          Map<String, HeldRecord> held, Map<String, String> notes, Map<String, String> problems) {
        Blocker b = blocker(module, name, observed, held);
        if (b != null) {
            // A held container waits its hold out, as the module is deferred to it; another module's container is not
            // this apply's to disconnect: the change is not made, and the apply says so as a failure, not as applied.
            if (b.held()) notes.put(name, b.why());
            else problems.put(name, b.why());
            return;
        }
        String changed = changes(name, want);
        Map<String, ObservedContainer> ours = new LinkedHashMap<>();
        observed.forEach(o -> ours.put(o.id(), o));
        List<ObservedContainer> members = new ArrayList<>();
        List<ObservedContainer> leaving = new ArrayList<>();
        for (String id : docker.networkMembers(name)) {
            ObservedContainer o = ours.get(id);
            if (o == null) { // one that joined since the look above: the same rule
                problems.put(name, "network " + name + " keeps its old settings: container " + who(id) + " joined it meanwhile");
                return;
            }
            // Docker refuses to disconnect it, and it never runs again. Not running, it holds no endpoint (dockerd
            // releases a container's endpoints when it stops, and those of stopped ones when it starts), and a network
            // removal refuses only a network with endpoints: the removal below does not wait for it. Should Docker
            // refuse it all the same, the others are put back and the network's problem names Docker's answer.
            if (o.markedForRemoval()) leaving.add(o);
            else members.add(o);
        }
        List<ObservedContainer> off = new ArrayList<>();
        try {
            for (ObservedContainer o : members) {
                docker.disconnect(o.id(), name);
                off.add(o);
            }
            docker.removeNetwork(name);
        } catch (SessionGuard.SessionLostException lost) {
            throw lost; // no further call once the lock lapsed: the next apply's recreate and reattach connect them
        } catch (RuntimeException refused) {
            // The network stays as it was: what was taken off it goes back, and runs on with its old settings.
            connect(module, name, off);
            throw refused;
        }
        docker.createNetwork(name, want.internalOnly(), labels);
        List<String> failed = connect(module, name, members);
        String who = members.isEmpty() ? "" : ": " + String.join(", ", members.stream().map(ObservedContainer::dockerName).toList())
                + " reconnected" + (failed.isEmpty() ? "" : ", except " + String.join(", ", failed));
        if (!leaving.isEmpty()) {
            who += (who.isEmpty() ? ": " : "; ") + String.join(", ", leaving.stream().map(ObservedContainer::dockerName).toList())
                    + " not reconnected: Docker marked it for removal, so its own plan removes it";
        }
        notes.put(name, "network " + name + " recreated with its new settings" + changed + who);
        if (!failed.isEmpty()) problems.put(name, "network " + name + " recreated, but " + String.join(", ", failed) + " not reconnected");
        log.info("network {} of module {} recreated{}", name, module, who);
    }

    /**
     * Connects the containers to the network with the aliases their specs give it.
     *
     * @return each container Docker did not connect, with Docker's answer; none when all were
     * @throws SessionGuard.SessionLostException when the lock lapsed before a connect: the rest are not made
     */
    private List<String> connect(String module, String name, List<ObservedContainer> containers) {
        List<String> failed = new ArrayList<>();
        for (ObservedContainer o : containers) {
            ContainerSpec was = SpecDiff.parse(o.specJson());
            NetworkSpec.Attachment a = was == null ? null : was.networks().get(name);
            try {
                docker.connect(o.id(), name, a == null ? List.of() : a.aliases());
            } catch (SessionGuard.SessionLostException lost) {
                throw lost;
            } catch (RuntimeException e) {
                failed.add(o.dockerName() + " (" + DockerAnswer.explained(e) + ")");
                log.warn("container {} of module {} not connected to network {}: {}", o.dockerName(), module, name, DockerAnswer.explained(e));
            }
        }
        return failed;
    }

    /**
     * Connects again each container of the module whose spec joins the network and that is not on it: what an apply
     * cut between a recreate's disconnect and its connect left (a killed agent, a lost lock), or a hand that
     * disconnected it. A held container is left as it is.
     */
    private void reattach(String module, String name, List<ObservedContainer> observed, Map<String, HeldRecord> held, Map<String, String> notes) {
        List<String> members = null;
        for (ObservedContainer o : observed) {
            if (ApplyPlanner.isHeld(o.dockerName(), held) || o.markedForRemoval()) continue;
            ContainerSpec was = SpecDiff.parse(o.specJson());
            NetworkSpec.Attachment a = was == null ? null : was.networks().get(name);
            if (a == null) continue;
            if (members == null) members = docker.networkMembers(name);
            if (members.contains(o.id())) continue;
            try {
                docker.connect(o.id(), name, a.aliases());
                notes.merge(name, "network " + name + ": " + o.dockerName() + " connected again", (x, y) -> x + "; " + y);
                log.info("container {} of module {} connected again to network {}", o.dockerName(), module, name);
            } catch (SessionGuard.SessionLostException lost) {
                throw lost;
            } catch (RuntimeException e) {
                log.warn("container {} of module {} not connected again to network {}: {}", o.dockerName(), module, name, DockerAnswer.explained(e));
            }
        }
    }

    /**
     * Removes the module's networks that no desired container on this host joins and that no container at all uses.
     *
     * @param spec the desired module (a deleted one has no containers)
     * @param host this host's id
     * @return what was removed, and what stays because something uses it, one line per network
     */
    List<String> prune(ModuleSpec spec, String host) {
        Set<String> keep = spec.ownedNetworksOn(host).keySet();
        List<String> out = new ArrayList<>();
        List<String> there;
        try {
            there = docker.moduleNetworks(spec.module());
        } catch (UnsupportedOperationException none) {
            return out;
        }
        for (String name : new TreeSet<>(there)) {
            if (keep.contains(name)) continue;
            try {
                List<String> users = docker.networkMembers(name);
                if (users.isEmpty()) {
                    docker.removeNetwork(name);
                    out.add("network " + name + " removed: no container uses it");
                    log.info("network {} of module {} removed: no container uses it", name, spec.module());
                } else {
                    out.add("network " + name + " kept: " + String.join(", ", users.stream().map(this::who).toList()) + " still on it");
                    log.info("network {} of module {} is no longer the module's, and stays: {} container(s) use it", name, spec.module(), users.size());
                }
            } catch (SessionGuard.SessionLostException lost) {
                throw lost;
            } catch (RuntimeException e) {
                log.warn("network {} of module {} could not be removed: {}", name, spec.module(), DockerAnswer.explained(e));
            }
        }
        return out;
    }

    /** @return the labels a network the module owns carries: the operator's, then mesh's */
    static Map<String, String> labels(String module, String key, NetworkSpec spec) {
        Map<String, String> out = new TreeMap<>(spec.labels());
        out.put(Labels.MODULE, module);
        out.put(Labels.NETWORK, key);
        out.put(Labels.SPEC_HASH, hash(spec));
        return out;
    }

    /** @return the first 16 hex digits of the SHA-256 of the network spec's JSON (sorted keys) */
    static String hash(NetworkSpec spec) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(io.mesh.wire.Json.text(spec).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
