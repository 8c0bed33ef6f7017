package io.mesh.agent;

import io.mesh.apply.Applier;
import io.mesh.apply.DryRun;
import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.IdleThreads;
import io.mesh.hold.HoldStops;
import io.mesh.hold.HostDrains;
import io.mesh.hooks.ContainerHooks;
import io.mesh.hold.OperatorHolds;
import io.mesh.rollout.RolloutWakes;
import io.mesh.section.HostFence;
import io.mesh.window.HostContext;
import io.mesh.docker.DockerEngine;
import io.mesh.ledger.LedgerFiles;
import io.mesh.ledger.LedgerKeeper;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.LedgerKind;
import io.mesh.window.WindowJournal;
import io.mesh.window.WindowRecovery;
import io.mesh.window.WindowRunner;
import io.mesh.window.WindowScheduler;
import io.mesh.wire.AgentRecord;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.freeze.FreezeWakes;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.EventType;
import io.mesh.wire.MeshEvent;
import io.mesh.curator.EventOutbox;
import io.mesh.wire.WindowResult;
import io.mesh.zk.MeshStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.utils.ZKPaths;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

/**
 * The agent daemon ({@code mesh-agent run}): keeps this host's modules at their desired state.
 *
 * <ul>
 *   <li>{@code /mesh/agents/<host>}: an ephemeral node while the daemon runs ({@link AgentNode}); a daemon does not
 *       start on a host that has a live agent ({@link #claimHost()});</li>
 *   <li>a {@link CuratorCache} on {@code /mesh/desired}: each change requests an apply of that module and re-arms
 *       its schedules; once loaded, applies read desired nodes from it ({@link MeshStore#readDesiredFrom});</li>
 *   <li>{@link FreezeWakes} on {@code /mesh/freezes}: a freeze that goes or changes asks for the module's apply
 *       again (every module's, for {@code _all}), and at its {@code until}, so that the newest revision lands when
 *       the freeze ends with no new push (docs/decisions/0014-freezes.md);</li>
 *   <li>{@link HostDrains} on {@code /mesh/drains/<host>}: while the host is drained, every container of its modules
 *       carries an operator's hold placed from the drain, ended with it (decision 37);</li>
 *   <li>{@link RolloutWakes} on {@code /mesh/rollouts}: a rollout's move, a freed slot or this host's turn asks for the
 *       module's apply again (docs/decisions/0013-rollouts.md);</li>
 *   <li>applies of each module one at a time ({@link ModuleWorker}), on a thread of their own while they run and none
 *       while idle: requests coalesce, applies of a module never overlap in this process, and a module waiting on a
 *       window does not hold up the others;</li>
 *   <li>every {@code reconcileInterval}, and whenever ZooKeeper answers again after a disconnection, every module is
 *       requested again (drift: a container that died, was removed by hand ...; applies that failed meanwhile);</li>
 *   <li>every {@link #DEAD_WINDOW_LOOK}, a look at the host's window journal ({@code <state-dir>/windows}, no
 *       ZooKeeper call): a window whose process died, or that is journalled open while nobody holds its module's fence,
 *       has its module applied at once, which gives its containers back as soon as it gets the lock
 *       ({@link #lookForDeadWindows});</li>
 *   <li>cron and requested windows ({@link WindowScheduler}, {@link WindowRequests}) run each on a thread of their own,
 *       through {@link WindowRunner}: windows of one module wait for each other at the module lock, visibly;</li>
 *   <li>plans ({@code mesh push --plan}) of this host are answered read-only by {@link PlanRequests}.</li>
 * </ul>
 */
