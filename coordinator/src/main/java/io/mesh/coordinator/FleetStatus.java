package io.mesh.coordinator;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.mesh.curator.LockNodes;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.ScheduleSpec;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.PushRecord;
import io.mesh.wire.PushState;
import io.mesh.wire.SlotRecord;
import io.mesh.wire.WindowRecord;
import io.mesh.wire.WindowResult;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The operator's one look at the fleet (SPEC.md "Coordinator HTTP API"): hosts &times; modules with revision, outcome, open window, held
 * containers and when the last report finished; the open windows with when they should end and which push waits on them;
 * who holds and who waits for each module lock; the pushes not yet done. Read at each call, the fleet-sized parts
 * (agents, reports) from the coordinator's {@link FleetCache};
 * served as {@code GET /v1/fleet}, {@code /v1/windows}, {@code /v1/locks} and the page at {@code /}.
 */
public final class FleetStatus {
    /** How many of the newest pushes are checked for {@link Fleet#pendingPushes()}. */
    public static final int RECENT_PUSHES = 10;

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final FleetView view;
    private final PushStatus pushes;
    private final Clock clock;
    private final FreezeStore freezes;
    private final NodeSource source;
    private final AtomicReference<Memo> memo = new AtomicReference<>();
    private final VanishedWindows vanished;


    /**
     * @param client a started Curator client: held, lock, slot, push-list and freeze nodes are read from ZooKeeper
     * @param paths  the layout
     * @param clock  the clock report ages are measured with
     * @param source where agents, reports, windows and desired nodes are read from (the coordinator's {@link FleetCache})
     */
    FleetStatus(CuratorFramework client, ZkPaths paths, Clock clock, NodeSource source) {
        this(client, paths, clock, source, PushStatus.DEFAULT_NO_AGENT_EXPIRY);
    }

    /**
     * @param noAgentExpiry when pending targets on hosts without an agent read {@code expired}, after the push was taken
     *                      ({@link PushStatus#noAgentExpiry()})
     */
    FleetStatus(CuratorFramework client, ZkPaths paths, Clock clock, NodeSource source, Duration noAgentExpiry) {
        this(client, paths, clock, source, noAgentExpiry, null);
    }

    /**
     * @param vanished the window nodes this coordinator saw go ({@link VanishedWindows}), or {@code null}: an offline
     *                 host's last known window is then read from its reports alone
     */
    FleetStatus(CuratorFramework client, ZkPaths paths, Clock clock, NodeSource source, Duration noAgentExpiry, VanishedWindows vanished) {
        this.vanished = vanished;
        this.client = client;
        this.paths = paths;
        this.view = new FleetView(client, paths, source);
        this.pushes = new PushStatus(client, paths, source, noAgentExpiry, clock);
        this.source = source;
        this.clock = clock;
        this.freezes = new FreezeStore(client, paths, clock);
    }

    /**
     * One module on one host.
     *
     * @param module          module name
     * @param revision        revision of the last report ({@code null} without one)
     * @param desiredRevision revision of the desired node now ({@code null} when the module has none)
     * @param push            push of the last report
     * @param outcome         the last report's outcome ({@code applied | deferred | failed}), {@code pending} without a
     *                        report or when the report is older than the desired push
     * @param finishedAt      when the last report's apply finished (a client shows its age as the fleet's {@code at}
     *                        minus this: an age in the answer would make every answer differ, so none could be reused)
     * @param applySeconds    how long the last reported apply took ({@code finishedAt - startedAt}), {@code null} without one
     * @param window          the window open now on that host for that module ({@code /mesh/windows}), else {@code null}
     * @param held            Docker names of that module's containers held now on that host ({@code /mesh/held})
     * @param error           the last report's error
     * @param lastWindow      the last window that ended, from the report
     * @param images          the image each container of the last report runs, in the report's order; containers
     *                        whose image the report does not name (removed, failed before they ran) are left out
     * @param lastKnown       on a host without an agent node, the window it was running when it went, by what is
     *                        last known ({@link LastKnownWindow}); else {@code null} (and not written)
     */
    public record Cell(String module, String revision, String desiredRevision, String push, PushState outcome,
                       Instant finishedAt, Double applySeconds, WindowRecord window, List<String> held, String error,
                       WindowResult lastWindow, List<RunningImage> images,
                       @JsonInclude(JsonInclude.Include.NON_NULL) LastKnownWindow lastKnown) {
        /**
         * @param at when the fleet was read ({@link Fleet#at})
         * @return whole seconds from {@code finishedAt} to {@code at}, at least 0; {@code null} without a report
         */
        public Long ageSeconds(Instant at) {
            return finishedAt == null ? null : Math.max(0, Duration.between(finishedAt, at).toSeconds());
        }
    }

