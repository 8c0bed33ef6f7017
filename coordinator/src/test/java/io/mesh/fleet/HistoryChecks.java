package io.mesh.fleet;

import com.github.dockerjava.api.model.Event;
import io.mesh.docker.Labels;
import io.mesh.testing.ZkTxnLog;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ZkPaths;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The checks of the fleet history ({@link FleetHistoryIT}), over evidence recorded outside mesh: each engine's Docker
 * events ({@link EngineEvents}, with the gaps of its restarts) and ZooKeeper's transaction log
 * ({@link ZkTxnLog#readMerged}, the leader's clock), plus the nemesis's own record of what it did and when
 * ({@link Nemesis.Fault}), used only to widen a time bound where a fault legitimately delays a window (a frozen or
 * killed owner, a restarting engine), never to excuse a forbidden Docker action. SPEC's touches while held and changes
 * while frozen are judged by the product's checker over the same evidence ({@link #productChecks},
 * {@link OutsideLedger}), beside this class's own rules for windows and freezes, which trust no call line.
 *
 * <p>Each violation is one string: what was broken, then its evidence, one line each.
 */
final class HistoryChecks {
    /** A window's held containers must run again this soon after its step ended, when no fault delays it. */
    static final long GIVE_BACK_BOUND_MS = 20_000;
    /**
     * A step that ended more than this long before the quorum came back must have had its containers started again
     * before it came back: a window never waits for ZooKeeper to give them back.
     */
    static final long ZK_WAIT_MS = 10_000;
    /** ZooKeeper session of every mesh process ({@code MeshZk.SESSION_TIMEOUT}). */
    static final long SESSION_MS = 15_000;
    /** The fleet agents' reconcile interval ({@code fleet.sh}'s {@code MESH_FLEET_RECONCILE}). */
    static final long RECONCILE_MS = 10_000;

    private static final Set<String> TOUCH = Set.of("create", "destroy", "rename", "start", "stop", "kill");

    /** A held node's life, per host, container and window, from the transaction log (re-creations merged). */
    static final class Held {
        final String host, module, container, containerId, window;
        final long fromMs;
        long toMs = -1;
        final long ownerPid;
        final long ownerSession;
        final long firstZxid;
        final Set<Long> pids = new java.util.LinkedHashSet<>();
        int creates;
        /** The node's earlier life, when this one is its node made again after it was gone ({@link #heldIntervals}). */
        Held before;

        Held(String host, String module, String container, String containerId, String window, long fromMs, long ownerPid, long ownerSession, long firstZxid) {
            this.host = host;
            this.module = module;
            this.container = container;
            this.containerId = containerId;
            this.window = window;
            this.fromMs = fromMs;
            this.ownerPid = ownerPid;
            this.ownerSession = ownerSession;
            this.firstZxid = firstZxid;
        }

        String describe() {
            return container + " on " + host + " held by window " + window + " (owner pid " + ownerPid + ") ["
                    + Instant.ofEpochMilli(fromMs) + " .. " + (toMs < 0 ? "never released" : Instant.ofEpochMilli(toMs)) + "]";
        }
    }

    /** A window's step container on one engine, from its events. */
    static final class Step {
        final String host, module, window, id;
        long created = -1, started = -1, died = -1, destroyed = -1;
        String exitCode;
        boolean dieFromGap;

        Step(String host, String module, String window, String id) {
            this.host = host;
            this.module = module;
            this.window = window;
            this.id = id;
        }

        long end() { return died >= 0 ? died : Long.MAX_VALUE; }
    }

    /**
     * An operator's hold ({@code mesh hold}), from the transaction log: recorded at {@code fromMs}, confirmed by its
     * host at {@code confirmedMs} (the first write of {@code hold.confirmed}), its {@code --stop} recorded at
     * {@code stoppedMs}, deleted at {@code toMs}.
     */
    static final class OpHold {
        final String host, container, module, by;
        final long fromMs;
        final HeldRecord.OperatorHold hold;
        long confirmedMs = -1, stoppedMs = -1, toMs = -1;

        OpHold(String host, String container, String module, long fromMs, HeldRecord.OperatorHold hold) {
            this.host = host;
            this.container = container;
            this.module = module;
            this.fromMs = fromMs;
            this.hold = hold;
            this.by = hold.by();
        }

        /**
         * @return true when the hold was in force on the container at {@code ms}: confirmed by its host and not yet
         *         deleted (SPEC.md "Operator holds": an apply that began before the hold may still call until then)
         */
        boolean inForceAt(String host, String container, long ms) {
            return this.host.equals(host) && this.container.equals(container) && confirmedMs >= 0 && confirmedMs <= ms && (toMs < 0 || ms <= toMs);
        }

        String describe() {
            return container + " on " + host + " held by operator " + by + (hold.stops() ? " (--stop)" : "") + " [recorded "
                    + Instant.ofEpochMilli(fromMs) + ", confirmed " + (confirmedMs < 0 ? "never" : Instant.ofEpochMilli(confirmedMs))
                    + " .. " + (toMs < 0 ? "not released" : Instant.ofEpochMilli(toMs)) + (hold.until() == null ? "" : ", until " + hold.until()) + "]";
        }
    }

    /**
     * A freeze's time in force, from the transaction log (epoch ms): a module's, or every module's ({@code _all}); for
     * a recurring freeze, first the node's life with its {@code rule}, then each span of it (no rule).
     */
    record Frozen(String target, long fromMs, long toMs, String by, io.mesh.wire.FreezeRecord rule) {}

    /**
     * A change already begun when a freeze is written may still make its first Docker call this long after (SPEC.md
     * "Freezes": it finishes the container it is on): 2 s, plus the wait for the call's line to be on disk before it
     * is made (decision 28; a CI machine's loaded disk took it past 2 s alone, the product's audit of the same run
     * finding that apply begun before the freeze).
     */
    static final long FREEZE_GRACE_MS = 2_000 + io.mesh.ledger.Ledger.AHEAD_MAX.toMillis();

    /** A {@code mesh release} the workload sent (epoch ms): a hold's node may go between the two times. */
    record Release(String host, String container, long sentMs, long answeredMs) {
        /** The container of an undrain: every container of the host (a drain's holds, decision 37). */
        static final String ALL = "*";
    }

    /** A lock child's time as holder (lowest live sequence). */
    record Holding(String lock, String child, long session, long pid, String purpose, long fromMs, long toMs, boolean lapsed) {}

    private final Map<String, List<Event>> events;               // host -> events
    private final Map<String, List<EngineEvents.Gap>> gaps;      // host -> gaps
    private final List<ZkTxnLog.Change> changes;
    private final List<Nemesis.Fault> faults;
    private final Predicate<String> modules;
    private final ZkPaths paths;
    private final Map<String, List<EngineLog.Refusal>> refusedStarts;
    /** Held containers Docker would not start again, given back as a new container under their name. */
    private int replaced;
    final List<String> violations = new ArrayList<>();
    final Map<String, Object> figures = new LinkedHashMap<>();
    final List<Held> held = new ArrayList<>();
    /** Window held nodes made again after they were gone, in the order they were made ({@link #heldIntervals}). */
    private final List<Held> madeAgain = new ArrayList<>();
    /** Of those, the late ones, which hold nothing ({@link #late}). */
    final List<Held> lateNodes = new ArrayList<>();
    /** A late held node lives no longer than this: made by a closed node's create, and deleted by its callback at once. */
    static final long LATE_NODE_MS = 2_000;
    final List<OpHold> holds = new ArrayList<>();
    final List<Frozen> frozen = new ArrayList<>();
    private Set<String> group = Set.of();
    private List<String> secrets = List.of();
    private String rolloutModule;
    private int rolloutParallel = Integer.MAX_VALUE;
    private int rolloutMax;
    private int groupLimit = Integer.MAX_VALUE;
    /** The most hosts of the group down at a window's step, itself counted ({@link #checkBudget}). */
    private int budgetMax;
    private int groupMax;
    private List<Release> releases = List.of();
    final Map<String, Step> steps = new LinkedHashMap<>();       // host|window -> step
    final List<Holding> holdings = new ArrayList<>();
    final List<Long> giveBackMs = new ArrayList<>();
    private final List<long[]> slowest = new ArrayList<>();
    /** Per host, the Docker calls its ledger holds ({@link OutsideLedger#calls}); {@code null}: the product's rules are not run. */
    private Map<String, List<io.mesh.wire.LedgerEntry>> calls;
    /**
     * What the product's checker found over the outside evidence that this class does not judge: {@code outside-mesh}
     * (Docker's own restarts of a crashed container are that, rightly) and {@code left-stopped} (judged by
     * {@link #checkHeld} with the faults' delays counted in), each with its evidence.
     */
    final List<String> findings = new ArrayList<>();
    /** Held nodes whose data another window's process overwrote while the first one's session still owned them. */
    final List<String> takeovers = new ArrayList<>();

    /**
     * @param refusedStarts per host, the starts dockerd refused for good (its own log, {@link EngineLog}: a task
     *                      containerd kept from a start a restart cut, {@code StaleTaskException}): a held container
     *                      refused after it was stopped is given back by a new container under its name, which the
     *                      apply after the window makes
     */
    HistoryChecks(Map<String, List<Event>> events, Map<String, List<EngineEvents.Gap>> gaps, List<ZkTxnLog.Change> changes,
                  List<Nemesis.Fault> faults, Predicate<String> modules, ZkPaths paths, Map<String, List<EngineLog.Refusal>> refusedStarts) {
        this.refusedStarts = refusedStarts;
        this.events = events;
        this.gaps = gaps;
        this.changes = changes;
        this.faults = faults;
        this.modules = modules;
        this.paths = paths;
    }

    /**
     * @param perHost per host, the Docker calls its ledger holds ({@link OutsideLedger#calls})
     * @return this, which judges touches of held containers and changes of frozen modules by the product's checker
     *         over the outside evidence
     */
    HistoryChecks withLedgerCalls(Map<String, List<io.mesh.wire.LedgerEntry>> perHost) {
        this.calls = Map.copyOf(perHost);
        return this;
    }

    /** How long after a connect Docker's start of the container, whose first step the connect is, may come (a loaded host). */
    static final long OWN_NETWORK_MS = 30_000;

    /**
     * Docker disconnects a container as it dies (die, disconnect, then the stop call's {@code stop}) and connects it as it
     * starts (connect, then {@code start} once the process runs, seconds later on a loaded host).
     *
     * @param own        the container's events, in time order
     * @param disconnect true for a disconnect, false for a connect
     * @param t          the network event's time (epoch nanoseconds)
     * @return true when the network event is that: a disconnect whose container's last event before it is its
     *         {@code die}, or a connect whose container's next event is its {@code start}, within {@link #OWN_NETWORK_MS}
     */
    private static boolean ofItsOwnStopOrStart(List<Event> own, boolean disconnect, long t) {
        Event before = null, after = null;
        for (Event x : own) {
            if (EngineEvents.time(x) <= t) before = x;
            else if (after == null) after = x;
        }
        Event near = disconnect ? before : after;
        return near != null && (disconnect ? "die" : "start").equals(EngineEvents.action(near))
                && Math.abs(EngineEvents.time(near) - t) <= OWN_NETWORK_MS * 1_000_000L;
    }
    /** Per host, each connect and disconnect of a container on a module's network ({@link EngineEvents#networkEvents}). */
    private Map<String, List<Event>> networkEvents = Map.of();

    /**
     * @param perHost per host, the network events its engine sent
     * @return this, which judges them: no held container is connected or disconnected (decision 31)
     */
    HistoryChecks withNetworkEvents(Map<String, List<Event>> perHost) {
        this.networkEvents = Map.copyOf(perHost);
        return this;
    }

    /** @return per host, its Docker events as recorded */
    Map<String, List<Event>> events() { return events; }

    /**
     * @param sent the releases the workload sent
     * @return this
     */
    HistoryChecks withReleases(List<Release> sent) {
        this.releases = List.copyOf(sent);
        return this;
    }

    /**
     * @param module      a module pushed with a staged rollout
     * @param maxParallel its {@code max-parallel}
     * @return this
     */
    HistoryChecks withRollout(String module, int maxParallel) {
        this.rolloutModule = module;
        this.rolloutParallel = maxParallel;
        return this;
    }

    /**
     * @param values every value the run's secret files had
     * @return this
     */
    HistoryChecks withSecrets(List<String> values) {
        this.secrets = List.copyOf(values);
        return this;
    }

    /**
     * @param modules the modules whose schedules share one fleet-wide window group
     * @param limit   the group's limit: never more of their windows' steps running at once, on every engine together
     * @return this
     */
    HistoryChecks withGroup(Set<String> modules, int limit) {
        this.group = Set.copyOf(modules);
        this.groupLimit = limit;
        return this;
    }

    /** Runs every check over the records. */
    HistoryChecks run() {
        heldIntervals();
        operatorHolds();
        steps();
        locks();
        for (Held h : held) checkHeld(h);
        freezes();
        checkFrozen();
        productChecks();
        checkGroupLimit();
        checkSecrets();
        checkRolloutParallel();
        checkSteps();
        checkTemporaryNames();
        checkPublishedUnderLock();
        checkNetworkTouches();
        figures.put("held-node-takeovers", takeovers.size());
        figures.put("given-back-as-new-containers", replaced);
        figures.put("pauses-past-session", pausesPastSession());
        figures.put("held-intervals", held.size());
        figures.put("held-nodes-made-late", lateNodes.size());
        figures.put("freezes", frozen.size());
        figures.put("rollout-hosts-at-once-max", rolloutMax);
        figures.put("group-steps-at-once-max", groupMax);
        figures.put("group-hosts-down-at-a-step-max", budgetMax);
        figures.put("operator-holds", holds.size());
        figures.put("operator-holds-confirmed", holds.stream().filter(h -> h.confirmedMs >= 0).count());
        figures.put("operator-holds-stopped", holds.stream().filter(h -> h.stoppedMs >= 0).count());
        figures.put("stop-holds-ended-started-as-they-were", stopHoldsStartedAsTheyWere());
        figures.put("windows-with-steps", steps.size());
        figures.put("lock-holdings", holdings.size());
        figures.put("lock-lapses", holdings.stream().filter(Holding::lapsed).count());
        figures.put("docker-events", events.values().stream().mapToInt(List::size).sum());
        figures.put("znode-changes", changes.size());
        figures.put("engine-gaps", gaps.values().stream().mapToInt(List::size).sum());
        if (!giveBackMs.isEmpty()) {
            List<Long> sorted = giveBackMs.stream().sorted().toList();
            figures.put("give-back-ms", "p50=" + sorted.get(sorted.size() / 2) + " p90=" + sorted.get(sorted.size() * 9 / 10)
                    + " max=" + sorted.get(sorted.size() - 1));
            slowest.sort((a, b) -> Long.compare(b[0], a[0]));
            figures.put("slowest-give-backs", slowest.stream().limit(3).map(x -> {
                Held h = held.get((int) x[1]);
                return x[0] + "ms " + h.container + "@" + h.host + " " + h.window + " faults" + delaying(h, x[2]).stream().map(f -> "#" + f.id).toList();
            }).toList());
        }
        return this;
    }

    // -----------------------------------------------------------------------------------------------------------
    // Records.

    private void heldIntervals() {
        String prefix = paths.held() + "/";
        Map<String, Held> openByPath = new HashMap<>();
        Map<String, Held> byKey = new LinkedHashMap<>();
        for (ZkTxnLog.Change c : changes) {
            if (!c.path().startsWith(prefix)) continue;
            String[] parts = c.path().substring(prefix.length()).split("/");
            if (parts.length != 2) continue;
            if (c.kind() == ZkTxnLog.Kind.CREATE || c.kind() == ZkTxnLog.Kind.SET) {
                HeldRecord r;
                try {
                    r = Json.read(c.data(), HeldRecord.class);
                } catch (RuntimeException e) {
                    continue;
                }
                if (r.module() == null || !modules.test(r.module())) continue;
                if (r.operatorHold()) continue; // an operator's hold: operatorHolds() reads it
                String key = parts[0] + "|" + parts[1] + "|" + r.window();
                Held was = openByPath.get(c.path());
                if (was != null && !was.window.equals(r.window())) {
                    // Another window's process wrote its own data into a node still there (Curator's PersistentNode
                    // sets the data of a node that exists): the node is that window's from now on, though it goes
                    // with the first one's session.
                    was.toMs = c.time();
                    takeovers.add(was.describe() + " -> node taken over by window " + r.window() + " (pid " + (r.by() == null ? "?" : r.by().pid())
                            + ", session 0x" + Long.toHexString(c.session()) + ") at " + Instant.ofEpochMilli(c.time()));
                }
                Held h = byKey.get(key);
                long pid = r.by() == null ? 0 : r.by().pid();
                if (h != null && h.toMs >= 0 && c.kind() == ZkTxnLog.Kind.CREATE) {
                    // Made again after it was gone: a recovery's or a resumed window's (the same hold), or a late one
                    // (decided once it is deleted, below)
                    Held again = new Held(parts[0], r.module(), parts[1], r.containerId(), r.window(), c.time(), pid, c.session(), c.zxid());
                    again.before = h;
                    byKey.put(key, again);
                    madeAgain.add(again);
                    h = again;
                }
                if (h == null) {
                    h = new Held(parts[0], r.module(), parts[1], r.containerId(), r.window(), c.time(), pid, c.session(), c.zxid());
                    byKey.put(key, h);
                    held.add(h);
                }
                h.pids.add(pid);
                if (c.kind() == ZkTxnLog.Kind.CREATE) h.creates++;
                h.toMs = -1;
                openByPath.put(c.path(), h);
            } else {
                Held h = openByPath.remove(c.path());
                if (h != null) h.toMs = c.time();
            }
        }
        for (Held again : madeAgain) {
            Held first = again.before;
            while (lateNodes.contains(first)) first = first.before;
            if (late(first, again)) {
                lateNodes.add(again);
            } else { // one hold from the first life to this one's end
                first.toMs = again.toMs;
                first.pids.addAll(again.pids);
                first.creates += again.creates;
            }
        }
        for (Held h : held) {
            if (h.toMs < 0) violations.add("held node never deleted: " + h.describe());
        }
    }

    /**
     * A window's held node made again after it was gone is late, and holds nothing, when it lived at most
     * {@link #LATE_NODE_MS} and nothing but dockerd itself stopped the container from the node's first life to the end
     * of this one: a create the window's process sent before it gave up ("nothing was stopped"), carried out by
     * Curator's retry on the process's next session and deleted by the node's close at once ({@code HeldNode}). A node
     * made again that lives on, or of a container stopped meanwhile, is a recovery's or a resumed window's: the same
     * hold, the gap between the lives included (the fence kept the host's other processes off it).
     */
    private boolean late(Held first, Held again) {
        if (again.toMs < 0 || again.toMs - again.fromMs > LATE_NODE_MS || first.containerId == null) return false;
        long from = first.fromMs * 1_000_000L, to = (again.toMs + 1) * 1_000_000L;
        for (Event ev : events.getOrDefault(first.host, List.of())) {
            long t = EngineEvents.time(ev);
            if (t < from || t > to || !first.containerId.equals(ev.getId())) continue;
            if (Set.of("stop", "kill", "die").contains(EngineEvents.action(ev)) && !engineOwn(first.host, t)) return false;
        }
        return true;
    }

    /**
     * Operator holds from the transaction log, and the rules of their nodes (SPEC.md "Operator holds"): an accepted
     * hold is never written over by anyone else's data, never changed but for its host's {@code confirmed} and
     * {@code stoppedAt}, and never deleted before its release or its {@code until}.
     */
    private void operatorHolds() {
        String prefix = paths.held() + "/";
        Map<String, OpHold> open = new HashMap<>();
        for (ZkTxnLog.Change c : changes) {
            if (!c.path().startsWith(prefix)) continue;
            String[] parts = c.path().substring(prefix.length()).split("/");
            if (parts.length != 2) continue;
            OpHold was = open.get(c.path());
            if (c.kind() == ZkTxnLog.Kind.DELETE) {
                if (was == null) continue;
                open.remove(c.path());
                was.toMs = c.time();
                boolean expired = was.hold.until() != null && c.time() >= was.hold.until().toEpochMilli() - 1_000;
                boolean released = releases.stream().anyMatch(r -> r.host().equals(was.host)
                        && (r.container().equals(was.container) || r.container().equals(Release.ALL) && was.hold.ofDrain())
                        && c.time() >= r.sentMs() - 1_000 && c.time() <= r.answeredMs() + 1_000);
                if (!expired && !released) {
                    violations.add(was.describe() + ": its node was deleted at " + Instant.ofEpochMilli(c.time()) + " (zxid 0x"
                            + Long.toHexString(c.zxid()) + ", session 0x" + Long.toHexString(c.session()) + "), neither released nor expired");
                }
                continue;
            }
            HeldRecord r;
            try {
                r = Json.read(c.data(), HeldRecord.class);
            } catch (RuntimeException e) {
                continue;
            }
            if (r.module() == null || !modules.test(r.module())) continue;
            if (!r.operatorHold()) {
                if (was != null) {
                    violations.add(was.describe() + ": its node was written over with window " + r.window() + "'s data at "
                            + Instant.ofEpochMilli(c.time()) + " (zxid 0x" + Long.toHexString(c.zxid()) + ", session 0x" + Long.toHexString(c.session()) + ")");
                    open.remove(c.path());
                    was.toMs = c.time();
                }
                continue;
            }
            if (c.kind() == ZkTxnLog.Kind.CREATE || was == null) {
                OpHold h = new OpHold(parts[0], parts[1], r.module(), c.time(), r.hold());
                if (r.hold().isConfirmed()) h.confirmedMs = c.time();
                holds.add(h);
                open.put(c.path(), h);
                continue;
            }
            HeldRecord.OperatorHold n = r.hold(), o = was.hold;
            if (!java.util.Objects.equals(n.by(), o.by()) || !java.util.Objects.equals(n.reason(), o.reason())
                    || !java.util.Objects.equals(n.since(), o.since()) || !java.util.Objects.equals(n.until(), o.until()) || n.stops() != o.stops()) {
                violations.add(was.describe() + ": its hold was changed at " + Instant.ofEpochMilli(c.time()) + " to " + new String(c.data(),
                        java.nio.charset.StandardCharsets.UTF_8));
            }
            if (n.isConfirmed() && was.confirmedMs < 0) was.confirmedMs = c.time();
            if (n.stoppedAt() != null && was.stoppedMs < 0) was.stoppedMs = c.time();
        }
    }

    /**
     * Of the {@code --stop} holds that ended, how the container came back (decision 33): the first start or create of
     * it after the hold's end is a {@code start} of the same container, or a {@code create} under its name (a recreate:
     * its spec changed meanwhile, as pushes in a history mostly do). A figure, not a judgement: which spec was desired
     * when is the apply's to know.
     *
     * @return {@code "started=N recreated=M"}
     */
    private String stopHoldsStartedAsTheyWere() {
        int started = 0, recreated = 0;
        for (OpHold h : holds) {
            if (h.stoppedMs < 0 || h.toMs < 0) continue;
            long from = h.toMs * 1_000_000L;
            for (Event e : events.getOrDefault(h.host, List.of())) {
                String name = EngineEvents.name(e), action = EngineEvents.action(e);
                if (EngineEvents.time(e) < from || name == null || !(name.equals(h.container) || name.startsWith(h.container + "."))) continue;
                if ("start".equals(action) && name.equals(h.container)) {
                    started++;
                    break;
                }
                if ("create".equals(action)) {
                    recreated++;
                    break;
                }
            }
        }
        return "started=" + started + " recreated=" + recreated;
    }

    /** @return true when an operator's hold was recorded on the container at {@code ms} */
    private boolean heldByOperatorAt(String host, String container, long ms) {
        return holds.stream().anyMatch(h -> h.host.equals(host) && h.container.equals(container) && h.fromMs <= ms && (h.toMs < 0 || h.toMs >= ms));
    }

    /** Freezes from the transaction log: each node's life, ended by its delete, a replacement, or its {@code until}. */
    private void freezes() {
        String prefix = paths.root() + "/freezes/";
        Map<String, long[]> open = new HashMap<>(); // path -> {from, until}
        Map<String, String> by = new HashMap<>();
        Map<String, io.mesh.wire.FreezeRecord> rules = new HashMap<>(); // path -> the recurring rule written last
        for (ZkTxnLog.Change c : changes) {
            if (!c.path().startsWith(prefix) || c.path().substring(prefix.length()).contains("/")) continue;
            String target = c.path().substring(prefix.length());
            long[] was = open.remove(c.path());
            if (was != null) frozen.add(new Frozen(target, was[0], Math.min(was[1], c.time()), by.get(c.path()), rules.get(c.path())));
            if (c.kind() == ZkTxnLog.Kind.DELETE) continue;
            io.mesh.wire.FreezeRecord f;
            try {
                f = Json.read(c.data(), io.mesh.wire.FreezeRecord.class);
            } catch (RuntimeException e) {
                continue;
            }
            if (!target.equals(io.mesh.wire.FreezeRecord.ALL) && !modules.test(target)) continue;
            open.put(c.path(), new long[] {c.time(), f.until() == null ? Long.MAX_VALUE : f.until().toEpochMilli()});
            by.put(c.path(), f.by());
            if (f.recurring()) rules.put(c.path(), f);
            else rules.remove(c.path());
        }
        open.forEach((p, v) -> frozen.add(new Frozen(p.substring(prefix.length()), v[0], v[1], by.get(p), rules.get(p))));
        // A recurring freeze (decision 37) is in force only in its spans: each cron time for its length, within the
        // node's life. Its spans are read from the rule here, not from the agents' ledger lines.
        List<Frozen> spans = new ArrayList<>();
        for (Frozen f : frozen) {
            io.mesh.wire.FreezeRecord rule = f.rule();
            if (rule == null) {
                spans.add(f);
                continue;
            }
            java.time.Duration length = rule.spanLength();
            Instant from = Instant.ofEpochMilli(f.fromMs()).minus(length);
            for (Instant s = rule.nextStart(from).orElse(null); s != null && s.toEpochMilli() < f.toMs(); s = rule.nextStart(s).orElse(null)) {
                long start = Math.max(s.toEpochMilli(), f.fromMs()), end = Math.min(s.plus(length).toEpochMilli(), f.toMs());
                if (end > start) spans.add(new Frozen(f.target(), start, end, f.by(), null));
            }
        }
        frozen.clear();
        frozen.addAll(spans);
    }

    /**
     * While a module is frozen no change of it begins (SPEC.md "Freezes"): no container of it is created (every change
     * of a container begins with its new container's create), past a grace for a change begun before the freeze was
     * written. Repairs (a start of what is there), put-backs and windows go on. From Docker's events alone, beside the
     * product's {@code changed-while-frozen} ({@link #productChecks}), which judges by the calls the ledger holds.
     */
    private void checkFrozen() {
        for (Frozen f : frozen) {
            long from = (f.fromMs() + FREEZE_GRACE_MS) * 1_000_000L;
            long to = (f.toMs() - 500) * 1_000_000L; // an agent's clock may read until a little early
            if (to <= from) continue;
            for (Map.Entry<String, List<Event>> e : events.entrySet()) {
                for (Event ev : e.getValue()) {
                    long t = EngineEvents.time(ev);
                    if (t <= from || t >= to || !"create".equals(EngineEvents.action(ev))) continue;
                    Map<String, String> a = EngineEvents.attributes(ev);
                    String module = a.get(Labels.MODULE);
                    if (module == null || a.containsKey(Labels.WINDOW)) continue;
                    if (!f.target().equals(module) && !f.target().equals(io.mesh.wire.FreezeRecord.ALL)) continue;
                    violations.add("changed-while-frozen: " + EngineEvents.name(ev) + " created on " + e.getKey() + " at " + EngineEvents.at(t)
                            + ", while " + f.target() + " was frozen by " + f.by() + " [" + Instant.ofEpochMilli(f.fromMs()) + " .. "
                            + Instant.ofEpochMilli(f.toMs()) + "]\n    " + EngineEvents.describe(ev));
                }
            }
        }
    }

    /**
     * SPEC's rules, by the product's checker ({@link io.mesh.wire.AuditChecker}) over each host's {@link OutsideLedger}:
     * a touch of a held container by anything but its own window (or an operator's hold's own {@code --stop}) is
     * {@code touched-while-held}, an apply's change of a frozen module is {@code changed-while-frozen}. A touch while
     * dockerd itself restarted is Docker's, not a violation. {@code outside-mesh} and {@code left-stopped} go to
     * {@link #findings}: Docker's restart policy is outside mesh by right, and the give-back's bound with the
     * faults counted in is {@link #checkHeld}'s. A host without a ledger fails the run ({@link OutsideLedger#calls}).
     */
    private void productChecks() {
        if (calls == null) return;
        Map<String, List<io.mesh.wire.LedgerEntry>> ledgers = OutsideLedger.all(this, calls);
        int judged = 0;
        for (Map.Entry<String, List<io.mesh.wire.LedgerEntry>> e : ledgers.entrySet()) {
            String host = e.getKey();

            io.mesh.wire.AuditReport r = io.mesh.wire.AuditChecker.check(host, e.getValue(), Instant.EPOCH, Instant.now(), null, Instant.now());
            for (io.mesh.wire.AuditReport.Violation v : r.violations()) {
                if (v.module() != null && !modules.test(v.module())) continue;
                long t = EngineEvents.nanos(v.at());
                boolean touch = v.kind() == io.mesh.wire.AuditViolationKind.TOUCHED_WHILE_HELD || v.kind() == io.mesh.wire.AuditViolationKind.OUTSIDE_MESH;
                String action = v.evidence() == null ? null : v.evidence().action();
                // dockerd itself, restarting, whatever call was under way then (a call of a process killed in it is
                // given two minutes by the checker: a kill by the restart may fall in it)
                if (touch && engineOwn(host, t, "start".equals(action))) continue;
                String line = v.kind().wire() + " on " + host + ": " + v.message() + "\n    evidence: " + describe(v.evidence());
                // The promise's kinds are judged; outside-mesh is Docker's restart policy's by right, and left-stopped's
                // bound under faults is the test's own (checkHeld's give-back)
                if (v.kind() == io.mesh.wire.AuditViolationKind.TOUCHED_WHILE_HELD
                        || v.kind() == io.mesh.wire.AuditViolationKind.CHANGED_WHILE_FROZEN) {
                    violations.add(line);
                    judged++;
                } else {
                    findings.add(line);
                }
            }
        }
        figures.put("product-checker-violations", judged);
        figures.put("product-checker-findings", findings.size());
    }

    private static String describe(io.mesh.wire.LedgerEntry e) {
        if (e == null) return "none";
        return e.kind().wire() + " " + e.action() + " of " + e.container() + " (" + (e.containerId() == null ? "?" : e.containerId()
                .substring(0, Math.min(12, e.containerId().length()))) + ") at " + e.at() + (e.cause() == null ? "" : " cause " + e.cause())
                + (e.window() == null ? "" : " window " + e.window());
    }

    /**
     * @return when a window's hold ended (epoch ms), or -1 while it has not: its node's delete, or the removal of its
     *         step if that came first (a recovered window's nodes, published again by the process that recovered it,
     *         are deleted in the background, after that process's apply went on with the module: design.md, "Crash
     *         recovery")
     */
    long heldEndMs(Held h) {
        Step step = steps.get(h.host + "|" + h.window);
        long destroyedMs = step == null || step.destroyed < 0 ? -1 : step.destroyed / 1_000_000L;
        if (destroyedMs > h.fromMs && (h.toMs < 0 || destroyedMs < h.toMs)) return destroyedMs + 1;
        return h.toMs;
    }

    /**
     * A window group's limit, fleet-wide (SPEC.md "Fleet-wide windows"): never more windows of the group's modules at
     * once than its limit, seen from every engine's events as their steps' runs (a window runs at least while its step
     * runs).
     */
    private void checkGroupLimit() {
        if (group.isEmpty()) return;
        List<long[]> edges = new ArrayList<>(); // {time, +1 | -1}
        List<Step> in = new ArrayList<>();
        for (Step st : steps.values()) {
            if (st.started < 0 || !group.contains(st.module)) continue;
            in.add(st);
            edges.add(new long[] {st.started, 1});
            edges.add(new long[] {st.died < 0 ? Long.MAX_VALUE : st.died, -1});
        }
        edges.sort((x, y) -> x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[1], y[1])); // an end before a start at one time
        int now = 0;
        for (long[] x : edges) {
            now += (int) x[1];
            groupMax = Math.max(groupMax, now);
            if (now > groupLimit && x[1] > 0) {
                long t = x[0];
                violations.add("window group of " + group + ": " + now + " windows' steps ran at once at " + EngineEvents.at(t) + " (limit " + groupLimit + "): "
                        + in.stream().filter(st -> st.started <= t && st.end() > t).map(st -> st.window + " of " + st.module + " on " + st.host
                        + " [" + EngineEvents.at(st.started) + " .. " + (st.died < 0 ? "?" : EngineEvents.at(st.died)) + "]").toList());
            }
        }
        checkBudget(in);
    }

    /**
     * How long before a window's step an operator's {@code --stop} of another host of the group must have been made for
     * the window to have seen it as it took its place: the window counts such hosts when it takes its lease, before its
     * stops (stop-timeouts) and its step's create.
     */
    static final long BUDGET_SLACK_MS = 15_000;

    /**
     * The one disruption budget (SPEC.md "The rest of the operator's stack"; decision 37 item 3): no window of the group
     * begins while its limit is taken by other hosts down for any cause, whether running windows (their steps) or
     * operator holds with {@code --stop} (a drain's among them) whose container is stopped. Holds from the transaction
     * log, steps from the engines' events. A hold stopped after the window took its place is the operator's word, not
     * a violation: only holds stopped {@link #BUDGET_SLACK_MS} before the step count.
     */
    private void checkBudget(List<Step> in) {
        for (Step st : in) {
            // by host: a host is down once, whatever the number of its causes (two held containers of one host, seed
            // -2234925440049306439, are one host of the budget)
            Map<String, List<String>> down = new TreeMap<>();
            for (Step o : in) {
                if (o != st && !o.host.equals(st.host) && o.started <= st.started && o.end() > st.started) {
                    down.computeIfAbsent(o.host, k -> new ArrayList<>()).add("window " + o.window);
                }
            }
            long at = st.started / 1_000_000L;
            for (OpHold h : holds) {
                if (!group.contains(h.module) || h.host.equals(st.host) || !h.hold.stops() || h.stoppedMs < 0) continue;
                if (h.stoppedMs > at - BUDGET_SLACK_MS || (h.toMs >= 0 && h.toMs < at + 1_000)) continue;
                down.computeIfAbsent(h.host, k -> new ArrayList<>()).add(h.describe());
            }
            budgetMax = Math.max(budgetMax, down.size() + 1);
            if (down.size() + 1 > groupLimit) {
                violations.add("disruption budget of " + group + ": window " + st.window + " of " + st.module + " on " + st.host + " began its step at "
                        + EngineEvents.at(st.started) + " while " + down.size() + " other host(s) of the group were down (limit " + groupLimit + "): " + down);
            }
        }
    }

    /**
     * A staged rollout's {@code max-parallel} (SPEC.md "Rollouts"), from the engines' events: a host applies the module
     * from the create of a container's replacement ({@code <name>.mesh-next}) to the last Docker event of that
     * recreate (the previous one removed, or put back); never more hosts at once than the limit. A host whose agent a
     * fault stopped or killed meanwhile is left out: its rollout slot is a lease of its session, and a dead or frozen
     * process's recreate is finished by its next agent, after the others went on. A recreate whose new container has
     * the spec of the one under the name ({@code mesh.spec-hash}) changes nothing of the rollout: a host the rollout
     * keeps on its previous revision repairs drift through the ordinary apply, outside the slots (decision 13, item 6),
     * such as a container dockerd's restart left exited.
     */
    private void checkRolloutParallel() {
        if (rolloutModule == null) return;
        List<long[]> spans = new ArrayList<>(); // {from, to, host index}
        List<String> hostNames = new ArrayList<>(events.keySet());
        for (int hi = 0; hi < hostNames.size(); hi++) {
            String host = hostNames.get(hi);
            Map<String, long[]> open = new HashMap<>(); // container -> {from, last}
            Map<String, String> specUnderName = new HashMap<>(); // container -> spec hash of the one under its name
            for (Event ev : events.get(host)) {
                Map<String, String> a = EngineEvents.attributes(ev);
                if (!rolloutModule.equals(a.get(Labels.MODULE)) || a.containsKey(Labels.WINDOW)) continue;
                String name = String.valueOf(EngineEvents.name(ev));
                String base = name.replaceFirst("\\.mesh-(next|prev)$", "");
                long t = EngineEvents.time(ev);
                String action = EngineEvents.action(ev);
                String spec = a.get(Labels.SPEC_HASH);
                if (name.equals(base) && spec != null) specUnderName.put(base, spec);
                long[] o = open.get(base);
                if ("create".equals(action) && name.endsWith(".mesh-next")) {
                    if (o != null) spans.add(new long[] {o[0], o[1], hi});
                    if (spec != null && spec.equals(specUnderName.get(base))) {
                        open.remove(base); // the same spec made again: drift repaired, no change of the rollout
                    } else {
                        open.put(base, new long[] {t, t});
                    }
                } else if (o != null) {
                    o[1] = t;
                    if ("destroy".equals(action) && name.endsWith(".mesh-prev")) { // the previous one removed: done
                        spans.add(new long[] {o[0], o[1], hi});
                        open.remove(base);
                    }
                }
            }
            for (long[] o : open.values()) spans.add(new long[] {o[0], o[1], hi});
        }
        // Merge each host's spans, leave out those an agent fault of the host overlaps, then count hosts at once.
        List<long[]> edges = new ArrayList<>();
        for (long[] sp : spans) {
            String host = hostNames.get((int) sp[2]);
            long fromMs = sp[0] / 1_000_000L, toMs = sp[1] / 1_000_000L;
            boolean faulted = faults.stream().anyMatch(f -> f.host > 0 && ("fleet-" + f.host).equals(host) && f.overlaps(fromMs - SESSION_MS, toMs)
                    && (f.kind.contains("agent") || f.kind.equals("restart-engine")));
            if (faulted) continue;
            edges.add(new long[] {sp[0], 1, sp[2]});
            edges.add(new long[] {sp[1] + 1, -1, sp[2]});
        }
        edges.sort((x, y) -> x[0] != y[0] ? Long.compare(x[0], y[0]) : Long.compare(x[1], y[1]));
        Map<Long, Integer> perHost = new HashMap<>();
        for (long[] x : edges) {
            perHost.merge(x[2], (int) x[1], Integer::sum);
            long hosts = perHost.values().stream().filter(n -> n > 0).count();
            rolloutMax = (int) Math.max(rolloutMax, hosts);
            if (hosts > rolloutParallel && x[1] > 0) {
                violations.add("rollout of " + rolloutModule + ": " + hosts + " hosts applied it at once at " + EngineEvents.at(x[0])
                        + " (max-parallel " + rolloutParallel + "): " + perHost.entrySet().stream().filter(e -> e.getValue() > 0)
                        .map(e -> hostNames.get(e.getKey().intValue())).toList());
            }
        }
    }

    /**
     * Secret values never leave the host (SPEC.md "Secrets"): none is in any znode the run wrote (desired state, reports,
     * held and window nodes, history) nor in any Docker event's attributes (the containers' labels).
     */
    private void checkSecrets() {
        if (secrets.isEmpty()) return;
        for (ZkTxnLog.Change c : changes) {
            if (c.data() == null) continue;
            String data = new String(c.data(), java.nio.charset.StandardCharsets.UTF_8);
            for (String v : secrets) {
                if (data.contains(v)) violations.add("a secret value is in ZooKeeper: " + c.kind() + " " + c.path() + " at " + Instant.ofEpochMilli(c.time()));
            }
        }
        for (Map.Entry<String, List<Event>> e : events.entrySet()) {
            for (Event ev : e.getValue()) {
                String attrs = String.valueOf(EngineEvents.attributes(ev));
                for (String v : secrets) {
                    if (attrs.contains(v)) violations.add("a secret value is in a Docker label on " + e.getKey() + ": " + EngineEvents.describe(ev));
                }
            }
        }
        figures.put("secret-values", secrets.size());
    }

    private void steps() {
        for (Map.Entry<String, List<Event>> e : events.entrySet()) {
            String host = e.getKey();
            for (Event ev : e.getValue()) {
                Map<String, String> a = EngineEvents.attributes(ev);
                String window = a.get(Labels.WINDOW);
                if (window == null) continue;
                Step s = steps.computeIfAbsent(host + "|" + window, k -> new Step(host, a.get(Labels.MODULE), window, ev.getId()));
                long t = EngineEvents.time(ev);
                switch (EngineEvents.action(ev)) {
                    case "create" -> s.created = t;
                    case "start" -> s.started = s.started < 0 ? t : s.started;
                    case "die" -> {
                        s.died = t;
                        s.exitCode = a.get("exitCode");
                    }
                    case "destroy" -> s.destroyed = t;
                    default -> { }
                }
            }
        }
        // A step that died while its engine was down: its die is lost with the old dockerd's events; it died before
        // the engine answered again (dockerd does not restart step containers).
        for (Step s : steps.values()) {
            if (s.started >= 0 && s.died < 0) {
                for (EngineEvents.Gap g : gaps.getOrDefault(s.host, List.of())) {
                    if (g.from() >= s.started) {
                        s.died = g.apiUp();
                        s.dieFromGap = true;
                        break;
                    }
                }
            }
        }
    }

    private void locks() {
        String prefix = paths.locks() + "/";
        Map<String, TreeMap<Long, Object[]>> live = new HashMap<>(); // lock -> seq -> {child, session, pid, purpose}
        Map<String, Object[]> holder = new HashMap<>();              // lock -> {seq, child, session, pid, purpose, from}
        for (ZkTxnLog.Change c : changes) {
            if (!c.path().startsWith(prefix)) continue;
            String[] parts = c.path().substring(prefix.length()).split("/");
            if (parts.length != 3 || !modules.test(parts[0])) continue;
            String lock = parts[0] + "/" + parts[1];
            String child = parts[2];
            long seq;
            try {
                seq = Long.parseLong(child.substring(child.length() - 10));
            } catch (RuntimeException e) {
                continue;
            }
            TreeMap<Long, Object[]> set = live.computeIfAbsent(lock, k -> new TreeMap<>());
            if (c.kind() == ZkTxnLog.Kind.CREATE) {
                long pid = 0;
                String purpose = "?";
                try {
                    LockHolder lh = Json.read(c.data(), LockHolder.class);
                    pid = lh.pid();
                    purpose = lh.purpose();
                } catch (RuntimeException ignored) {
                    // no holder data
                }
                if (set.containsKey(seq)) {
                    violations.add("lock " + lock + ": two live children with sequence " + seq + " (" + set.get(seq)[0] + ", " + child + ")");
                }
                set.put(seq, new Object[] {child, c.session(), pid, purpose});
            } else if (c.kind() == ZkTxnLog.Kind.DELETE) {
                Object[] gone = set.remove(seq);
                if (gone == null) continue;
                Object[] h = holder.get(lock);
                if (h != null && ((Long) h[0]) == seq) {
                    holdings.add(new Holding(lock, (String) h[1], (Long) h[2], (Long) h[3], (String) h[4], (Long) h[5], c.time(), c.bySessionEnd()));
                    holder.remove(lock);
                }
            }
            if (!holder.containsKey(lock) && !set.isEmpty()) {
                Map.Entry<Long, Object[]> low = set.firstEntry();
                Object[] v = low.getValue();
                holder.put(lock, new Object[] {low.getKey(), v[0], v[1], v[2], v[3], c.time()});
            } else if (holder.containsKey(lock) && !set.isEmpty() && set.firstKey() < (Long) holder.get(lock)[0]) {
                violations.add("lock " + lock + ": child " + child + " created below the holder " + holder.get(lock)[1]
                        + " at zxid 0x" + Long.toHexString(c.zxid()));
            }
        }
        for (Map.Entry<String, Object[]> h : holder.entrySet()) {
            Object[] v = h.getValue();
            holdings.add(new Holding(h.getKey(), (String) v[1], (Long) v[2], (Long) v[3], (String) v[4], (Long) v[5], Long.MAX_VALUE, false));
        }
        // At most one holder at a time, over the times both holders' sessions were live.
        Map<String, List<Holding>> byLock = new TreeMap<>();
        for (Holding h : holdings) byLock.computeIfAbsent(h.lock(), k -> new ArrayList<>()).add(h);
        for (List<Holding> hs : byLock.values()) {
            hs.sort(Comparator.comparingLong(Holding::fromMs));
            for (int i = 1; i < hs.size(); i++) {
                Holding a = hs.get(i - 1), b = hs.get(i);
                if (a.session() != b.session() && b.fromMs() < a.toMs()) {
                    violations.add("lock " + a.lock() + " held twice at once: " + a + " and " + b);
                }
            }
        }
    }

    /** The holding of a lock at a zxid's time, by the order of the log (the holder as of that moment). */
    private Holding holderAt(String lock, long timeMs, long session, long pid) {
        Holding best = null;
        for (Holding h : holdings) {
            if (!h.lock().equals(lock) || h.fromMs() > timeMs || h.toMs() < timeMs) continue;
            if (h.session() == session || h.pid() == pid) return h;
            best = h;
        }
        return best;
    }

    // -----------------------------------------------------------------------------------------------------------
    // Checks.

    /** Held containers: touched by nobody but their window while held; given back within the bound; running at the end. */
    private void checkHeld(Held h) {
        if (h.containerId == null) return;
        List<Event> all = events.getOrDefault(h.host, List.of());
        long from = h.fromMs * 1_000_000L;
        long to = h.toMs < 0 ? Long.MAX_VALUE : (h.toMs + 1) * 1_000_000L;
        Step step = steps.get(h.host + "|" + h.window);
        // The hold ends with the window's last Docker call, the removal of its step (after its containers were given
        // back), or with the node, whichever comes first: a recovered window's nodes, published again by the process
        // that recovered it, are deleted in the background, after that process's apply went on with the module
        // (design.md, "Crash recovery"); while ZooKeeper is away that can be long after.
        if (step != null && step.destroyed >= 0 && step.destroyed > from && step.destroyed < to) to = step.destroyed + 1;
        long s = step == null || step.started < 0 ? -1 : step.started;
        long e = step == null || step.started < 0 ? -1 : step.died;
        String what = h.describe() + (step == null ? "; no step container seen"
                : "; step " + (s < 0 ? "never started" : "ran " + EngineEvents.at(s) + " .. " + (e < 0 ? "?" : EngineEvents.at(e))
                + (step.dieFromGap ? " (its die lost in an engine restart: taken as the moment the engine answered again)" : "")));
        List<Event> mine = new ArrayList<>();
        long lastDie = -1;
        long firstStartInside = -1;
        for (Event ev : all) {
            long t = EngineEvents.time(ev);
            String name = EngineEvents.name(ev);
            String old = EngineEvents.attributes(ev).get("oldName");
            boolean ours = h.containerId != null && h.containerId.equals(ev.getId());
            boolean sameName = h.container.equals(name) || (name != null && name.startsWith(h.container + ".mesh-"))
                    || h.container.equals(stripSlash(old));
            if (!ours && !sameName) continue;
            if (EngineEvents.attributes(ev).containsKey(Labels.WINDOW)) continue;
            mine.add(ev);
            if (t <= from || t >= to) continue;
            String action = EngineEvents.action(ev);
            boolean engineOwn = engineOwn(h.host, t, action.equals("start"));
            switch (action) {
                case "create", "destroy", "rename" -> violations.add(what + ": " + action + " while held"
                        + evidence(all, h, ev));
                case "start" -> {
                    if (!ours) {
                        violations.add(what + ": another container named " + name + " started while held" + evidence(all, h, ev));
                    } else if (s >= 0 && (e < 0 || t < e)) {
                        violations.add(what + ": started " + (engineOwn ? "by dockerd itself as it restarted, " : "")
                                + "while its window's step could still run" + evidence(all, h, ev));
                    } else if (engineOwn && stoppedWithoutRestore(all, h, from, t)) {
                        // the window stopped it and had not put its restart policy back: its policy was to be 'no'
                        violations.add(what + ": started by dockerd itself as it restarted, while held and stopped, before its window "
                                + "put its restart policy back" + evidence(all, h, ev));
                    } else if (engineOwn) {
                        // dockerd starting it after its window put its policy back (a restart between that and the
                        // window's own start): the step is over, the window was about to start it
                    } else if (firstStartInside < 0) {
                        firstStartInside = t;
                    }
                    // A later start follows a stop: dockerd's as it restarted (the window, or its recovery, starts it
                    // again: a window never leaves its containers stopped), or anyone else's (reported as that stop).
                }
                case "stop", "kill" -> {
                    if (engineOwn) break;
                    boolean afterStep = s >= 0 && t > s;
                    boolean afterGiveBack = firstStartInside >= 0 && t > firstStartInside;
                    if (afterStep || afterGiveBack) {
                        violations.add(what + ": " + action + " while held, after its window's step started" + evidence(all, h, ev));
                    }
                }
                case "die" -> { if (ours && !engineOwn) lastDie = t; }
                default -> { }
            }
        }
        // Given back within the bound after the step ended (or, without a step, after it was stopped).
        if (lastDie < 0) return;              // never stopped inside: nothing to give back
        if (s >= 0 && e < 0) return;          // its step still runs: the end state says so
        long ended = s >= 0 ? e : lastDie;
        if (runningAt(mine, h, ended)) return; // already running again when its step ended: reported above if it was wrong
        long started = -1;
        for (Event ev : mine) {
            if (h.containerId.equals(ev.getId()) && "start".equals(EngineEvents.action(ev)) && EngineEvents.time(ev) > ended) {
                started = EngineEvents.time(ev);
                break;
            }
        }
        if (started < 0) {
            // Docker refused its start for good (its own log says so, after it was stopped and before the new one
            // started): only a new container under its name can run
            for (Event ev : mine) {
                long t = EngineEvents.time(ev);
                if (!h.containerId.equals(ev.getId()) && "start".equals(EngineEvents.action(ev)) && t > ended
                        && h.container.equals(EngineEvents.name(ev)) && refused(h.host, h.containerId, lastDie, t)) {
                    started = t;
                    replaced++;
                    break;
                }
            }
        }
        long bound = bound(h, ended / 1_000_000L);
        if (started < 0 && heldByOperatorAt(h.host, h.container, ended / 1_000_000L)) return; // kept stopped: the operator's
        if (started < 0) {
            violations.add(what + ": never started again after " + (s >= 0 ? "its step ended" : "it was stopped") + " at "
                    + EngineEvents.at(ended) + evidence(all, h, null));
        } else {
            long took = (started - ended) / 1_000_000L;
            giveBackMs.add(took);
            slowest.add(new long[] {took, held.indexOf(h), ended / 1_000_000L});
            // ZooKeeper up or not: a step that ended well inside a quorum loss gives its containers back before the
            // quorum is back, unless a fault of its own owner or engine delays it
            for (Nemesis.Fault q : faults) {
                if (!q.kind.equals("quorum-loss")) continue;
                long endedMs = ended / 1_000_000L, startedMs = started / 1_000_000L;
                boolean inside = endedMs > q.from && endedMs + ZK_WAIT_MS < q.back();
                boolean own = delaying(h, endedMs).stream().anyMatch(f -> !f.kind.equals("quorum-loss") && !f.kind.equals("kill-zk"));
                if (inside && !own && startedMs > q.back()) {
                    violations.add(what + ": its step ended at " + EngineEvents.at(ended) + " during the quorum loss #" + q.id
                            + " (quorum back at " + Instant.ofEpochMilli(q.back()) + "), and it was started again only at "
                            + EngineEvents.at(started) + ": the window waited for ZooKeeper" + evidence(all, h, null));
                }
            }
            if (took > bound) {
                violations.add(what + ": started again " + took + " ms after its step ended (bound " + bound + " ms, faults counted in: "
                        + delaying(h, ended / 1_000_000L).stream().map(f -> "#" + f.id + " " + f.kind).toList() + ")"
                        + evidence(all, h, null));
            }
        }
    }

    private static String stripSlash(String n) { return n != null && n.startsWith("/") ? n.substring(1) : n; }

    /** True when the container's own last start or die before {@code t} is a start. */
    private static boolean runningAt(List<Event> mine, Held h, long t) {
        String last = null;
        for (Event ev : mine) {
            if (EngineEvents.time(ev) >= t) break;
            String a = EngineEvents.action(ev);
            if (h.containerId.equals(ev.getId()) && (a.equals("start") || a.equals("die"))) last = a;
        }
        return "start".equals(last);
    }

    /**
     * True when the container was stopped inside its held interval (a {@code die} of its own after {@code from}, not
     * dockerd's as it shut down) and no {@code update} of it (its window putting its restart policy back) came between
     * that and {@code t}. A container its window did not {@code update} before stopping it had restart policy
     * {@code no} already: dockerd never starts it, and its window gives it back with no {@code update}, so a start
     * then is the window's (FleetHistoryIT seed -8000834034482580827: the window's own start 0.7 s after dockerd's
     * API answered again, inside the slack given to the end of a restart, was taken for dockerd's).
     */
    private boolean stoppedWithoutRestore(List<Event> all, Held h, long from, long t) {
        long stopped = -1;
        boolean policyChanged = false;
        for (Event ev : all) {
            long at = EngineEvents.time(ev);
            if (at >= t) break;
            if (at <= from || !h.containerId.equals(ev.getId())) continue;
            String a = EngineEvents.action(ev);
            if (a.equals("die") && !engineOwn(h.host, at)) stopped = at; // dockerd stopping it as it shuts down: not the hold
            else if (a.equals("update") && stopped < 0) policyChanged = true; // to 'no', before the stop
            else if (a.equals("update") && stopped >= 0) stopped = -1;
        }
        return policyChanged && stopped >= 0;
    }

    /**
     * True when {@code t} falls where dockerd itself acts on its containers during an engine restart: as it shuts
     * down (from the moment the nemesis began the restart to the end of the event stream: it stops its containers,
     * their events come before the stream ends; clients may still act then too), and as it starts (from the end of the
     * stream to the moment its API answered again: nobody else can act; its restart policies' starts are replayed once
     * the stream is back). A start is dockerd's own only in the second part. A stream gap without a restart counts as
     * a start.
     */
    private boolean engineOwn(String host, long t, boolean start) {
        for (long[] r : engineOwn.computeIfAbsent(host, this::restarts)) {
            if (t >= (start ? r[1] : r[0]) && t <= r[2]) return true;
        }
        return false;
    }

    private boolean engineOwn(String host, long t) { return engineOwn(host, t, false); }

    private final Map<String, List<long[]>> engineOwn = new HashMap<>();

    /** @return per engine restart: {restart began, stream ended, API answered again}, epoch nanoseconds */
    private List<long[]> restarts(String host) {
        List<long[]> out = new ArrayList<>();
        List<EngineEvents.Gap> gs = gaps.getOrDefault(host, List.of());
        Set<EngineEvents.Gap> used = new HashSet<>();
        for (Nemesis.Fault f : faults) {
            if (!f.kind.equals("restart-engine") || !("fleet-" + f.host).equals(host)) continue;
            long from = f.from * 1_000_000L, to = (f.to + 1_000) * 1_000_000L;
            long gapFrom = from, apiUp = to;
            for (EngineEvents.Gap g : gs) {
                if (g.from() >= from && g.from() <= to && !used.contains(g)) {
                    gapFrom = g.from();
                    apiUp = Math.max(to, g.apiUp());
                    used.add(g);
                    break;
                }
            }
            out.add(new long[] {from, gapFrom, apiUp});
        }
        for (EngineEvents.Gap g : gs) if (!used.contains(g)) out.add(new long[] {g.from(), g.from(), g.apiUp()});
        return out;
    }

    /**
     * The give-back bound of a window whose step ended at {@code endedMs}: {@link #GIVE_BACK_BOUND_MS}, plus the time of
     * each fault that legitimately delays it (its owner frozen; its owner killed, so that its host's agent recovers it
     * once the dead session's lock child is gone and its next apply runs, which needs ZooKeeper and the agent; its
     * engine restarting), counted until no more fault falls inside.
     */
    private long bound(Held h, long endedMs) {
        long bound = GIVE_BACK_BOUND_MS;
        for (Nemesis.Fault f : delaying(h, endedMs)) bound += extension(h, f);
        return bound;
    }

    /** @return true when the engine's log shows a start of the container refused for good between the two times (nanos) */
    private boolean refused(String host, String containerId, long fromNanos, long toNanos) {
        return refusedStarts.getOrDefault(host, List.of()).stream()
                .anyMatch(r -> r.id().equals(containerId) && r.nanos() >= fromNanos && r.nanos() <= toNanos);
    }

    private List<Nemesis.Fault> delaying(Held h, long endedMs) {
        List<Nemesis.Fault> in = new ArrayList<>();
        long deadline = endedMs + GIVE_BACK_BOUND_MS;
        boolean changed = true;
        boolean ownerKilled = faults.stream().anyMatch(f -> f.kind.startsWith("kill") && h.pids.contains(f.pid) && f.from >= h.fromMs);
        while (changed) {
            changed = false;
            for (Nemesis.Fault f : faults) {
                if (in.contains(f) || !f.overlaps(h.fromMs, deadline)) continue;
                boolean owner = f.pid > 0 && h.pids.contains(f.pid);
                boolean hostFault = f.host > 0 && ("fleet-" + f.host).equals(h.host);
                boolean relevant = owner
                        || (hostFault && f.kind.equals("restart-engine"))
                        || (ownerKilled && (hostFault || f.kind.equals("quorum-loss") || f.kind.equals("kill-zk")));
                if (!relevant) continue;
                in.add(f);
                deadline += extension(h, f);
                changed = true;
            }
        }
        return in;
    }

    private long extension(Held h, Nemesis.Fault f) {
        long d = f.millis();
        if (f.kind.startsWith("kill") && f.pid > 0 && h.pids.contains(f.pid)) d += SESSION_MS + RECONCILE_MS;
        return d + 2_000;
    }

    /** Steps of one module on one engine never run at once; nothing else of the module is touched while one runs. */
    private void checkSteps() {
        Map<String, List<Step>> byModule = new TreeMap<>();
        for (Step s : steps.values()) {
            if (s.started >= 0) byModule.computeIfAbsent(s.host + "|" + s.module, k -> new ArrayList<>()).add(s);
        }
        for (List<Step> ss : byModule.values()) {
            ss.sort(Comparator.comparingLong(x -> x.started));
            for (int i = 1; i < ss.size(); i++) {
                for (int j = 0; j < i; j++) {
                    Step a = ss.get(j), b = ss.get(i);
                    if (b.started < a.end()) {
                        violations.add("two windows' steps of " + a.module + " ran at once on " + a.host + ": " + a.window + " ["
                                + EngineEvents.at(a.started) + " .. " + (a.died < 0 ? "?" : EngineEvents.at(a.died)) + "] and " + b.window
                                + " [" + EngineEvents.at(b.started) + " .. " + (b.died < 0 ? "?" : EngineEvents.at(b.died)) + "]");
                    }
                }
            }
        }
        for (Step s : steps.values()) {
            if (s.started < 0) continue;
            if (s.died < 0) {
                if (s.destroyed < 0) continue; // still running at the end: the end state says so
                s.died = s.destroyed;
            }
            Set<String> heldIds = new HashSet<>();
            for (Held h : held) if (h.window.equals(s.window) && h.host.equals(s.host)) heldIds.add(h.containerId);
            List<Event> all = events.getOrDefault(s.host, List.of());
            for (Event ev : all) {
                long t = EngineEvents.time(ev);
                if (t <= s.started || t >= s.died) continue;
                Map<String, String> a = EngineEvents.attributes(ev);
                if (!s.module.equals(a.get(Labels.MODULE)) || s.id.equals(ev.getId()) || heldIds.contains(ev.getId())) continue;
                String action = EngineEvents.action(ev);
                if (!TOUCH.contains(action) || engineOwn(s.host, t, action.equals("start"))) continue;
                violations.add("window " + s.window + " of " + s.module + " on " + s.host + ": another hand on the module while its step ran ["
                        + EngineEvents.at(s.started) + " .. " + EngineEvents.at(s.died) + "]\n    " + EngineEvents.describe(ev));
            }
        }
    }

    /**
     * Nobody starts a container under a temporary name: mesh starts a new container only once it has its own name, and
     * an old one only once it has its name back. A start under {@code .mesh-prev} or {@code .mesh-next} is dockerd's
     * restart policy (or a stranger's hand) bringing back a leftover of an interrupted recreate, next to the one that
     * should run; one under {@code .mesh-failed} brings back a try that was not ready, kept stopped for its logs.
     */
    private void checkTemporaryNames() {
        for (Map.Entry<String, List<Event>> e : events.entrySet()) {
            for (Event ev : e.getValue()) {
                String name = EngineEvents.name(ev);
                if (name == null || !"start".equals(EngineEvents.action(ev))) continue;
                if (!name.endsWith(".mesh-prev") && !name.endsWith(".mesh-next") && !name.endsWith(".mesh-failed")) continue;
                long t = EngineEvents.time(ev);
                StringBuilder b = new StringBuilder(e.getKey() + ": " + name + " (" + ev.getId().substring(0, 12) + ") started under its temporary name"
                        + (engineOwn(e.getKey(), t, true) ? " by dockerd itself as it restarted" : "") + "; its history:");
                for (Event x : e.getValue()) if (ev.getId().equals(x.getId())) b.append("\n       ").append(x == ev ? ">> " : "   ").append(EngineEvents.describe(x));
                for (EngineEvents.Gap g : gaps.getOrDefault(e.getKey(), List.of())) {
                    if (g.from() <= t && g.resumed() + 5_000_000_000L >= t) b.append("\n    engine gap ").append(g);
                }
                violations.add(b.toString());
            }
        }
    }

    /**
     * A held container is touched by nobody but its holder, and a network's recreate disconnects and connects its
     * containers: no connect or disconnect of a container while a window's held node or an operator's hold names it
     * (decision 31; failure model row 106). The container of a network event is its id, as Docker gives it. Docker
     * itself disconnects a container as it stops and connects it as it starts ({@link #ofItsOwnStopOrStart}), and
     * dockerd restores its containers' networks as it restarts: those are not touches (the stop and the start are
     * judged as themselves).
     */
    private void checkNetworkTouches() {
        int seen = 0, ofStopsAndStarts = 0;
        for (Map.Entry<String, List<Event>> e : networkEvents.entrySet()) {
            String host = e.getKey();
            Map<String, String> names = new HashMap<>();
            Map<String, List<Event>> byContainer = new HashMap<>(); // in dockerd's time order, as recorded
            for (Event ev : events.getOrDefault(host, List.of())) {
                if (ev.getId() == null) continue;
                if (EngineEvents.name(ev) != null) names.putIfAbsent(ev.getId(), EngineEvents.name(ev));
                byContainer.computeIfAbsent(ev.getId(), k -> new ArrayList<>()).add(ev);
            }
            for (Event ev : e.getValue()) {
                String id = EngineEvents.attributes(ev).get("container");
                if (id == null) continue;
                seen++;
                long t = EngineEvents.time(ev);
                if (ofItsOwnStopOrStart(byContainer.getOrDefault(id, List.of()), "disconnect".equals(EngineEvents.action(ev)), t)
                        || engineOwn(host, t)) {
                    ofStopsAndStarts++;
                    continue;
                }
                long ms = t / 1_000_000L;
                String what = "network " + EngineEvents.action(ev) + " of " + (names.getOrDefault(id, id.substring(0, Math.min(12, id.length()))))
                        + " from " + EngineEvents.name(ev) + " at " + EngineEvents.at(EngineEvents.time(ev));
                for (Held h : held) {
                    if (h.host.equals(host) && id.equals(h.containerId) && ms >= h.fromMs && (h.toMs < 0 || ms <= h.toMs)) {
                        violations.add(what + " while held: " + h.describe());
                    }
                }
                String name = names.get(id);
                for (OpHold h : holds) {
                    if (name != null && h.inForceAt(host, name, ms)) violations.add(what + " while an operator held it: " + h.describe());
                }
            }
        }
        figures.put("network-connects-and-disconnects", seen);
        figures.put("network-events-of-stops-and-starts", ofStopsAndStarts);
    }

    /** Held nodes are published by the process that holds the module lock (or by that process after its own lapse). */
    private void checkPublishedUnderLock() {
        int lapsed = 0;
        for (Held h : held) {
            String lock = h.module + "/" + h.host;
            Holding at = holderAt(lock, h.fromMs, h.ownerSession, h.ownerPid);
            if (at != null && (at.session() == h.ownerSession || at.pid() == h.ownerPid)) continue;
            boolean ownLapse = holdings.stream().anyMatch(x -> x.lock().equals(lock) && x.pid() == h.ownerPid && x.lapsed() && x.toMs() <= h.fromMs + 1);
            if (ownLapse) {
                lapsed++;
                continue;
            }
            violations.add(h.describe() + ": its held node was published by pid " + h.ownerPid + " (session 0x" + Long.toHexString(h.ownerSession)
                    + ") while the module lock " + lock + " was held by " + (at == null ? "nobody" : at));
        }
        figures.put("held-published-after-own-lapse", lapsed);
    }

    /**
     * @return "n/m": of the m SIGSTOP faults, how many outlived the frozen process's ZooKeeper session (its session's
     *         close is in the log during the pause, or just after), which is what they are for
     */
    private String pausesPastSession() {
        Map<Long, Long> pidOfSession = new HashMap<>();
        java.util.regex.Pattern pid = java.util.regex.Pattern.compile("\"pid\":(\\d+)");
        for (ZkTxnLog.Change c : changes) {
            if (c.kind() != ZkTxnLog.Kind.CREATE || c.data() == null) continue;
            java.util.regex.Matcher m = pid.matcher(new String(c.data(), java.nio.charset.StandardCharsets.UTF_8));
            if (m.find()) pidOfSession.putIfAbsent(c.session(), Long.parseLong(m.group(1)));
        }
        int pauses = 0, past = 0;
        for (Nemesis.Fault f : faults) {
            if (!f.kind.startsWith("pause")) continue;
            pauses++;
            for (ZkTxnLog.Change c : changes) {
                if (c.bySessionEnd() && c.time() >= f.from && c.time() <= f.to + 3_000 && Long.valueOf(f.pid).equals(pidOfSession.get(c.session()))) {
                    past++;
                    break;
                }
            }
        }
        return past + "/" + pauses;
    }

    // -----------------------------------------------------------------------------------------------------------

    /** The held container's own events around its interval, and the faults of its time, as evidence lines. */
    private String evidence(List<Event> all, Held h, Event culprit) {
        StringBuilder b = new StringBuilder();
        long from = h.fromMs * 1_000_000L - 2_000_000_000L;
        long to = h.toMs < 0 ? Long.MAX_VALUE : (h.toMs + 2_000) * 1_000_000L;
        int n = 0;
        for (Event ev : all) {
            long t = EngineEvents.time(ev);
            if (t < from || t > to) continue;
            String name = EngineEvents.name(ev);
            boolean related = h.containerId.equals(ev.getId()) || (name != null && name.startsWith(h.container))
                    || h.window.equals(EngineEvents.attributes(ev).get(Labels.WINDOW));
            if (!related) continue;
            if (++n > 24) {
                b.append("\n    ...");
                break;
            }
            b.append("\n    ").append(ev == culprit ? ">> " : "   ").append(h.host).append(' ').append(EngineEvents.describe(ev));
        }
        for (EngineEvents.Gap g : gaps.getOrDefault(h.host, List.of())) {
            if (g.apiUp() >= from && g.from() <= to) b.append("\n    engine gap ").append(g);
        }
        for (Nemesis.Fault f : faults) {
            if (f.overlaps(h.fromMs - 20_000, h.toMs < 0 ? Long.MAX_VALUE : h.toMs + 2_000)) b.append("\n    fault ").append(f);
        }
        return b.toString();
    }
}
