package io.mesh.hold;

import io.mesh.curator.HeldRegistry;
import io.mesh.curator.ZkClock;
import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.IdleThreads;
import io.mesh.hooks.ContainerHooks;
import io.mesh.hooks.HookPhase;
import io.mesh.ledger.CallCause;
import io.mesh.ledger.Ledger;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.ModuleSpec;
import io.mesh.section.HostFence;
import io.mesh.section.ModuleSection;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ContainerAction;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.utils.ZKPaths;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * An agent's side of operator holds ({@code mesh hold}, SPEC.md "Operator holds"; decision 0015). Watches its host's
 * held nodes ({@code /mesh/held/<host>}, a {@link CuratorCache}) and, for each operator hold:
 * <ul>
 *   <li>at its {@code until}: deletes its node (versioned: {@link HeldRegistry#deleteExpired}) and asks for an apply of
 *       its module, so that the container reaches the desired state with no new push (an apply already treats an
 *       expired hold as absent, {@link HeldRegistry#inForce});</li>
 *   <li>when released (its node deleted): asks for an apply of its module at once;</li>
 *   <li>recorded but not confirmed: confirms it under the module lock and the host fence (a {@link ModuleSection},
 *       as an apply: {@link HoldConfirmation}), once no window of the module is left open on the host (an apply finishes
 *       that first, then confirms);</li>
 *   <li>with {@code stop}: then stops the container once, in the same section, and records when in the node
 *       ({@link HeldRegistry#markStopped}), so that a restarted agent does not stop it again; its restart policy becomes
 *       {@code no}, so that neither Docker nor a reboot starts it while held; the stop is remembered ({@link HoldStops}),
 *       so that the apply after the release starts the same container with its spec's policy (decision 33).</li>
 * </ul>
 * Obeying the hold is the apply's and the window's business: both read it through {@link MeshStore#held}.
 */
public final class OperatorHolds implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(OperatorHolds.class);
    /** Slice of the wait for the module lock and fence before a stop; the wait is retried while the hold stands. */
    private static final Duration LOCK_SLICE = Duration.ofSeconds(2);

    private final MeshStore store;
    private final ContainerRuntime docker;
    private final HostFence fences;
    private final String host;
    private final ProcessRef process;
    private final Consumer<String> requestApply;
    private final Consumer<String> released;
    private final Predicate<String> windowOpen;
    private final CuratorCache cache;
    private final ScheduledExecutorService timer;
    /** Stops run here, one at a time, off the cache's thread (they wait for locks and Docker). */
    private final ExecutorService stops;
    /** The expiry timer of each held node, by Docker name. */
    private final Map<String, ScheduledFuture<?>> expiries = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private volatile Ledger ledger = Ledger.NONE;
    /** Holds whose interval is closed in the ledger already: each closes once. */
    private final HoldClosings closings = new HoldClosings();
    private volatile HoldStops stopsMade;

    /**
     * @param l this process's ledger: the {@code --stop}'s calls (cause {@code hold}) and each hold's end are written
     *          there (decision 28)
     * @return this
     */
    public OperatorHolds recordTo(Ledger l) {
        this.ledger = l == null ? Ledger.NONE : l;
        return this;
    }

    /**
     * @param h runs a held container's {@code pre-stop} before the hold's {@code --stop} (decision 38), its output
     *          without the container's secrets; by default one that knows no secrets dir
     * @return this
     */
    public OperatorHolds runningHooksWith(ContainerHooks h) {
        this.hooks = h;
        return this;
    }

    /** Runs a held container's {@code pre-stop} before the hold's {@code --stop} (decision 38). */
    private volatile ContainerHooks hooks = new ContainerHooks(null);

    /**
     * @param s where a {@code --stop} is remembered, so that the apply after the release starts the same container
     *          (decision 33); none by default (the apply then recreates it)
     * @return this
     */
    public OperatorHolds rememberStopsIn(HoldStops s) {
        this.stopsMade = s;
        return this;
    }

    /** Where {@code hold.ended} of an expired hold goes (decision 34); none until set. */
    private volatile java.util.function.Consumer<io.mesh.wire.MeshEvent> events = e -> { };

    /**
     * @param out told {@code hold.ended} when this agent deleted a hold at its {@code until} (decision 34: the process
     *            where it happens writes it; a release's is the coordinator's)
     * @return this
     */
    public OperatorHolds eventsTo(java.util.function.Consumer<io.mesh.wire.MeshEvent> out) {
        this.events = out == null ? e -> { } : out;
        return this;
    }

    private void heldClose(HeldRecord h, String why) {
        ledger.write(LedgerEntry.held(LedgerKind.HELD_CLOSE, ledger.now(), h.module(), h.container(), h.containerId(),
                LedgerEntry.OPERATOR, null, null, h.hold().by(), why, h.hold().until()));
    }

    /**
     * @param store        ZooKeeper access
     * @param docker       the host's container runtime
     * @param fences       the host's fences (the journal's: shared by every mesh process on the host)
     * @param host         this host's id
     * @param process      this process, as its lock node names it
     * @param timer        where expiry timers run (the daemon's timer)
     * @param requestApply asks for an apply of a module soon
     * @param released     asks for an apply of a module one of whose holds ended (released or expired): the daemon
     *                     also ends the module's back-off, so that it tries at once
     * @param windowOpen   whether a window of a module is journalled open on this host (asked fenced): its recovery,
     *                     by an apply, comes before the confirmation
     */
    public OperatorHolds(MeshStore store, ContainerRuntime docker, HostFence fences, String host, ProcessRef process,
                         ScheduledExecutorService timer, Consumer<String> requestApply, Consumer<String> released,
                         Predicate<String> windowOpen) {
        this.store = store;
        this.docker = docker;
        this.fences = fences;
        this.host = host;
        this.process = process;
        this.timer = timer;
        this.requestApply = requestApply;
        this.released = released;
        this.windowOpen = windowOpen;
        this.cache = CuratorCache.build(store.client(), store.paths().held(host));
        this.stops = IdleThreads.serial("operator-holds-" + host); // no thread while nothing is to stop
    }

    /** Starts watching; the holds already there are met as created (so a restarted agent schedules their expiry). */
    public void start() {
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, after) -> {
                    replaced(before, after);
                    changed(after);
                })
                .forDeletes(this::deleted)
                .build());
        cache.start();
    }

    private HeldRecord record(ChildData node) {
        if (node == null || !isChild(node.getPath())) return null;
        HeldRecord h = node.getData() == null ? null : Json.readOrNull(node.getData(), HeldRecord.class);
        return h != null && h.operatorHold() ? h : null;
    }

    private boolean isChild(String path) {
        return ZKPaths.getPathAndNode(path).getPath().equals(store.paths().held(host));
    }

    private void changed(ChildData node) {
        HeldRecord h = record(node);
        if (h == null || closed) return;
        String container = ZKPaths.getNodeFromPath(node.getPath());
        ScheduledFuture<?> was = expiries.remove(container);
        if (was != null) was.cancel(false);
        if (h.hold().until() != null) {
            long ms = Math.max(0, Duration.between(ZkClock.earliest(), h.hold().until()).toMillis());
            try {
                expiries.put(container, timer.schedule(() -> expire(h), ms, TimeUnit.MILLISECONDS));
            } catch (RejectedExecutionException e) {
                return; // stopping
            }
        }
        boolean toStop = h.hold().stops() && h.hold().stoppedAt() == null;
        if ((!h.hold().isConfirmed() || toStop) && !h.expiredAt(ZkClock.earliest())) {
            try {
                stops.submit(() -> settle(h));
            } catch (RejectedExecutionException e) {
                // stopping: the next agent of the host confirms and stops it (confirmed and stoppedAt are still unset)
            }
        }
    }

    private void deleted(ChildData node) {
        HeldRecord h = record(node);
        if (h == null || closed) return;
        ScheduledFuture<?> was = expiries.remove(h.container());
        if (was != null) was.cancel(false);
        log.info("operator hold host={} container={} ended (by {}: {}); applying module {}", host, h.container(), h.hold().by(),
                h.hold().reason(), h.module());
        if (closings.close(h)) heldClose(h, "released");
        released.accept(h.module());
    }

    /**
     * A hold whose node now carries another hold (or a window's data) ended unseen: an agent paused past its session
     * meets a release and a new hold as one change when its cache is rebuilt. Its interval closes as released.
     */
    private void replaced(ChildData before, ChildData after) {
        HeldRecord was = record(before);
        if (was == null || closed || HoldClosings.same(was, record(after))) return;
        if (closings.close(was)) heldClose(was, "released");
    }

    /** At {@code until}: the node goes (versioned), and the module is applied whether or not this call deleted it. */
    private void expire(HeldRecord h) {
        if (closed) return;
        if (closings.close(h)) heldClose(h, "expired");
        try {
            if (HeldRegistry.deleteExpired(store.client(), store.paths(), host, h.container(), ZkClock.earliest())) {
                log.info("operator hold host={} container={} expired at {} (by {}: {}); its node is deleted", host, h.container(),
                        h.hold().until(), h.hold().by(), h.hold().reason());
                // Only the process whose versioned delete took the node says so: once per hold.
                events.accept(io.mesh.wire.MeshEvent.of(io.mesh.wire.EventType.HOLD_ENDED, io.mesh.wire.Times.now(), host, h.module())
                        .withContainer(h.container()).withBy(h.hold().by(), "expired (" + h.hold().reason() + ")").withUntil(h.hold().until()));
            }
        } catch (Exception e) {
            // The apply treats it as absent all the same; the next agent start or hold change deletes it.
            log.warn("operator hold host={} container={} expired; its node was not deleted: {}", host, h.container(), e.toString());
        }
        released.accept(h.module());
    }

    /**
     * Confirms a hold and, with {@code stop}, stops its container once, under the module lock and the host fence, while
     * the hold stands as read. Retries the lock while it is busy (an apply or a window of the module), and defers to an
     * apply while a window of the module is journalled open (the apply gives that window's containers back, keeping
     * this one stopped, then confirms).
     */
    private void settle(HeldRecord h) {
        while (!closed) {
            ModuleSection section = new ModuleSection(store, fences, h.module(), host, process, LockHolder.APPLY)
                    .recordTo(ledger, CallCause.HOLD);
            try {
                if (!section.lock(LOCK_SLICE) || !section.fence(LOCK_SLICE)) continue;
                // Read again holding the lock: released, replaced or changed meanwhile means a newer event settles it.
                HeldRecord now = store.held(host).get(h.container());
                if (now == null || !now.equals(h)) return;
                if (windowOpen.test(h.module())) {
                    section.close();
                    requestApply.accept(h.module());
                    Thread.sleep(LOCK_SLICE.toMillis());
                    continue;
                }
                now = HoldConfirmation.confirm(store, section, host, Map.of(h.container(), now)).get(h.container());
                if (!now.hold().stops() || now.hold().stoppedAt() != null) return;
                ContainerRuntime guarded = section.guarded(docker);
                String id = guarded.idByName(h.container());
                if (id != null) {
                    // Its pre-stop first (decision 38): whatever it says, the hold's stop is made.
                    if (guarded.isRunning(id)) hooks.run(guarded, HookPhase.PRE_STOP, h.container(), id, containerSpec(h), false);
                    guarded.updateRestartPolicy(id, "no"); // not started again by Docker while held
                    remember(h, id, guarded); // before the stop: a process killed in a long stop-timeout still told it
                    guarded.stop(id, stopTimeout(h));
                }
                section.unfence();
                boolean marked = HeldRegistry.markStopped(store.client(), store.paths(), now, Times.now());
                log.info("operator hold host={} container={} by {}: {} ({}){}", host, h.container(), h.hold().by(), h.hold().reason(),
                        id == null ? "no such container: nothing to stop" : "stopped " + id,
                        marked ? "" : "; the hold changed meanwhile, its node is left as it is");
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (Exception e) {
                log.warn("operator hold host={} container={}: not settled ({}); trying again in {}s", host, h.container(), e.toString(),
                        LOCK_SLICE.toSeconds());
                try {
                    Thread.sleep(LOCK_SLICE.toMillis());
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            } finally {
                section.close();
            }
        }
    }

    /**
     * Remembers the stop about to be made (decision 33), under the section, before the stop is sent: a stop's
     * {@code StartedAt} is the container's last start, which the stop does not change, and a process killed while a
     * long stop-timeout runs has told it already. Only a running container is the hold's to stop: one that had exited
     * (crashed) before is not remembered, and the apply after the release recreates it as SPEC.md "Apply" says. A
     * failure to remember is logged, and the apply after the release then recreates the container, as it did before.
     */
    private void remember(HeldRecord h, String id, ContainerRuntime guarded) {
        HoldStops s = stopsMade;
        if (s == null) return;
        try {
            io.mesh.docker.RunState state = guarded.runState(id);
            if (!state.running()) return;
            s.record(h.module(), h.container(), new HoldStops.Stop(id, state.startedAt(), h.hold().by(), h.hold().reason(),
                    Times.now()));
        } catch (Exception e) {
            log.warn("operator hold host={} container={}: its stop is not remembered ({}): the apply after the release recreates it",
                    host, h.container(), e.toString());
        }
    }

    /** @return the held container's desired spec, or {@code null} when it cannot be read */
    private ContainerSpec containerSpec(HeldRecord h) {
        try {
            DesiredRecord d = store.desired(h.module());
            String prefix = h.module() + "-";
            return d == null || d.spec() == null || !h.container().startsWith(prefix) ? null
                    : d.spec().containers().get(h.container().substring(prefix.length()));
        } catch (Exception e) {
            return null;
        }
    }

    /** @return the container's stop grace from the module's desired spec, else Docker's 10 s */
    private int stopTimeout(HeldRecord h) {
        try {
            DesiredRecord d = store.desired(h.module());
            String prefix = h.module() + "-";
            ContainerSpec cs = d == null || d.spec() == null || !h.container().startsWith(prefix) ? null
                    : d.spec().containers().get(h.container().substring(prefix.length()));
            return Optional.ofNullable(cs).map(ContainerSpec::stopTimeoutSeconds).orElse(10);
        } catch (Exception e) {
            return 10;
        }
    }

    /**
     * Whether a window must be skipped: one of its {@code while-stopped} containers is held by an operator (SPEC.md,
     * "Fleet-wide windows": {@code skipped}, {@code held by operator}). A window never stops a container an operator
     * holds, nor starts one an operator stopped.
     *
     * @param held        this host's held nodes in force ({@link MeshStore#held})
     * @param spec        the module's desired spec
     * @param whileStopped the schedule's {@code while-stopped} names
     * @return why the window is skipped, starting {@code held by operator}; {@code null} when it may run
     */
    public static String skipWindow(Map<String, HeldRecord> held, ModuleSpec spec, List<String> whileStopped) {
        List<String> why = new ArrayList<>();
        for (String name : whileStopped) {
            HeldRecord h = held.get(spec.dockerName(name));
            if (h != null && h.operatorHold()) why.add(h.container() + " (by " + h.hold().by() + ": " + h.hold().reason() + ", until "
                    + (h.hold().until() == null ? "released" : h.hold().until()) + ")");
        }
        return why.isEmpty() ? null : "held by operator: " + String.join(", ", why) + "; nothing was stopped";
    }

    /**
     * Whether a report is deferred by operator holds alone: no window, no rollout, and every {@code held} container held
     * by an operator. Such an apply is not retried on a back-off: this class applies the module when a hold ends
     * (release or {@code until}), and the reconcile interval still runs.
     *
     * @param r an apply's report, may be {@code null}
     * @return true for such a report
     */
    public static boolean deferredByOperatorOnly(ApplyReport r) {
        if (r == null || r.outcome() != ApplyOutcome.DEFERRED || r.window() != null || r.rollout() != null) return false;
        List<ApplyReport.ContainerResult> held = r.containers().stream().filter(c -> c.action() == ContainerAction.HELD).toList();
        return !held.isEmpty() && held.stream().allMatch(c -> !c.reasons().isEmpty() && c.reasons().get(0).startsWith(HeldRecord.OPERATOR_REASON));
    }

    /** Stops watching; a stop under way is interrupted between Docker calls. Idempotent. */
    @Override
    public void close() {
        closed = true;
        cache.close();
        expiries.values().forEach(f -> f.cancel(false));
        stops.shutdownNow();
    }
}