    /**
     * The window an agent was running when it went (kill -9, a host down): its window and held nodes went with its
     * session, its containers may still be stopped, and nothing live says so. Shown as "agent offline; last known:
     * window W holding C" by {@code mesh status}, {@code mesh held} and the page.
     *
     * @param schedule schedule name
     * @param window   window id
     * @param since    when it opened
     * @param held     Docker names of the containers it held
     * @param from     where it is known from: {@code window node} (this coordinator saw the node go without the window
     *                 ending in the report) or {@code report} (the host's last report was deferred by it)
     */
    public record LastKnownWindow(String schedule, String window, Instant since, List<String> held, String from) {
        /** @return {@code window W (schedule S) holding C since T}, as the client and the page say it */
        public String describe() {
            return "window " + window + " (" + schedule + ") holding " + (held.isEmpty() ? "nothing" : String.join(", ", held))
                    + (since == null ? "" : " since " + since);
        }
    }

    /**
     * The last known window of {@code module} on a host without an agent node: a window node that vanished (as the
     * session of a killed agent expires) unless the report names that window as ended, else the window that deferred
     * the last report, unless it ended since.
     *
     * @return {@code null} when nothing says a window was open
     */
    static LastKnownWindow lastKnown(WindowRecord vanishedNode, ApplyReport r) {
        String ended = r == null || r.lastWindow() == null ? null : r.lastWindow().window();
        if (vanishedNode != null && !Objects.equals(vanishedNode.window(), ended)) {
            return new LastKnownWindow(vanishedNode.schedule(), vanishedNode.window(), vanishedNode.since(), vanishedNode.held(), "window node");
        }
        if (r != null && r.outcome() == ApplyOutcome.DEFERRED && r.window() != null && !Objects.equals(r.window().window(), ended)) {
            return new LastKnownWindow(r.window().schedule(), r.window().window(), r.window().since(), r.window().held(), "report");
        }
        return null;
    }

    /**
     * The image a container runs, as its host's last report names it (SPEC.md, "Images"): which build runs where.
     *
     * @param container   Docker name {@code <module>-<name>}
     * @param imageId     Docker's image id ({@code sha256:...})
     * @param imageDigest the registry's name of it ({@code <repository>@sha256:...}), {@code null} when it has none
     */
    public record RunningImage(String container, String imageId, String imageDigest) {
        /** @return the images a report names, in its order */
        static List<RunningImage> of(ApplyReport r) {
            if (r == null || r.containers() == null) return List.of();
            return r.containers().stream().filter(c -> c.imageId() != null)
                    .map(c -> new RunningImage(c.container(), c.imageId(), c.imageDigest())).toList();
        }
    }

    /**
     * One host.
     *
     * @param host    host id
     * @param online  its agent node exists
     * @param agent   the agent node's record
     * @param modules its modules, by name: those with a report, those whose desired hosts name it, those with a window
     */
    public record HostRow(String host, boolean online, AgentRecord agent, List<Cell> modules) {}

    /**
     * An open window, with what an operator at 03:31 asks of it.
     *
     * @param host        host id
     * @param module      module name
     * @param schedule    schedule name
     * @param window      window id
     * @param since       when it opened
     * @param held        containers it holds
     * @param by          the process running it
     * @param endsBy      {@code since} + the schedule's timeout: the step is killed then, and the containers start
     *                    again ({@code null} when the schedule is no longer in the desired state)
     * @param waitingPush the push deferred by it on that host ({@code null} when none)
     * @param waitingRevision that push's revision
     */
    public record OpenWindow(String host, String module, String schedule, String window, Instant since, List<String> held,
                             ProcessRef by, Instant endsBy, String waitingPush, String waitingRevision) {}