public final class AgentDaemon implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AgentDaemon.class);
    /** First retry of a failed apply, in ms. */
    private static final long RETRY_FIRST_MS = 2_000;
    /** How long after a back-off's next try the retry asks, so that the apply finds it due. */
    private static final long BACKOFF_MARGIN_MS = 50;
    /**
     * At shutdown, how long the daemon waits for its windows to give their containers back: each has its step killed
     * at once and starts its containers again (each start retried for 90 s while dockerd comes back), waiting for their
     * readiness at most 10 s; that takes seconds. Past this budget it exits anyway, leaving the window's journal to the
     * next mesh process of the host: before the unit's {@code TimeoutStopSec} (6 min) would SIGKILL it
     * (docs/decisions/0026-agent-stop.md).
     */
    static final Duration SHUTDOWN_BUDGET = Duration.ofMinutes(5);
    /**
     * How often the daemon looks at the host's window journal for a window that is not running any more
     * ({@link #lookForDeadWindows}): a directory listing, at rest.
     */
    static final Duration DEAD_WINDOW_LOOK = Duration.ofSeconds(1);
    /** At shutdown, how often a window still running is mentioned again. */
    private static final Duration SHUTDOWN_REMINDER = Duration.ofSeconds(30);

    private final AgentConfig config;
    private final MeshStore store;
    private final Applier applier;
    private final WindowRunner windows;
    private final WindowJournal journal;
    /** The host fences beside the journal: a probe tells a journalled window that is not running. */
    private final HostFence fences;
    /** By module: the journalled window whose module this daemon asked to apply because it was not running. */
    private final Map<String, String> deadWindowsAsked = new ConcurrentHashMap<>();
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final Map<String, ModuleWorker> workers = new ConcurrentHashMap<>();
    /** The apply threads: one per module applying now, none kept while idle ({@link ModuleWorker}). */
    private final ExecutorService applyThreads = IdleThreads.onDemand("apply");
    /** The window threads: one per window running now, none kept while idle. */
    private final ExecutorService windowThreads = IdleThreads.onDemand("window");
    /** The windows the window threads run now (cron or requested), each by a key of its own: what a shutdown waits for. */
    private final Map<Object, RunningWindow> windowsRunning = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;
    private final WindowScheduler scheduler;
    private final CuratorCache cache;
    /** {@code /mesh/rollouts}: a move, a freed slot or this host's turn asks its apply of the module again (decision 13). */
    private final RolloutWakes rollouts;
    /** {@code /mesh/freezes}: a freeze that changes or ends asks this host's apply of the module again (decision 14). */
    private final FreezeWakes freezes;
    private final AgentNode agentNode;
    private final PlanRequests plans;
    /** Audits of this host ({@code mesh audit}, {@code mesh why}): answered from its ledger, if it keeps one (decision 28). */
    private final AuditRequests audits;
    /** Operator holds of this host: their expiry, release and {@code --stop} (decision 0015). */
    private final OperatorHolds holds;
    /** Places the holds of this host's drain, and ends them with it (decision 37). */
    private final HostDrains drains;
    private volatile Runnable onHostTaken = () -> { };
    /** How often the host's event spool is written to ZooKeeper, when it holds any (decision 34). */
    public static final Duration EVENT_SPOOL_DRAIN = Duration.ofSeconds(15);
    /** This host's outbox for webhooks (decision 34): expired holds and audit violations; windows post their own. */
    private final EventOutbox events;
    /** The host's ledger as this process keeps it: its writer, the engine's events, pruning and the audit (decision 28). */
    private final LedgerKeeper ledger;

    /**
     * @param config  the agent's configuration
     * @param client  a started Curator client (the caller closes it after this daemon)
     * @param docker  the local container runtime, a {@link io.mesh.docker.DockerEngine} (the caller closes it after this daemon)
     * @param process this process, as lock, window and held nodes name it
     */
    public AgentDaemon(AgentConfig config, CuratorFramework client, ContainerRuntime docker, ProcessRef process) {
        this.config = config;
        this.store = new MeshStore(client, config.paths());
        this.journal = new WindowJournal(config.stateDir());
        this.fences = journal.fences();
        this.events = new EventOutbox(client, config.paths(), config.host()).spoolIn(EventOutbox.spoolOf(config.stateDir()));
        this.ledger = new LedgerKeeper(config.host(), config.stateDir(), docker instanceof DockerEngine d ? d.events() : null,
                LedgerFiles.MAX_AGE, LedgerFiles.MAX_BYTES);
        HostContext here = new HostContext(store, docker, config.host(), process, journal, config.policy(), config.secrets(), ledger.ledger());
        this.applier = new Applier(here, config.applyLockWait());
        this.windows = new WindowRunner(here);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> thread(r, "mesh-timer"));
        this.scheduler = new WindowScheduler(timer, this::fireWindow, Clock.systemUTC(), config.stateDir(),
                WindowScheduler.MAX_SLEEP);
        this.cache = CuratorCache.build(client, config.paths().desired());
        this.rollouts = new RolloutWakes(client, config.paths(), config.host(), timer, workers::containsKey,
                module -> { if (!stopping.get()) worker(module).request(); });
        applier.readRolloutsFrom(rollouts::cached);
        applier.wakeOnRolloutSlotLeases(rollouts::slotLeasesChanged);
        applier.wakeOnRolloutGate(rollouts::gateBlocked);
        this.freezes = new FreezeWakes(client, config.paths(), timer, ledger.ledger(), stopping::get, workers::keySet,
                this::requestApply, applier::tryAgainNow, this::reconcileAll);
        AgentRecord me = new AgentRecord(config.host(), AgentConfig.VERSION, process.pid(), Times.now());
        this.agentNode = new AgentNode(client, config.paths().agent(config.host()), me, () -> onHostTaken.run());
        this.plans = new PlanRequests(client, config.paths(), config.host(), process,
                new DryRun(store, docker, config.host(), here.policy(), here.secrets(), new HoldStops(config.stateDir())));
        // mesh audit reads this host's ledger, every process's files under --state-dir (decision 28)
        this.audits = new AuditRequests(client, config.paths(), config.host(), ledger.files(), Clock.systemUTC());
        this.holds = new OperatorHolds(store, docker, journal.fences(), config.host(), process, timer, this::requestApply,
                module -> { // a hold released or expired ends the module's back-off: it tries at once
                    applier.tryAgainNow(module);
                    requestApply(module);
                },
                module -> WindowRecovery.open(journal, docker, module).isPresent()).recordTo(ledger.ledger())
                .rememberStopsIn(new HoldStops(config.stateDir())).runningHooksWith(new ContainerHooks(here.secrets()))
                .eventsTo(events::post);
        // audit.violation for webhooks (decision 34): each new violation of the continuous audit, as it is logged
        ledger.onEachViolation(v -> events.post(MeshEvent.of(EventType.AUDIT_VIOLATION, Times.now(), config.host(), v.module())
                .withContainer(v.container()).withBy(null, v.kind().wire() + " at " + v.at() + ": " + v.message())));
        this.drains = new HostDrains(store, config.host(), process, timer, workers::keySet,
                module -> WindowRecovery.open(journal, docker, module).isPresent());
    }

    /**
     * @param opening an operator hold's, a window's or a freeze's opening the ledger shows open
     * @return whether it is still in force, as ZooKeeper says now (the ledger's reconciliation at start); a window's,
     *         while its journal entry is open (its recovery closes it) or its held node is there (its process lives)
     */
    private boolean stillInForce(LedgerEntry opening) {
        try {
            if (opening.kind() == LedgerKind.HELD_OPEN && LedgerEntry.WINDOW.equals(opening.holder())) {
                var open = journal.read(opening.module());
                if (open.isPresent() && java.util.Objects.equals(open.get().window(), opening.window())) return true;
                HeldRecord h = store.held(config.host()).get(opening.container());
                return h != null && !h.operatorHold() && java.util.Objects.equals(h.window(), opening.window());
            }
            if (opening.kind() == LedgerKind.FREEZE_OPEN) return freezes.inForce(opening.module());
            HeldRecord h = store.held(config.host()).get(opening.container());
            // The same hold, not another one the same operator placed meanwhile: by, reason and until (the line has no since)
            return h != null && h.operatorHold() && java.util.Objects.equals(h.hold().by(), opening.by())
                    && java.util.Objects.equals(h.hold().reason(), opening.reason()) && java.util.Objects.equals(h.hold().until(), opening.until());
        } catch (Exception e) {
            throw new IllegalStateException("ZooKeeper did not answer: " + e.getMessage(), e);
        }
    }

    /** @return the host's ledger as this daemon keeps it (decision 28) */
    public LedgerKeeper ledger() { return ledger; }

    /**
     * Sets the ledger's retention; before {@link #start()}.
     *
     * @param maxAge   {@code --ledger-max-age}
     * @param maxBytes {@code --ledger-max-size}
     */
    public void ledgerRetention(Duration maxAge, long maxBytes) { ledger.retention(maxAge, maxBytes); }

    /**
     * @return the daemon's one timer thread (reconcile, retries, thaws, hold expiries, cron): others schedule here too,
     *         so that an agent at rest has one timer thread; a task that waits on ZooKeeper or Docker hands its work to
     *         another thread (it would delay the others). Shut down by {@link #close()}.
     */
    ScheduledExecutorService timer() { return timer; }

    /**
     * Gives the audits of this host ({@code mesh audit}, {@code mesh why}) another ledger than the daemon's own (tests);
     * with {@code null}, each is answered {@code failed} with "no ledger" (decision 28).
     *
     * @param ledger this host's ledger, or {@code null}
     */
    public void ledger(io.mesh.ledger.LedgerSource ledger) {
        audits.ledger(ledger);
    }

    /**
     * Makes this process the agent of its host ({@code /mesh/agents/<host>}), before anything else is written: refuses
     * when another live agent has the host. Waits up to the ZooKeeper session timeout (plus
     * {@link AgentNode#EXPIRY_MARGIN}) when the node belongs to a process that does not run on this machine (an agent
     * killed with {@code kill -9} whose session has not expired yet). {@link #start()} calls it when nobody did.
     *
     * @throws AgentNode.HostTakenException naming the agent that has the host (pid, startedAt): nothing was written
     * @throws Exception                    ZooKeeper's errors
     */
    public void claimHost() throws Exception {
        agentNode.claim();
    }

    /**
     * @param r what to do when another agent takes this host while this one had lost its ZooKeeper session (logged
     *          either way): {@code mesh-agent run} exits
     */
    public void onHostTaken(Runnable r) {
        this.onHostTaken = r;
    }

    /**
     * Starts watching, applying and scheduling; returns at once, once the host is claimed ({@link #claimHost()}).
     *
     * @throws AgentNode.HostTakenException when another live agent has the host
     */
    public void start() {
        if (!agentNode.claimed()) {
            try {
                claimHost();
            } catch (AgentNode.HostTakenException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("cannot claim " + config.paths().agent(config.host()) + ": " + e.getMessage(), e);
            }
        }
        ledger.start(); // events followed before anything is applied: the ledger sees this agent's first calls' events
        ledger.closeWhatEndedWhileDown(this::stillInForce);
        cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, after) -> desiredChanged(after))
                .forDeletes(this::desiredDeleted)
                .forInitialized(() -> store.readDesiredFrom(cache)) // applies read desired nodes from memory from now on
                .build());
        cache.start();
        rollouts.start();
        freezes.start();
        holds.start(); // a release or an expiry applies the module at once; --stop stops it once
        drains.start(); // a drain's holds, placed by this agent: OperatorHolds confirms and stops them
        // Windows whose process died (a crash, a reboot) are finished before anything else is applied to their
        // module: the module's first apply does it, holding the lock (WindowRecovery).
        for (String module : journal.modules()) worker(module).request();
        long every = config.reconcileInterval().toMillis();
        timer.scheduleWithFixedDelay(this::reconcileAll, every, every, TimeUnit.MILLISECONDS);
        long look = DEAD_WINDOW_LOOK.toMillis();
        timer.scheduleWithFixedDelay(this::lookForDeadWindows, look, look, TimeUnit.MILLISECONDS);
        // Events this host's processes kept while ZooKeeper did not answer (decision 34), a `mesh-agent window`'s too:
        // written at start and every EVENT_SPOOL_DRAIN (on the outbox's thread, never this one's).
        timer.scheduleWithFixedDelay(events::drainSoon, 0, EVENT_SPOOL_DRAIN.toMillis(), TimeUnit.MILLISECONDS);
        store.client().getConnectionStateListenable().addListener(reconnected);
        plans.start(); // mesh push --plan: answered from here, read only (PlanRequests)
        audits.start(); // mesh audit: the ledger's slice, read only (AuditRequests)
        log.info("agent host={} zk-root={} reconcile-interval={}s apply-lock-wait={}ms policy=[{}] secrets-dir={} started", config.host(),
                config.paths().root(), config.reconcileInterval().toSeconds(), config.applyLockWait().toMillis(), config.policy(),
                config.secretsDir());
    }

    /**
     * ZooKeeper answers again (the same session, or a new one after the old expired): every module is requested at
     * once, so that what failed or was missed meanwhile converges now, not at the next reconcile or failed-apply retry
     * (their back-off grows up to the reconcile interval). A module with nothing to do costs one container list
     * (decision 0004).
     */
    private final ConnectionStateListener reconnected = this::connectionChanged;

    private void connectionChanged(CuratorFramework client, ConnectionState state) {
        if (state == ConnectionState.RECONNECTED && !stopping.get()) {
            log.info("agent host={}: ZooKeeper answers again, reconciling every module", config.host());
            reconcileAll();
        }
    }

    private void desiredChanged(ChildData node) {
        String module = moduleOf(node.getPath());
        if (module == null || stopping.get()) return;
        try {
            DesiredRecord d = store.parseDesired(node.getPath(), module, node.getData());
            scheduler.update(module, d.spec().runsOn(config.host()) ? d.spec() : null);
        } catch (MeshStore.InvalidNodeException e) {
            scheduler.update(module, null); // the apply reports the problem
        }
        worker(module).request();
    }


    /** @return this agent's watch of the rollouts (tests look through it) */
    RolloutWakes rollouts() { return rollouts; }



    /**
     * A desired node gone (not a delete's tombstone, which is a change): the ensemble lost its tree, or a hand deleted it.
     * Its windows are no longer scheduled; the apply asked for stops and removes nothing and reports
     * {@code no-desired-state} when the module has containers here (docs/decisions/0039-backups-and-an-empty-ensemble.md).
     */
    private void desiredDeleted(ChildData node) {
        String module = moduleOf(node.getPath());
        if (module == null || stopping.get()) return;
        scheduler.update(module, null);
        worker(module).request();
    }

    /** @return the module of a direct child of /mesh/desired, else null */
    private String moduleOf(String path) {
        if (!ZKPaths.getPathAndNode(path).getPath().equals(config.paths().desired())) return null;
        return ZKPaths.getNodeFromPath(path);
    }

    /**
     * Requests every known module from memory (the cache and the workers), never from ZooKeeper: a reconcile tick
     * must not block on a ZooKeeper that does not answer, so that each module's apply meets the outage and reports
     * it once ZooKeeper answers again.
     */
    private void reconcileAll() {
        Set<String> modules = new TreeSet<>(workers.keySet());
        cache.stream().map(d -> moduleOf(d.getPath())).filter(Objects::nonNull).forEach(modules::add);
        for (String module : modules) worker(module).request();
    }

    /**
     * A look at the host's window journal, on the timer: a window journalled open whose process is dead
     * ({@link WindowJournal.Entry#ownerAlive}), or whose module's host fence nobody holds (its process would hold it
     * from before its first stop to after the journal is deleted: decision 8, item 4), is not running and keeps its
     * containers stopped. Its module is applied at once ({@link #requestApply}), once per window: that apply finishes
     * it ({@code WindowRecovery}) as soon as it gets the module lock, which a dead process's lock child holds until its
     * session expires; a failed one is retried as any failed apply. So a {@code mesh-agent window} process killed
     * mid-window is recovered within seconds of its session's end, not at the next reconcile. Cheap at rest: a
     * directory listing, no ZooKeeper call, no Docker call; an unreadable entry is left to the module's apply, which
     * reports it.
     */
    private void lookForDeadWindows() {
        if (stopping.get()) return;
        List<String> open;
        try {
            open = journal.modules();
        } catch (RuntimeException e) {
            return; // the state dir cannot be listed: every apply says so
        }
        deadWindowsAsked.keySet().retainAll(open);
        for (String module : open) {
            WindowJournal.Entry e;
            try {
                e = journal.read(module).orElse(null);
            } catch (RuntimeException unreadable) {
                continue;
            }
            if (e == null || e.window() == null || e.window().equals(deadWindowsAsked.get(module))) continue;
            boolean dead = !e.ownerAlive();
            if (!dead && !fences.free(module)) continue; // running: its process holds the fence
            deadWindowsAsked.put(module, e.window());
            log.warn("window host={} module={} schedule={} window={} is not running, its journal still open ({}); applying the module "
                    + "now, which gives its containers back once it has the module lock", config.host(), module, e.schedule(), e.window(),
                    dead ? "its process " + (e.owner() == null ? "?" : e.owner().pid()) + " died" : "its process "
                            + e.owner().pid() + " lives but holds no fence");
            requestApply(module);
        }
    }

    /**
     * Asks for an apply of a module soon; requests made while one is queued coalesce.
     *
     * @param module module name
     */
    public void requestApply(String module) { worker(module).request(); }

    private ModuleWorker worker(String module) {
        return workers.computeIfAbsent(module, m -> new ModuleWorker(m));
    }

    /**
     * Runs a window of a module on a thread of its own (windows of one module run one at a time: the module lock).
     *
     * @param module   module name
     * @param schedule schedule name
     * @return the window's result, when it ends
     */
    public Future<WindowResult> runWindow(String module, String schedule) {
        return runWindow(module, schedule, Times.now());
    }

    /** The scheduler fired a schedule: its window is of the cron time just fired (start-by counts from it). */
    private void fireWindow(String module, String schedule) {
        runWindow(module, schedule, scheduler.lastFired(module, schedule).orElse(Times.now()));
    }

    private Future<WindowResult> runWindow(String module, String schedule, Instant firedAt) {
        // A thread per window, not one per module: a second window of the module waits where operators see it, for
        // its slot or the module lock (mesh windows, mesh locks), not in a thread's queue (decision 16, window slots).
        return windowThreads.submit(() -> {
            // A window still queued when the daemon is told to stop does not begin: it would stop containers on the
            // way out. One already running is let finish (close()); one waiting for its slot or the lock is cancelled.
            if (stopping.get()) throw new IllegalStateException("the agent is stopping: window " + module + "/" + schedule + " not started");
            Object key = new Object();
            windowsRunning.put(key, new RunningWindow(module, schedule, Times.now()));
            Thread t = Thread.currentThread();
            String name = t.getName();
            t.setName("window-" + module); // as the log lines show it
            try {
                WindowResult r = windows.run(module, schedule, config.windowLockWait(), firedAt);
                // What the window gave back is looked at at once, not at the next reconcile: a held container Docker
                // would not start again (StaleTaskException) is made anew by this apply; otherwise it is a no-op.
                if (r != null && r.held() != null && !r.held().isEmpty() && !stopping.get()) requestApply(module);
                return r;
            } finally {
                t.setName(name);
                windowsRunning.remove(key);
            }
        });
    }

    /**
     * A window a window thread runs.
     *
     * @param module   module name
     * @param schedule schedule name
     * @param began    when the thread began it (before the module lock)
     */
    private record RunningWindow(String module, String schedule, Instant began) {}

    /**
     * The applies of one module, one at a time, on a thread of {@link #applyThreads} while there is one to do: requests
     * coalesce ({@code pending}), and a request made while an apply runs makes one more apply after it.
     */
    private final class ModuleWorker {
        private final String module;
        /** An apply is asked for and has not begun; guarded by this. */
        private boolean pending;
        /** A thread runs this module's applies now; guarded by this. */
        private boolean running;

        ModuleWorker(String module) {
            this.module = module;
        }

        void request() {
            synchronized (this) {
                if (stopping.get() || pending) return;
                pending = true;
            }
            startIfIdle();
        }

        /** Starts a drain when an apply is asked for and none runs. */
        private void startIfIdle() {
            synchronized (this) {
                if (running || !pending || stopping.get()) return;
                running = true;
            }
            try {
                applyThreads.execute(this::drain);
            } catch (RejectedExecutionException e) {
                synchronized (this) { // shutting down
                    running = false;
                }
            }
        }

        synchronized boolean running() { return running; }

        /** Applies while asked; the thread carries the module's name meanwhile, as the log lines show it. */
        private void drain() {
            Thread t = Thread.currentThread();
            String name = t.getName();
            t.setName("apply-" + module);
            boolean idle = false; // running was cleared together with the last look at pending
            try {
                while (true) {
                    synchronized (this) {
                        if (!pending || stopping.get()) {
                            running = false;
                            idle = true;
                            return;
                        }
                        pending = false;
                    }
                    if (!run()) return; // interrupted: the daemon stops
                }
            } finally {
                t.setName(name);
                if (!idle) {
                    // Left by an interrupt or an Error: a request made meanwhile found this drain running and must
                    // not be lost, or pending would stay set and refuse every later request.
                    synchronized (this) {
                        running = false;
                    }
                    startIfIdle();
                }
            }
        }

        /** Back-off of the retry after a failed apply, in ms; reset by a successful one. */
        private long retryMs;
        /**
         * The one retry waiting, if any (only the thread of this module's drain reads and writes it, one at a time): a
         * run that a reconcile or a watch asked for while a retry waits must not start a second chain of retries (a
         * review saw twelve at once).
         */
        private ScheduledFuture<?> retry;
        /** The back-off's next try the waiting {@link #retry} is for, or {@code null} for the plain chain's. */
        private Instant retryAt;

        /** @return false when interrupted (the daemon stops) */
        private boolean run() {
            boolean failed;
            try {
                ApplyReport r = applier.apply(module, stopping::get);
                // deferred here: held nodes that outlived their window's lock; applied again until they go. Deferred by
                // a rollout is not retried: the rollout node's watch wakes this worker when the wave comes; nor by a
                // freeze: the freeze node's watch, or its timer at until, does (decision 14); nor by operator holds
                // alone: OperatorHolds applies at release or expiry (decision 15).
                failed = r != null && (r.outcome() == ApplyOutcome.FAILED
                        || r.outcome() == ApplyOutcome.DEFERRED && r.rollout() == null && r.freeze() == null
                        && !OperatorHolds.deferredByOperatorOnly(r));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } catch (RuntimeException e) {
                log.error("apply host={} module={} crashed", config.host(), module, e);
                failed = true;
            }
            if (!failed) {
                retryMs = 0;
                if (retry != null) retry.cancel(false);
                retry = null;
                retryAt = null;
                return true;
            }
            // Containers of the push that did not become ready: the next try is when their back-off says (2 s, 4 s ...
            // 5 min, kept by the applier under --state-dir), not sooner, and this chain waits for it. A reconcile in
            // between applies, but does not try them again.
            Instant backoff = applier.nextTry(module);
            long delay;
            if (backoff != null) {
                if (retry != null && !retry.isDone()) {
                    if (backoff.equals(retryAt)) return true; // already waits for it
                    retry.cancel(false); // one chain: the earlier retry would only meet the back-off
                }
                retryAt = backoff;
                delay = Math.max(0, Duration.between(Instant.now(), backoff).toMillis()) + BACKOFF_MARGIN_MS;
            } else {
                if (retry != null && !retry.isDone()) return true; // one retry is already waiting
                // A failed or deferred apply is tried again sooner than the reconcile interval: 2 s, 4 s, 8 s ... up to it.
                retryMs = Math.min(retryMs == 0 ? RETRY_FIRST_MS : retryMs * 2, config.reconcileInterval().toMillis());
                retryAt = null;
                delay = retryMs;
            }
            if (!stopping.get()) {
                try {
                    retry = timer.schedule(this::request, delay, TimeUnit.MILLISECONDS);
                } catch (RejectedExecutionException e) {
                    // shutting down
                }
            }
            return true;
        }
    }

    /**
     * Waits (bounded) for the window threads to end, saying what it waits for; cuts their windows short again at each
     * look ({@link WindowRunner#cutShort}: a step started just as the first kill came is killed by a later one).
     */
    private void awaitWindows() {
        Instant began = Times.now();
        Map<String, String> said = new HashMap<>();
        Map<String, WaitFor> known = new HashMap<>();
        Instant remindAt = began.plus(SHUTDOWN_REMINDER);
        Instant giveUpAt = began.plus(SHUTDOWN_BUDGET);
        while (!windowThreads.isTerminated()) {
            windows.cutShort();
            Instant now = Times.now();
            boolean remind = !now.isBefore(remindAt);
            if (remind) remindAt = now.plus(SHUTDOWN_REMINDER);
            for (RunningWindow w : windowsRunning.values()) {
                WaitFor wait = waitFor(w, known.get(w.module()));
                known.put(w.module(), wait);
                if (remind || !wait.line().equals(said.get(w.module()))) {
                    log.info("{}{}", remind && wait.line().equals(said.get(w.module())) ? "still " : "", wait.line());
                    said.put(w.module(), wait.line());
                }
            }
            if (now.isAfter(giveUpAt)) {
                log.error("stopping: {} has not given its containers back within {}s of the stop; exiting anyway: its journal "
                        + "under {} lets the next mesh process on this host finish it", windowsRunning.isEmpty() ? "a window"
                        : windowsRunning.values().stream().map(w -> "the window of module " + w.module()).distinct()
                        .collect(Collectors.joining(", ")), SHUTDOWN_BUDGET.toSeconds(), config.stateDir());
                return;
            }
            try {
                windowThreads.awaitTermination(200, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * What a shutdown says about a running window.
     *
     * @param line   the log line
     * @param window the window's id, once its journal named it
     */
    private record WaitFor(String line, String window) {}

    /**
     * From the window's journal entry (read-only), once the window has written it; else from what this daemon knows.
     *
     * @param w      the running window
     * @param before what was said of it last, or {@code null}
     */
    private WaitFor waitFor(RunningWindow w, WaitFor before) {
        String why = "; a second SIGTERM changes nothing (a window never leaves its containers stopped); SIGKILL would leave "
                + "its containers stopped until the next mesh process on this host finishes the window from its journal";
        Optional<WindowJournal.Entry> entry;
        try {
            entry = journal.read(w.module());
        } catch (RuntimeException e) {
            entry = Optional.empty();
        }
        if (entry.isPresent() && entry.get().deadline() != null) {
            WindowJournal.Entry e = entry.get();
            String held = e.held() == null ? "[]" : e.held().stream().map(WindowJournal.HeldContainer::container).toList().toString();
            boolean ours = e.owner() != null && e.owner().pid() == ProcessHandle.current().pid();
            if (!ours) { // this window first finishes one a dead process left: cut short too, it gives that one's back
                return new WaitFor("stopping: the window of " + w.module() + "/" + w.schedule() + " is finishing window " + e.window()
                        + " left by process " + (e.owner() == null ? "?" : e.owner().pid()) + ": it gives back " + held
                        + " at once (a step still running is killed), then ends without beginning its own" + why, null);
            }
            return new WaitFor("stopping: cutting window " + e.window() + " of " + e.module() + "/" + e.schedule() + " short: its step"
                    + " is killed (its deadline " + seconds(e.deadline()) + " is not waited for) and it gives back " + held + ", held since "
                    + e.since().truncatedTo(ChronoUnit.SECONDS) + ", waiting at most " + WindowRunner.STOPPING_READY_WAIT.toSeconds()
                    + "s for their readiness; it reports failed: step cut short" + why, e.window());
        }
        if (before != null && before.window() != null) { // its journal went: its containers run again
            return new WaitFor("stopping: window " + before.window() + " of " + w.module() + "/" + w.schedule()
                    + " has started its containers again; waiting for it to record its result", before.window());
        }
        return new WaitFor("stopping: the window of " + w.module() + "/" + w.schedule() + " (begun "
                + w.began().truncatedTo(ChronoUnit.SECONDS) + ") has stopped nothing: it ends without beginning" + why, null);
    }

    /** @return the instant to the next whole second, as ISO-8601 ({@code 2026-12-01T03:42:10Z}) */
    static String seconds(Instant t) {
        Instant s = t.truncatedTo(ChronoUnit.SECONDS);
        return (s.equals(t) ? s : s.plusSeconds(1)).toString();
    }

    private static Thread thread(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /**
     * Stops scheduling and applying; a window in progress is cut short ({@link WindowRunner#cutShort}: its step killed,
     * its containers given back at once, docs/decisions/0026-agent-stop.md), and the log says at once what each window
     * does, again when that changes and every 30 s. It gives up {@link #SHUTDOWN_BUDGET} after the stop (the window's
     * journal then lets the next mesh process on the host finish it). A window queued but not begun does not begin; one
     * waiting for its jitter, slot or lock ends; applies are interrupted (one finishing a dead window also cuts it short).
     */
    @Override
    public void close() {
        stopping.set(true);
        log.info("agent host={} stopping", config.host());
        store.client().getConnectionStateListenable().removeListener(reconnected);
        plans.close();
        audits.close();
        drains.close();
        holds.close();
        scheduler.close();
        timer.shutdownNow();
        applyThreads.shutdownNow();
        windowThreads.shutdown();
        // A window waiting for its jitter, slot or lock stopped nothing: it ends now. One that holds containers has its
        // step killed and gives them back at once, whatever its timeout (decision 26).
        windows.cutShort();
        awaitWindows();
        windows.closeEvents(2_000); // the windows' last events for webhooks, while the client is open (decision 34)
        try {
            if (!applyThreads.awaitTermination(1, TimeUnit.SECONDS)) {
                for (ModuleWorker w : workers.values()) {
                    if (w.running()) log.info("stopping: waiting up to 30s for the apply of module {} to end", w.module);
                }
                applyThreads.awaitTermination(29, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        rollouts.close();
        freezes.close();
        cache.close(); // after the windows and applies: they read desired nodes from it
        agentNode.close();
        ledger.close(); // last: the windows' and applies' last calls are in it
        events.close(2_000); // after the ledger's last audit: the host's expired holds and violations for webhooks
        log.info("agent host={} stopped", config.host());
    }
}
