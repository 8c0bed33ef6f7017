package io.mesh.coordinator;

import io.mesh.manifest.ModuleSpec;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.PlanAnswer;
import io.mesh.wire.PlanRequest;
import io.mesh.wire.PlanState;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The coordinator's side of plans ({@code mesh push FILE --plan}; docs/decisions/0012-plans.md): validates the manifest
 * as a push ({@link PushWriter#validate}), writes {@code /mesh/plans/plan-<seq>} ({@link PlanRequest}) and one
 * {@code pending} child per targeted host ({@link PlanAnswer}) in one transaction, keeps the plans bounded, and reads a
 * plan back per host. Thread-safe.
 *
 * <p>Targeted hosts: those the manifest's modules name, and those the modules' desired nodes name now (an apply there
 * would remove what the manifest no longer gives them); {@code *} is every host with an agent node.
 *
 * @param client    a started Curator client
 * @param paths     the layout
 * @param validator the push's validation, the same a push goes through
 * @param clock     source of {@code requestedAt}
 */
public record PlanStore(CuratorFramework client, ZkPaths paths, PushWriter validator, Clock clock) {
    /** Plans kept: the newest this many ... */
    public static final int KEEP = 20;
    /** ... and none older than this. */
    public static final Duration MAX_AGE = Duration.ofHours(1);
    /** How many times a plan that lost the race for its name is tried again. */
    private static final int MAX_ATTEMPTS = 10;

    private static final Logger LOG = LoggerFactory.getLogger(PlanStore.class);

    /**
     * What was written.
     *
     * @param plan     such as {@code plan-0000000003}
     * @param revision the revision the push would have
     * @param modules  module names, in document order
     * @param hosts    the hosts asked, sorted
     * @param noAgent  those of them without an agent node now
     * @param schedules each module's schedules added, changed or removed against its desired state now
     *                 ({@link ScheduleDiff}): the same on every host, so computed here, not by the agents
     */
    public record Created(String plan, String revision, List<String> modules, List<String> hosts, List<String> noAgent,
                          List<ScheduleDiff.Change> schedules) {}

    /**
     * A plan as {@code GET /v1/plans/{plan}} shows it.
     *
     * @param plan        its name
     * @param revision    the revision the push would have
     * @param requestedAt when it was written
     * @param modules     module names
     * @param hosts       per host: pending, no-agent (pending, and no agent node), the answer, or failed
     * @param done        true when no host is pending (a no-agent host counts as done: nothing will answer it)
     * @param clean       true when done and every host answered with nothing that would fail
     */
    public record View(String plan, String revision, Instant requestedAt, List<String> modules, List<PlanAnswer> hosts,
                       boolean done, boolean clean) {}

    /**
     * Validates the manifest as a push and, only when it is valid, writes the plan.
     *
     * @param text     the manifest YAML
     * @param revision {@code X-Mesh-Revision}, or {@code null}
     * @param by       who asks
     * @return what was written
     * @throws io.mesh.manifest.ManifestException with a push's errors: nothing was written
     * @throws Exception                      ZooKeeper errors
     */
    public Created create(String text, String revision, ProcessRef by) throws Exception {
        PushWriter.Validated v = validator.validate(text, revision);
        Set<String> agents = new TreeSet<>(ZkReads.children(client, paths.agents()));
        TreeSet<String> hosts = new TreeSet<>();
        List<ScheduleDiff.Change> schedules = new ArrayList<>();
        for (ModuleSpec m : v.modules()) {
            addHosts(hosts, m.hosts(), agents);
            DesiredRecord now = ZkReads.read(client, paths.desired(m.module()), DesiredRecord.class);
            if (now != null && now.spec() != null) addHosts(hosts, now.spec().hosts(), agents);
            schedules.addAll(ScheduleDiff.of(now == null ? null : now.spec(), m));
        }
        List<String> modules = v.modules().stream().map(ModuleSpec::module).toList();
        ensure(paths.root());
        ensure(paths.plans());
        for (int attempt = 1; ; attempt++) {
            Stat parent = client.checkExists().forPath(paths.plans());
            String plan = ZkPaths.planName(parent.getCversion());
            Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
            byte[] request = Json.bytes(new PlanRequest(plan, v.revision(), now, by, v.modules(), List.copyOf(hosts)));
            List<CuratorOp> ops = new ArrayList<>();
            ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths.plan(plan), request));
            for (String h : hosts) {
                ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths.plan(plan, h),
                        Json.bytes(PlanAnswer.pending(plan, h, now))));
            }
            try {
                client.transaction().forOperations(ops);
            } catch (KeeperException.NodeExistsException e) {
                // Another coordinator took the name (or Curator retried a transaction that had committed: then the
                // plan is there under this name, written by this request).
                if (!Arrays.equals(dataOrNull(paths.plan(plan)), request)) {
                    if (attempt >= MAX_ATTEMPTS) throw new IllegalStateException("another writer took each of " + MAX_ATTEMPTS + " plan names; ask again");
                    Thread.sleep(ThreadLocalRandom.current().nextLong(5, 20L * attempt));
                    continue;
                }
            }
            trim(plan);
            List<String> noAgent = hosts.stream().filter(h -> !agents.contains(h)).toList();
            return new Created(plan, v.revision(), modules, List.copyOf(hosts), noAgent, List.copyOf(schedules));
        }
    }

    private static void addHosts(Set<String> into, List<String> named, Set<String> agents) {
        for (String h : named) {
            if (h.equals(ModuleSpec.ALL_HOSTS)) into.addAll(agents);
            else into.add(h);
        }
    }

    /** Deletes the plans beyond the newest {@link #KEEP} and those older than {@link #MAX_AGE}; best effort. */
    private void trim(String keep) {
        try {
            List<String> plans = new ArrayList<>(ZkReads.children(client, paths.plans()).stream()
                    .filter(p -> ZkPaths.planSeq(p) >= 0).sorted(Comparator.comparingLong(ZkPaths::planSeq).reversed()).toList());
            long oldest = clock.millis() - MAX_AGE.toMillis();
            for (int i = 0; i < plans.size(); i++) {
                String p = plans.get(i);
                if (p.equals(keep)) continue;
                boolean drop = i >= KEEP;
                if (!drop) {
                    Stat s = client.checkExists().forPath(paths.plan(p));
                    drop = s != null && s.getCtime() < oldest;
                }
                if (!drop) continue;
                try {
                    client.delete().deletingChildrenIfNeeded().forPath(paths.plan(p));
                } catch (KeeperException.NoNodeException gone) {
                    // another coordinator deleted it
                }
            }
        } catch (Exception e) {
            LOG.warn("old plans not trimmed: {}", e.toString());
        }
    }

    private byte[] dataOrNull(String path) throws Exception {
        try {
            return client.getData().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    private void ensure(String path) throws Exception {
        if (client.checkExists().forPath(path) != null) return;
        try {
            client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(path, "{}".getBytes(StandardCharsets.UTF_8));
        } catch (KeeperException.NodeExistsException ignored) {
            // made meanwhile
        }
    }

    /**
     * @param plan a plan name
     * @return the plan per host; empty when there is no such plan (never written, or trimmed)
     * @throws Exception ZooKeeper errors
     */
    public Optional<View> view(String plan) throws Exception {
        if (ZkPaths.planSeq(plan) < 0) return Optional.empty();
        PlanRequest r = ZkReads.read(client, paths.plan(plan), PlanRequest.class);
        if (r == null) return Optional.empty();
        Set<String> agents = new HashSet<>(ZkReads.children(client, paths.agents()));
        List<PlanAnswer> hosts = new ArrayList<>();
        for (String h : new TreeSet<>(ZkReads.children(client, paths.plan(plan)))) {
            PlanAnswer a = ZkReads.read(client, paths.plan(plan, h), PlanAnswer.class);
            if (a == null) a = PlanAnswer.pending(plan, h, r.requestedAt());
            if (a.state() == PlanState.PENDING && !agents.contains(h)) {
                a = new PlanAnswer(plan, h, PlanState.NO_AGENT, a.requestedAt(), null, null, null,
                        "host " + h + " has no agent (no " + paths.agent(h) + "): nothing plans there, and a push would land there only when an agent runs with --host " + h);
            }
            hosts.add(a);
        }
        boolean done = hosts.stream().noneMatch(a -> a.state() == PlanState.PENDING);
        boolean clean = done && hosts.stream().allMatch(PlanAnswer::clean);
        List<String> modules = r.modules() == null ? List.of() : r.modules().stream().map(ModuleSpec::module).toList();
        return Optional.of(new View(plan, r.revision(), r.requestedAt(), modules, hosts, done, clean));
    }
}