    /**
     * One module lock on one host.
     *
     * @param module  module name
     * @param host    host id
     * @param holder  who holds it ({@code null} when nobody)
     * @param waiters who waits, in order
     */
    public record Lock(String module, String host, LockHolder holder, List<LockHolder> waiters) {}

    /**
     * A push not yet done everywhere.
     *
     * @param push       push id
     * @param revision   its revision
     * @param receivedAt when the coordinator took it
     * @param state      {@code pending} or {@code deferred}
     * @param counts     targets per state, by its name (a push whose only unsettled targets were cancelled or expired
     *                   is done, so not listed)
     * @param progress   for each pending target whose agent says what its apply is doing, {@code HOST MODULE: DETAIL}
     *                   (docs/decisions/0032-apply-progress.md); empty (and not written) when none
     */
    public record PendingPush(String push, String revision, Instant receivedAt, PushState state, Map<String, Integer> counts,
                              @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> progress) {}

    /**
     * The whole fleet.
     *
     * @param at            when it was read
     * @param hosts         hosts &times; modules
     * @param windows       open windows
     * @param held          held containers
     * @param pendingPushes recent pushes not yet applied everywhere
     * @param freezes       the freezes in force, {@code _all} first (docs/decisions/0014-freezes.md)
     * @param slots         fleet-wide window slots with a running or waiting window (docs/decisions/0016-window-slots.md)
     */
    public record Fleet(@JsonInclude(JsonInclude.Include.NON_NULL) Instant at, List<HostRow> hosts, List<OpenWindow> windows, List<HeldRecord> held,
                        List<PendingPush> pendingPushes, List<FreezeStore.Freeze> freezes,
                        List<Slot> slots) {}

    /**
     * A fleet-wide window slot (SPEC.md, "Fleet-wide windows"; docs/decisions/0016-window-slots.md): who runs, and who
     * waits in order.
     *
     * @param key     {@code group-<group>} or {@code window-<module>-<schedule>}
     * @param limit   windows that may run at once
     * @param running the running windows' claims, oldest first
     * @param queue   the waiting windows, in the order they get the slot
     * @param down    for a group's slot, its hosts down for a cause other than a window, each taking a place of its
     *                limit (decision 37, the one disruption budget)
     */
    public record Slot(String key, int limit, List<SlotWindow> running, List<SlotWindow> queue, List<io.mesh.wire.GroupDowntime.Cause> down) {}

    /**
     * A window at a slot.
     *
     * @param record      its record, as its node holds it
     * @param waited      how long it has waited (queued) or waited before it ran (running), in seconds
     * @param sessionLost true for a running window whose lease went with its session: its claim still counts
     */
    public record SlotWindow(SlotRecord record, long waited, boolean sessionLost) {}

    /**
     * @return every slot that has a running or waiting window, and every group's slot with a host down for another
     *         cause (it takes a place before any window asks: decision 37), by key
     * @throws Exception ZooKeeper errors
     */
    public List<Slot> slots() throws Exception {
        Instant now = clock.instant();
        List<Slot> out = new ArrayList<>();
        GroupInputs groups = new GroupInputs(desiredSpecs());
        for (String key : ZkReads.children(client, paths.slots())) {
            String slot = paths.slots() + "/" + key;
            List<SlotRecord> leases = records(ZkPaths.slotLeases(slot));
            List<SlotWindow> running = new ArrayList<>();
            for (SlotRecord c : records(ZkPaths.slotClaims(slot))) {
                if (c.until() != null && c.until().isBefore(now)) continue; // no longer counted (decision 16)
                long waited = c.firedAt() == null || c.since() == null ? 0 : Math.max(0, Duration.between(c.firedAt(), c.since()).toSeconds());
                running.add(new SlotWindow(c, waited, leases.stream().noneMatch(c::sameWindow)));
            }
            running.sort(Comparator.comparing(w -> w.record().since(), Comparator.nullsLast(Comparator.naturalOrder())));
            List<SlotWindow> queue = new ArrayList<>();
            for (SlotRecord q : records(ZkPaths.slotQueue(slot))) { // q-<seq>, read in sequence order
                queue.add(new SlotWindow(q, q.since() == null ? 0 : Math.max(0, Duration.between(q.since(), now).toSeconds()), false));
            }
            if (running.isEmpty() && queue.isEmpty()) continue;
            int limit = !running.isEmpty() ? running.get(0).record().limit() : queue.get(0).record().limit();
            List<io.mesh.wire.GroupDowntime.Cause> down = key.startsWith(GROUP_SLOT) ? groups.down(key.substring(GROUP_SLOT.length())) : List.of();
            out.add(new Slot(key, limit, running, queue, down));
        }
        java.util.Set<String> shown = new java.util.HashSet<>(out.stream().map(Slot::key).toList());
        for (String group : io.mesh.wire.GroupDowntime.groups(groups.specs)) {
            if (shown.contains(GROUP_SLOT + group)) continue;
            List<io.mesh.wire.GroupDowntime.Cause> down = groups.down(group);
            if (!down.isEmpty()) out.add(new Slot(GROUP_SLOT + group, io.mesh.wire.GroupDowntime.limitOf(group, groups.specs, null), List.of(), List.of(), down));
        }
        out.sort(Comparator.comparing(Slot::key));
        return out;
    }

