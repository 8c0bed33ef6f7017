package io.mesh.coordinator;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.curator.RolloutNodes;
import io.mesh.manifest.ModuleSpec;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.FreezeRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ProgressRecord;
import io.mesh.wire.PushAction;
import io.mesh.wire.PushCancel;
import io.mesh.wire.PushRecord;
import io.mesh.wire.PushState;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The state of one push on every host it targets, derived from the agents' reports (docs/design.md, "Push status").
 *
 * <p>For each module of the push and each host it targets (its {@code hosts}; for {@code ["*"]} every host with an
 * agent node {@code {root}/agents/<host>} when the push was taken (the push node's {@code agents}) or now, or a report
 * {@code {root}/reports/<host>/<module>}): no report, or a report
 * of an older push (smaller {@link ZkPaths#pushSeq}) is {@code pending}; a report of this push gives its outcome:
 * {@code applied}, {@code deferred} (with its window) or {@code failed} (with its error); a report of a newer push is
 * {@code superseded}, naming the newer push ({@link Target#supersededBy}), unless the host applied this push (the
 * report's {@code lastApplied} or {@code appliedPushes} name it: {@link ApplyReport#applied}): a push that ran there
 * reads {@code applied} after a newer one replaced it (SPEC.md: superseded is a push replaced before it ran;
 * docs/decisions/0024-what-a-host-applied.md); or unless its apply failed there (the report's {@code failedPushes}
 * name it: {@link ApplyReport#failed}): it reads {@code failed}, with that error. (Before {@code superseded}, a
 * newer push's report gave its own outcome to the older push, so a push whose apply failed and that a newer push
 * replaced read {@code applied}, and {@code mesh push --wait} of it exited 0.)
 *
 * <p>Counting: {@code superseded} is settled, like {@code applied} and {@code failed} (the push is {@code done} when no
 * target is pending or deferred), but it is not applied: the push's {@code state} is {@code applied} only when every
 * target applied, and {@code superseded} when none failed, none is pending or deferred and some are superseded.
 *
 * <p>Dropped pushes (docs/decisions/0030-cancel-and-expire-pushes.md): once the push has a cancel node
 * ({@link ZkPaths#pushCancel}), a target that is pending, deferred or waiting reads {@code cancelled}; a pending target
 * on a host with no agent node reads {@code expired} once {@code noAgentExpiry} has passed since the push was taken.
 * Both are settled and not applied: the push is done, in state {@code cancelled} or {@code expired} when nothing failed.
 *
 * @param client a started Curator client: a push node the cache has not seen yet, and the desired node of a push written without its hosts, are read from ZooKeeper
 * @param paths  the layout under the configured root
 * @param source where agents, reports, push nodes and rollout nodes are read from (the coordinator's {@link FleetCache})
 * @param noAgentExpiry how long after a push was taken its pending targets on hosts without an agent read {@code expired}
 *               ({@code mesh-coordinator serve --no-agent-expiry}, {@link #DEFAULT_NO_AGENT_EXPIRY} by default)
 * @param clock  what {@code now} is for that expiry
 */
public record PushStatus(CuratorFramework client, ZkPaths paths, NodeSource source, Duration noAgentExpiry, Clock clock) {
    /** How long a push waits for a host that has no agent before that target reads {@code expired}: 24 hours. */
    public static final Duration DEFAULT_NO_AGENT_EXPIRY = Duration.ofHours(24);

    /** With {@link #DEFAULT_NO_AGENT_EXPIRY} and the system clock. */
    public PushStatus(CuratorFramework client, ZkPaths paths, NodeSource source) {
        this(client, paths, source, DEFAULT_NO_AGENT_EXPIRY, Clock.systemUTC());
    }

    /**
     * One host and module of a push.
     *
     * @param host       host id
     * @param module     module name
     * @param state      {@code pending | applied | deferred | waiting | failed | superseded | cancelled | expired};
     *                   {@code unknown} for an outcome this version does not know
     * @param revision   revision of the report, {@code null} without one
     * @param push       push of the report (this push or a newer one; an older one while pending), {@code null} without one
     * @param finishedAt when the report's apply finished, {@code null} without one
     * @param window     the open window of the report, {@code null} when none
     * @param error      the report's error, {@code null} when none
     * @param containers the report's containers; empty without a report
     * @param agent      true when the host has an agent node ({@code {root}/agents/<host>}): false for a pending
     *                   target means nothing will apply the push there until an agent starts
     * @param supersededBy for a {@code superseded} target, or a {@code failed} one that a newer push replaced there,
     *                   the newer push: the report's {@code lastApplied} when it is newer than this push (what runs
     *                   there), else the report's push (not yet applied there); else {@code null} (and not written)
     * @param rollout    for a {@code waiting} target (or one a rollout keeps on the previous revision), why: the
     *                   report's {@code rollout}; else {@code null} (and not written)
     * @param freeze     for a target {@code deferred} by a freeze of its module, the freeze (the report's
     *                   {@code freeze}); else {@code null} (and not written)
     * @param detail     for a {@code pending} target whose agent is applying this push, what that apply is doing now
     *                   ({@code pulling IMAGE (3 of 7 layers)}, {@code waiting for app-api: health starting}): its
     *                   progress node's line (docs/decisions/0032-apply-progress.md); else {@code null} (and not written)
     */
    public record Target(String host, String module, PushState state, String revision, String push, Instant finishedAt,
                         ApplyReport.WindowRef window, String error, List<ApplyReport.ContainerResult> containers, boolean agent,
                         @JsonInclude(JsonInclude.Include.NON_NULL) String supersededBy,
                         @JsonInclude(JsonInclude.Include.NON_NULL) String rollout,
                         @JsonInclude(JsonInclude.Include.NON_NULL) FreezeRecord freeze,
                         @JsonInclude(JsonInclude.Include.NON_NULL) String detail) {
        /** @return a host and module with no report of this push or a newer one */
        static Target pending(String host, String module, boolean agent) {
            return new Target(host, module, PushState.PENDING, null, null, null, null, null, List.of(), agent, null, null, null, null);
        }

        /** @return this target with {@code detail} when it is pending and {@code p} is a progress of {@code push}; else this */
        Target withProgress(String push, ProgressRecord p) {
            if (state != PushState.PENDING || p == null || p.detail() == null || p.detail().isBlank() || !push.equals(p.push())) return this;
            return new Target(host, module, state, revision, this.push, finishedAt, window, error, containers, agent, supersededBy, rollout,
                    freeze, p.detail());
        }

        /** @return this target in another state (a pending one cancelled or expired), the rest as it was */
        Target withState(PushState s) {
            return new Target(host, module, s, revision, push, finishedAt, window, error, containers, agent, supersededBy, rollout, freeze,
                    s == PushState.PENDING ? detail : null);
        }
    }

    /**
     * The status of one push, as {@code GET /v1/pushes/{push}} answers it.
     *
     * @param push       push node name
     * @param revision   its revision
     * @param modules    its modules
     * @param receivedAt when the coordinator took it
     * @param state      {@code failed} when any target failed; else {@code applied} when every target applied; else
     *                   {@code deferred} when no target is pending and some are deferred; else, once done,
     *                   {@code cancelled}, {@code expired} or {@code superseded} when some targets are; else {@code pending}
     * @param done       true when at least one host is targeted and none is pending or deferred (a superseded target
     *                   is settled: it will not apply this push)
     * @param failed     true when any target failed
     * @param counts     number of targets per state, by its name
     * @param targets    one entry per host and module, sorted by host then module
     * @param action     push, rollback or delete (a delete's targets are the hosts the module named: each reports its
     *                   containers {@code removed})
     * @param rollbackOf for a rollback, the push whose spec it pushed again; else {@code null} (and not written)
     * @param by         who pushed, {@code null} for a push recorded before history existed
     * @param source     the push's {@code X-Mesh-Source}, or {@code null}
     * @param rollouts   by module, the rollout of this push (decision 13), for the modules pushed with {@code rollout}
     * @param cancelled  the push's cancel ({@code mesh push cancel}), else {@code null} (and not written)
     * @param expiresAt  when its pending targets on hosts without an agent read {@code expired}
     */
    public record View(String push, String revision, List<String> modules, Instant receivedAt, PushState state,
                       boolean done, boolean failed, Map<String, Integer> counts, List<Target> targets, PushAction action,
                       @JsonInclude(JsonInclude.Include.NON_NULL) String rollbackOf, String by, String source,
                       @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, RolloutRecord> rollouts,
                       @JsonInclude(JsonInclude.Include.NON_NULL) PushCancel cancelled,
                       @JsonInclude(JsonInclude.Include.NON_NULL) Instant expiresAt) {}

    /**
     * Reads the push and every report it needs, and derives its status.
     *
     * @param push a push node name such as {@code push-0000000002}
     * @return the status, or empty when there is no such push
     * @throws Exception ZooKeeper errors
     */
    public Optional<View> of(String push) throws Exception {
        if (push == null || !ZkPaths.PUSH_NAME.matcher(push).matches()) return Optional.empty();
        // A push node is written once: the cache's copy is the node, and a push the cache has not seen yet (just
        // taken by this or another coordinator) is read from ZooKeeper.
        JsonNode tree = source.read(paths.push(push), JsonNode.class);
        if (tree == null) {
            byte[] data;
            try {
                data = client.getData().forPath(paths.push(push));
            } catch (KeeperException.NoNodeException e) {
                return Optional.empty();
            }
            try {
                tree = Json.MAPPER.readTree(data);
            } catch (IOException e) {
                throw new IllegalStateException("push node " + paths.push(push) + " does not hold a push record: " + e.getMessage(), e);
            }
        }
        PushRecord record;
        try {
            record = Json.MAPPER.treeToValue(tree, PushRecord.class);
        } catch (IOException e) {
            throw new IllegalStateException("push node " + paths.push(push) + " does not hold a push record: " + e.getMessage(), e);
        }
        List<String> modules = record.modules() == null ? List.of() : record.modules();
        Map<String, List<String>> hosts = new LinkedHashMap<>();
        JsonNode declared = tree.get("hosts");
        for (String m : modules) {
            List<String> h = new ArrayList<>();
            if (declared != null && declared.has(m) && declared.get(m).isArray()) {
                declared.get(m).forEach(n -> h.add(n.asText()));
            } else {
                // A push written without its hosts: fall back on the desired node (which a later push may have changed).
                DesiredRecord d = source.read(paths.desired(m), DesiredRecord.class);
                if (d != null && d.spec() != null) h.addAll(d.spec().hosts());
            }
            hosts.put(m, h);
        }
        Set<String> agents = new TreeSet<>(source.children(paths.agents()));
        Set<String> registered = new TreeSet<>();
        JsonNode then = tree.get("agents");
        if (then != null && then.isArray()) then.forEach(n -> { if (n.isTextual()) registered.add(n.asText()); });
        Map<String, Map<String, ApplyReport>> reports = new HashMap<>();
        for (String host : source.children(paths.reports())) {
            for (String module : source.children(paths.reports(host))) {
                if (!hosts.containsKey(module)) continue;
                ApplyReport r = source.read(paths.report(host, module), ApplyReport.class);
                if (r != null) reports.computeIfAbsent(host, k -> new HashMap<>()).put(module, r);
            }
        }
        // What the applies not done yet are doing (decision 32): read for the hosts that may be pending only.
        Map<String, Map<String, ProgressRecord>> progress = new HashMap<>();
        for (String host : source.children(paths.progress())) {
            for (String module : source.children(paths.progress(host))) {
                if (!hosts.containsKey(module)) continue;
                ProgressRecord p = source.read(paths.progress(host, module), ProgressRecord.class);
                if (p != null) progress.computeIfAbsent(host, k -> new HashMap<>()).put(module, p);
            }
        }
        Map<String, RolloutRecord> rollouts = new TreeMap<>();
        for (String m : modules) {
            RolloutRecord r = rolloutView(m);
            if (r != null && push.equals(r.push())) rollouts.put(m, r.withoutPrevious());
        }
        PushCancel cancel = source.read(paths.pushCancel(push), PushCancel.class);
        // Each drained host's containers its drain holds now (decision 37): a deferral by them, and by nothing else, is drained
        Map<String, Set<String>> drained = new TreeMap<>();
        Instant now = clock.instant();
        for (String host : source.children(paths.drains())) {
            drained.put(host, drainHolds(io.mesh.curator.HeldRegistry.read(client, paths, host).values(), host, now));
        }
        return Optional.of(derive(record, hosts, agents, registered, reports, rollouts, progress, cancel, expiresAt(record), clock.instant(),
                drained));
    }

    /**
     * @param push a push record
     * @return when its pending targets on hosts without an agent read {@code expired}; {@code null} when it names no
     *         time it was taken
     */
    public Instant expiresAt(PushRecord push) {
        return push.receivedAt() == null ? null : push.receivedAt().plus(noAgentExpiry);
    }

    /**
     * @return the module's rollout as its hosts' children say (those that {@link RolloutNodes#counts}; not the fold, which may lag), read
     *         through {@link #source}; {@code null} when it has none
     */
    private RolloutRecord rolloutView(String module) throws Exception {
        RolloutRecord parent = source.read(paths.rollout(module), RolloutRecord.class);
        if (parent == null) return null;
        List<RolloutHostRecord> children = new ArrayList<>();
        for (String host : source.children(paths.rollout(module))) {
            RolloutHostRecord c = source.read(paths.rolloutHost(module, host), RolloutHostRecord.class);
            if (RolloutNodes.counts(host, c)) children.add(c);
        }
        return parent.view(children);
    }

    /**
     * The derivation itself, without ZooKeeper.
     *
     * @param push    the push record
     * @param hosts   hosts each module of the push declared (module name to host ids or {@code ["*"]})
     * @param agents  hosts with an agent node
     * @param registered hosts with an agent node when the push was taken (the push node's {@code agents}, written for a
     *                module of every host): each is a target of a {@code ["*"]} module, answered or not
     * @param reports last reports by host, then module
     * @param rollouts by module, the rollouts of this push: a target {@code waiting} on a rollout that stopped
     *                 (paused, reverted, aborted) is settled, and the push failed
     * @param progress by host, then module, the progress nodes of the applies under way: a pending target's detail
     *                 when it names this push (decision 32)
     * @return the push's status
     */
    public static View derive(PushRecord push, Map<String, List<String>> hosts, Set<String> agents, Set<String> registered,
                              Map<String, Map<String, ApplyReport>> reports, Map<String, RolloutRecord> rollouts) {
        return derive(push, hosts, agents, registered, reports, rollouts, Map.of(), null, null, null);
    }

    /** {@link #derive(PushRecord, Map, Set, Set, Map, Map, Map, PushCancel, Instant, Instant, Map)} without cancel or expiry. */
    public static View derive(PushRecord push, Map<String, List<String>> hosts, Set<String> agents, Set<String> registered,
                              Map<String, Map<String, ApplyReport>> reports, Map<String, RolloutRecord> rollouts,
                              Map<String, Map<String, ProgressRecord>> progress) {
        return derive(push, hosts, agents, registered, reports, rollouts, progress, null, null, null);
    }

    /** {@link #derive(PushRecord, Map, Set, Set, Map, Map, Map, PushCancel, Instant, Instant, Map)} without progress. */
    public static View derive(PushRecord push, Map<String, List<String>> hosts, Set<String> agents, Set<String> registered,
                              Map<String, Map<String, ApplyReport>> reports, Map<String, RolloutRecord> rollouts,
                              PushCancel cancel, Instant expiresAt, Instant now) {
        return derive(push, hosts, agents, registered, reports, rollouts, Map.of(), cancel, expiresAt, now);
    }

    /** {@link #derive(PushRecord, Map, Set, Set, Map, Map, Map, PushCancel, Instant, Instant, Map)} with no host drained. */
    public static View derive(PushRecord push, Map<String, List<String>> hosts, Set<String> agents, Set<String> registered,
                              Map<String, Map<String, ApplyReport>> reports, Map<String, RolloutRecord> rollouts,
                              Map<String, Map<String, ProgressRecord>> progress, PushCancel cancel, Instant expiresAt, Instant now) {
        return derive(push, hosts, agents, registered, reports, rollouts, progress, cancel, expiresAt, now, Map.of());
    }

    /**
     * @param held held nodes (of any hosts)
     * @param host a host
     * @param now  the time an expired hold is judged at
     * @return the Docker names {@code host}'s drain holds now (its operator holds marked {@code drain}, not expired)
     */
    static Set<String> drainHolds(java.util.Collection<io.mesh.wire.HeldRecord> held, String host, Instant now) {
        Set<String> out = new TreeSet<>();
        for (io.mesh.wire.HeldRecord h : held) {
            if (host.equals(h.host()) && h.operatorHold() && h.hold().ofDrain() && !h.expiredAt(now)) out.add(h.container());
        }
        return out;
    }

    /**
     * The rule by which a deferred report is its host's drain's doing (decision 37), for push status and the fleet's page.
     *
     * @param r          a report
     * @param drainHolds the Docker names its host's drain holds now, or {@code null} when the host is not drained
     * @return true when {@code r} is deferred by no window and no freeze, and holds containers each among {@code drainHolds}
     */
    static boolean deferredByDrain(ApplyReport r, Set<String> drainHolds) {
        if (r == null || r.outcome() != io.mesh.wire.ApplyOutcome.DEFERRED || r.window() != null || r.freeze() != null) return false;
        if (drainHolds == null || drainHolds.isEmpty()) return false;
        List<String> held = r.containers().stream().filter(c -> c.action() == io.mesh.wire.ContainerAction.HELD).map(ApplyReport.ContainerResult::container).toList();
        return !held.isEmpty() && drainHolds.containsAll(held);
    }

    /**
     * The derivation with what drops targets (docs/decisions/0030-cancel-and-expire-pushes.md) and what pending ones
     * are doing (docs/decisions/0032-apply-progress.md).
     *
     * @param progress  by host, then module, the progress nodes of the applies under way: a pending target's detail
     *                  when it names this push
     * @param cancel    the push's cancel, or {@code null}: with one, every pending, deferred or waiting target reads
     *                  {@code cancelled}
     * @param expiresAt when pending targets on hosts without an agent read {@code expired}; {@code null} for never
     * @param now       the time compared with {@code expiresAt}; {@code null} for never
     * @param drained   by drained host ({@code /mesh/drains}), the containers its drain holds now: a {@code deferred}
     *                  target there whose held containers are all among them (no window, no freeze, no other hold) reads
     *                  {@code drained} (decision 37: it lands at the undrain)
     * @return the push's status
     */
    public static View derive(PushRecord push, Map<String, List<String>> hosts, Set<String> agents, Set<String> registered,
                              Map<String, Map<String, ApplyReport>> reports, Map<String, RolloutRecord> rollouts,
                              Map<String, Map<String, ProgressRecord>> progress, PushCancel cancel, Instant expiresAt, Instant now,
                              Map<String, Set<String>> drained) {
        boolean expired = expiresAt != null && now != null && !now.isBefore(expiresAt);
        long seq = ZkPaths.pushSeq(push.push());
        List<Target> targets = new ArrayList<>();
        for (Map.Entry<String, List<String>> e : hosts.entrySet()) {
            String module = e.getKey();
            TreeSet<String> targetHosts = new TreeSet<>();
            if (e.getValue().contains(ModuleSpec.ALL_HOSTS)) {
                // Every host registered when the push was taken, or since (still registered): one whose agent went
                // before it answered is still waited for, not dropped from the push (failure model row 84).
                targetHosts.addAll(registered);
                targetHosts.addAll(agents);
                reports.forEach((h, byModule) -> { if (byModule.containsKey(module)) targetHosts.add(h); });
            } else {
                targetHosts.addAll(e.getValue());
            }
            for (String host : targetHosts) {
                ApplyReport r = reports.getOrDefault(host, Map.of()).get(module);
                Target t = target(host, module, push.push(), seq, r, agents.contains(host))
                        .withProgress(push.push(), progress.getOrDefault(host, Map.of()).get(module));
                RolloutRecord rollout = rollouts.get(module);
                if (t.state() == PushState.WAITING && rollout != null && rollout.drainedHosts().contains(host)) {
                    t = t.withState(PushState.DRAINED); // passed over by the rollout (decision 37)
                } else if (t.state() == PushState.DEFERRED && deferredByDrain(r, drained.get(host))) {
                    t = t.withState(PushState.DRAINED); // its containers held by the host's drain: it lands at the undrain
                }
                if (cancel != null && Set.of(PushState.PENDING, PushState.DEFERRED, PushState.WAITING).contains(t.state())) {
                    t = t.withState(PushState.CANCELLED);
                } else if (expired && t.state() == PushState.PENDING && !t.agent()) {
                    t = t.withState(PushState.EXPIRED);
                }
                targets.add(t);
            }
        }
        targets.sort((a, b) -> a.host().equals(b.host()) ? a.module().compareTo(b.module()) : a.host().compareTo(b.host()));
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (PushState s : List.of(PushState.PENDING, PushState.APPLIED, PushState.DEFERRED, PushState.WAITING, PushState.FAILED,
                PushState.DRAINED, PushState.SUPERSEDED, PushState.CANCELLED, PushState.EXPIRED)) {
            counts.put(s.wire(), 0);
        }
        for (Target t : targets) counts.merge(t.state().wire(), 1, Integer::sum);
        int pending = count(counts, PushState.PENDING), deferred = count(counts, PushState.DEFERRED);
        int failed = count(counts, PushState.FAILED), applied = count(counts, PushState.APPLIED);
        int superseded = count(counts, PushState.SUPERSEDED), drainedTargets = count(counts, PushState.DRAINED);
        int cancelled = count(counts, PushState.CANCELLED), expiredTargets = count(counts, PushState.EXPIRED);
        boolean stopped = rollouts.values().stream().anyMatch(r -> r.state().stopped());
        // Waiting on a rollout that stopped settles nothing by itself, but nothing more happens without an operator.
        long waiting = targets.stream().filter(t -> t.state() == PushState.WAITING)
                .filter(t -> rollouts.get(t.module()) == null || !rollouts.get(t.module()).state().stopped()).count();
        boolean done = !targets.isEmpty() && pending == 0 && deferred == 0 && waiting == 0;
        PushState state;
        if (failed > 0 || stopped) state = PushState.FAILED;
        else if (!targets.isEmpty() && applied == targets.size()) state = PushState.APPLIED;
        else if (pending == 0 && deferred > 0) state = PushState.DEFERRED;
        else if (pending == 0 && waiting > 0) state = PushState.WAITING;
        else if (done && cancelled > 0) state = PushState.CANCELLED;
        else if (done && expiredTargets > 0) state = PushState.EXPIRED;
        else if (done && drainedTargets > 0) state = PushState.DRAINED;
        else if (done && superseded > 0) state = PushState.SUPERSEDED;
        else state = PushState.PENDING;
        return new View(push.push(), push.revision(), push.modules() == null ? List.of() : push.modules(), push.receivedAt(),
                state, done, failed > 0 || stopped, counts, targets, push.actionOrPush(), push.rollbackOf(), push.by(), push.source(),
                Map.copyOf(rollouts), cancel, expiresAt);
    }

    private static int count(Map<String, Integer> counts, PushState s) { return counts.get(s.wire()); }

    private static Target target(String host, String module, String push, long seq, ApplyReport r, boolean agent) {
        if (r == null) return Target.pending(host, module, agent);
        List<ApplyReport.ContainerResult> containers = r.containers() == null ? List.of() : r.containers();
        long reported = ZkPaths.pushSeq(r.push());
        long lastApplied = r.lastApplied() == null ? -1 : ZkPaths.pushSeq(r.lastApplied().push());
        PushState state;
        String supersededBy = null;
        if (seq < 0 || reported < seq) {
            state = PushState.PENDING;
        } else if (reported == seq) {
            state = PushState.of(r);
            // Applied, then reported again (a reconcile of the same push that failed or waits): it was applied. Not
            // appliedPushes here: a rollout that went back from this push names the kept one in lastApplied (decision 13).
            if (state != PushState.APPLIED && lastApplied == seq) state = PushState.APPLIED;
        } else if (r.applied(push)) {
            // It ran here: a newer push, applied since or waiting on a window (or failed), does not undo that.
            state = PushState.APPLIED;
        } else if (r.failed(push) != null) {
            // It ran here and failed: a newer push that replaced it does not make it one that never ran (failure model
            // row 83). Its error is the one its own report had.
            state = PushState.FAILED;
            supersededBy = lastApplied > seq ? r.lastApplied().push() : r.push();
        } else {
            state = PushState.SUPERSEDED;
            supersededBy = lastApplied > seq ? r.lastApplied().push() : r.push();
        }
        String error = state == PushState.FAILED && reported != seq ? r.failed(push).error() : r.error();
        return new Target(host, module, state, r.revision(), r.push(), r.finishedAt(), r.window(), error, containers, agent,
                supersededBy, reported == seq ? r.rollout() : null, reported == seq && state == PushState.DEFERRED ? r.freeze() : null, null);
    }
}