    private static final String GROUP_SLOT = "group-";

    /** @return every module's desired spec (tombstones left out) */
    private List<io.mesh.manifest.ModuleSpec> desiredSpecs() throws Exception {
        return desired().values().stream().filter(d -> !d.tombstone()).map(DesiredRecord::spec).toList();
    }

    /**
     * What the groups' causes are read from, once per look however many groups (decision 37): every module's desired
     * spec; every host's held nodes and the group modules' reports, read at the first group that asks.
     */
    private final class GroupInputs {
        final List<io.mesh.manifest.ModuleSpec> specs;
        private List<io.mesh.wire.HeldRecord> held;
        private List<ApplyReport> reports;

        GroupInputs(List<io.mesh.manifest.ModuleSpec> specs) { this.specs = specs; }

        /** @return the group's hosts down for a cause other than a window, as its windows count them ({@link io.mesh.wire.GroupDowntime}) */
        List<io.mesh.wire.GroupDowntime.Cause> down(String group) throws Exception {
            if (io.mesh.wire.GroupDowntime.modulesOf(group, specs).isEmpty()) return List.of();
            if (held == null) {
                held = io.mesh.curator.HeldRegistry.readAll(client, paths);
                reports = groupReports();
            }
            return io.mesh.wire.GroupDowntime.causes(group, specs, held, reports, io.mesh.curator.ZkClock.earliest());
        }

        /** @return the reports of every group's modules, through the coordinator's cache of the reports */
        private List<ApplyReport> groupReports() throws Exception {
            java.util.Set<String> modules = new java.util.TreeSet<>();
            for (String g : io.mesh.wire.GroupDowntime.groups(specs)) modules.addAll(io.mesh.wire.GroupDowntime.modulesOf(g, specs));
            List<ApplyReport> out = new ArrayList<>();
            for (String host : source.children(paths.reports())) {
                for (String module : modules) {
                    ApplyReport r = source.read(paths.report(host, module), ApplyReport.class); // null when not JSON: skipped
                    if (r != null && host.equals(r.host()) && module.equals(r.module())) out.add(r); // a host cannot speak for another
                }
            }
            return out;
        }
    }

    /**
     * @return the windows waiting for their gate (decision 35), by host then node name: display only
     * @throws Exception ZooKeeper errors
     */
    public List<io.mesh.wire.GateWaitRecord> gateWaits() throws Exception {
        List<io.mesh.wire.GateWaitRecord> out = new ArrayList<>();
        for (String host : new java.util.TreeSet<>(ZkReads.children(client, paths.waits()))) {
            for (String n : new java.util.TreeSet<>(ZkReads.children(client, paths.waits() + "/" + host))) {
                io.mesh.wire.GateWaitRecord r = ZkReads.read(client, paths.waits() + "/" + host + "/" + n, io.mesh.wire.GateWaitRecord.class);
                if (r != null) out.add(r);
            }
        }
        return out;
    }

    /** @return the slot records under {@code path}, in the order of their names (a queue's sequence) */
    private List<SlotRecord> records(String path) throws Exception {
        List<SlotRecord> out = new ArrayList<>();
        List<String> names = new ArrayList<>(ZkReads.children(client, path));
        names.sort(Comparator.comparing((String n) -> n.replaceAll(".*-", "")).thenComparing(n -> n));
        for (String n : names) {
            SlotRecord r;
            try {
                r = ZkReads.read(client, path + "/" + n, SlotRecord.class);
            } catch (RuntimeException e) {
                continue; // not a slot record
            }
            if (r != null) out.add(r);
        }
        return out;
    }

    /**
     * What a fleet is derived from besides the cache's generation: the desired nodes (from the cache, which a push's
     * answer waits for), and held, window, freeze and slot nodes read from ZooKeeper at every call, so that what a hold
     * or a freeze just wrote is seen at once (docs/decisions/0022-status-from-a-cache.md).
     */
    private record Inputs(Map<String, DesiredRecord> desired, Map<String, DesiredRecord> deleted, List<HeldRecord> held,
                          List<WindowRecord> windows, List<String> recentPushes, List<FreezeStore.Freeze> freezes, List<Slot> slots,
                          List<String> expiredPushes, Map<String, WindowRecord> vanished) {}

    /** The last fleet derived, with the cache generation and inputs it came from, and its JSON without {@code at}. */
    private record Memo(long generation, Inputs inputs, Fleet fleet, byte[] jsonWithoutAt) {}

    /**
     * @return the fleet now
     * @throws Exception ZooKeeper errors
     */
    public Fleet fleet() throws Exception {
        return memo().fleet();
    }

    /**
     * The fleet as {@code GET /v1/fleet} sends it: the JSON of {@link #fleet()}. While neither the cache's generation
     * nor the inputs moved, the answer is the last one's bytes with a new {@code at} in front, so that a status at
     * rest costs the same at 10 hosts as at 1,000 (docs/benchmark-notes.md, B7; decision 22).
     *
     * @return the JSON, UTF-8
     * @throws Exception ZooKeeper errors
     */
    public byte[] fleetJson() throws Exception {
        Memo m = memo();
        byte[] at = Json.MAPPER.writeValueAsBytes(m.fleet().at());
        byte[] rest = m.jsonWithoutAt(); // {"hosts":...}
        ByteArrayOutputStream out = new ByteArrayOutputStream(rest.length + at.length + 8);
        out.write(AT_FIELD);
        out.write(at);
        out.write(',');
        out.write(rest, 1, rest.length - 1);
        return out.toByteArray();
    }

    private static final byte[] AT_FIELD = "{\"at\":".getBytes(StandardCharsets.UTF_8);

    /** @return the fleet now, derived again only when the cache or the inputs moved since the last one */
    private Memo memo() throws Exception {
        // The generation first: what is read after it is at least as new, so a memo is never older than its number.
        long generation = source.generation();
        Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
        Inputs in = inputs(now);
        Memo last = memo.get();
        if (generation >= 0 && last != null && last.generation() == generation && last.inputs().equals(in)) {
            return new Memo(generation, in, withAt(last.fleet(), now), last.jsonWithoutAt());
        }
        Fleet f = derive(now, in);
        Memo m = new Memo(generation, in, f, Json.MAPPER.writeValueAsBytes(withAt(f, null)));
        if (generation >= 0) memo.set(m);
        return m;
    }

    private static Fleet withAt(Fleet f, Instant at) {
        return new Fleet(at, f.hosts(), f.windows(), f.held(), f.pendingPushes(), f.freezes(), f.slots());
    }

    private Inputs inputs(Instant now) throws Exception {
        Map<String, DesiredRecord> deleted = new TreeMap<>();
        Map<String, DesiredRecord> desired = desired(deleted);
        List<String> recent = recentPushes();
        return new Inputs(desired, deleted, view.held(), view.windows(), recent,
                freezes.list().stream().filter(FreezeStore.Freeze::active).toList(), slots(), expired(recent, now),
                vanished == null ? Map.of() : vanished.vanished());
    }

    /**
     * The recent pushes past their no-agent expiry now: an input, since time alone turns their pending targets on
     * hosts without an agent {@code expired} (docs/decisions/0030-cancel-and-expire-pushes.md), so a memo must not
     * outlive that moment.
     */
    private List<String> expired(List<String> recent, Instant now) throws Exception {
        List<String> out = new ArrayList<>();
        for (String n : recent) {
            PushRecord r = source.read(paths.push(n), PushRecord.class);
            Instant at = r == null ? null : pushes.expiresAt(r);
            if (at != null && !now.isBefore(at)) out.add(n);
        }
        return out;
    }

    /** The fleet from its inputs and the cache's (or ZooKeeper's) agents and reports. */
    private Fleet derive(Instant now, Inputs in) throws Exception {
        Map<String, DesiredRecord> deleted = in.deleted();
        Map<String, DesiredRecord> desired = in.desired();
        List<HeldRecord> held = in.held();
        List<OpenWindow> windows = windows(desired, in.windows());
        Map<String, OpenWindow> windowByKey = new HashMap<>();
        List<WindowRecord> raw = in.windows();
        Map<String, WindowRecord> rawByKey = new HashMap<>();
        for (WindowRecord w : raw) rawByKey.put(w.host() + "/" + w.module(), w);
        for (OpenWindow w : windows) windowByKey.put(w.host() + "/" + w.module(), w);
        List<HostRow> rows = new ArrayList<>();
        TreeSet<String> hostIds = new TreeSet<>();
        List<FleetView.Host> hosts = view.hosts();
        Map<String, FleetView.Host> byHost = new HashMap<>();
        for (FleetView.Host h : hosts) { hostIds.add(h.host()); byHost.put(h.host(), h); }
        for (DesiredRecord d : desired.values()) {
            for (String h : d.spec().hosts()) if (!h.equals(ModuleSpec.ALL_HOSTS)) hostIds.add(h);
        }
        for (WindowRecord w : raw) hostIds.add(w.host());
        for (String host : hostIds) {
            FleetView.Host h = byHost.get(host);
            Map<String, ApplyReport> reports = new TreeMap<>();
            if (h != null) for (ApplyReport r : h.modules()) reports.put(r.module(), r);
            TreeSet<String> modules = new TreeSet<>(reports.keySet());
            // A deleted module is gone from a host once the host reported the delete applied (decision 11).
            modules.removeIf(m -> deletedHere(deleted.get(m), reports.get(m)));
            for (DesiredRecord d : desired.values()) {
                if (d.spec().hosts().contains(host) || (d.spec().hosts().contains(ModuleSpec.ALL_HOSTS) && h != null && h.online())) modules.add(d.module());
            }
            for (WindowRecord w : raw) if (w.host().equals(host)) modules.add(w.module());
            List<Cell> cells = new ArrayList<>();
            java.util.Set<String> drainHolds = PushStatus.drainHolds(held, host, now);
            for (String module : modules) {
                ApplyReport r = reports.get(module);
                DesiredRecord d = desired.get(module);
                List<String> heldHere = held.stream().filter(x -> x.host().equals(host) && module.equals(x.module()))
                        .map(HeldRecord::container).toList();
                PushState outcome = PushState.PENDING;
                if (r != null && r.outcome() != null) {
                    boolean current = d == null || ZkPaths.pushSeq(r.push()) >= ZkPaths.pushSeq(d.push());
                    outcome = current ? PushState.of(r) : PushState.PENDING;
                    if (outcome == PushState.DEFERRED && PushStatus.deferredByDrain(r, drainHolds)) outcome = PushState.DRAINED;
                }
                Instant finished = r == null ? null : r.finishedAt();
                cells.add(new Cell(module, r == null ? null : r.revision(), d == null ? null : d.revision(),
                        r == null ? null : r.push(), outcome, finished,
                        finished == null || r.startedAt() == null ? null : Duration.between(r.startedAt(), finished).toMillis() / 1000.0,
                        rawByKey.get(host + "/" + module), heldHere, r == null ? null : r.error(), r == null ? null : r.lastWindow(),
                        RunningImage.of(r), h != null && h.online() ? null : lastKnown(in.vanished().get(host + "/" + module), r)));
            }
            rows.add(new HostRow(host, h != null && h.online(), h == null ? null : h.agent(), cells));
        }
        return new Fleet(now, rows, windows, held, pendingPushes(in.recentPushes()), in.freezes(), in.slots());
    }

    private Map<String, DesiredRecord> desired() throws Exception { return desired(new TreeMap<>()); }

    /** @return the desired nodes with a spec, by module; the tombstones of deleted modules go into {@code tombstones} */
    private Map<String, DesiredRecord> desired(Map<String, DesiredRecord> tombstones) throws Exception {
        Map<String, DesiredRecord> out = new TreeMap<>();
        for (String m : source.children(paths.desired())) {
            DesiredRecord d = source.read(paths.desired(m), DesiredRecord.class);
            if (d != null && d.spec() != null) out.put(m, d);
            else if (d != null && d.tombstone()) tombstones.put(m, d);
        }
        return out;
    }

    /** @return true when {@code tombstone} deleted the module and {@code report} says so: applied, at that push or later */
    private static boolean deletedHere(DesiredRecord tombstone, ApplyReport report) {
        return tombstone != null && report != null && report.outcome() == ApplyOutcome.APPLIED
                && ZkPaths.pushSeq(report.push()) >= ZkPaths.pushSeq(tombstone.push());
    }

    /**
     * @return every open window with its end and the push waiting on it, sorted by host then module
     * @throws Exception ZooKeeper errors
     */
    public List<OpenWindow> windows() throws Exception { return windows(desired(), view.windows()); }

    private List<OpenWindow> windows(Map<String, DesiredRecord> desired, List<WindowRecord> raw) throws Exception {
        List<OpenWindow> out = new ArrayList<>();
        for (WindowRecord w : raw) {
            Instant endsBy = null;
            DesiredRecord d = desired.get(w.module());
            if (d != null && w.since() != null) {
                ScheduleSpec s = d.spec().schedules().get(w.schedule());
                if (s != null) endsBy = w.since().plus(s.timeoutDuration());
            }
            ApplyReport r = source.read(paths.report(w.host(), w.module()), ApplyReport.class);
            // deferred by this window (not by a rollout's wave nor a freeze), and not a reconcile of the push that already runs there
            boolean waiting = r != null && r.outcome() == ApplyOutcome.DEFERRED && r.rollout() == null && r.freeze() == null
                    && (r.lastApplied() == null || !Objects.equals(r.push(), r.lastApplied().push()));
            out.add(new OpenWindow(w.host(), w.module(), w.schedule(), w.window(), w.since(), w.held(), w.by(), endsBy,
                    waiting ? r.push() : null, waiting ? r.revision() : null));
        }
        return out;
    }

    /**
     * @return every module lock that has a holder or a waiter, sorted by module then host
     * @throws Exception ZooKeeper errors
     */
    public List<Lock> locks() throws Exception {
        List<Lock> out = new ArrayList<>();
        for (String module : ZkReads.children(client, paths.locks())) {
            for (String host : ZkReads.children(client, paths.locks() + "/" + module)) {
                List<LockHolder> all = LockNodes.holders(client, paths, module, host);
                if (all.isEmpty()) continue;
                out.add(new Lock(module, host, all.get(0), List.copyOf(all.subList(1, all.size()))));
            }
        }
        return out;
    }

    /**
     * @return the newest {@value #RECENT_PUSHES} pushes that are not done (some host pending or deferred), newest first
     * @throws Exception ZooKeeper errors
     */
    public List<PendingPush> pendingPushes() throws Exception { return pendingPushes(recentPushes()); }

    /** @return the newest {@value #RECENT_PUSHES} push node names, newest first */
    private List<String> recentPushes() throws Exception {
        return ZkReads.children(client, paths.pushes()).stream().filter(n -> ZkPaths.pushSeq(n) >= 0)
                .sorted(Comparator.comparingLong(ZkPaths::pushSeq).reversed()).limit(RECENT_PUSHES).toList();
    }

    private List<PendingPush> pendingPushes(List<String> names) throws Exception {
        List<PendingPush> out = new ArrayList<>();
        for (String n : names) {
            Optional<PushStatus.View> v = pushes.of(n);
            if (v.isEmpty() || v.get().done()) continue;
            PushStatus.View p = v.get();
            // What each pending host's apply is doing (decision 32): HOST MODULE: DETAIL.
            List<String> progress = p.targets().stream().filter(t -> t.detail() != null)
                    .map(t -> t.host() + " " + t.module() + ": " + t.detail()).toList();
            out.add(new PendingPush(p.push(), p.revision(), p.receivedAt(), p.state(), p.counts(), progress));
        }
        return out;
    }
}
