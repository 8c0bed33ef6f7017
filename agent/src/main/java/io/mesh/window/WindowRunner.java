package io.mesh.window;

import io.mesh.curator.HeldRegistry;
import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.Labels;
import io.mesh.docker.StepResult;
import io.mesh.hold.OperatorHolds;
import io.mesh.hooks.ContainerHooks;
import io.mesh.hooks.HookPhase;
import io.mesh.hooks.HookRun;
import io.mesh.ledger.CallCause;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.Durations;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.ReadySpec;
import io.mesh.gate.Gate;
import io.mesh.manifest.GateSpec;
import io.mesh.manifest.ScheduleSpec;
import io.mesh.section.ModuleSection;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;
import io.mesh.wire.LockHolder;
import io.mesh.wire.ProcessRef;
import io.mesh.curator.ZkClock;
import io.mesh.wire.GateWaitRecord;
import io.mesh.wire.GroupDowntime;
import io.mesh.wire.SlotRecord;
import io.mesh.wire.SlotState;
import io.mesh.wire.Times;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowResult;
import io.mesh.zk.MeshStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * Runs one window of a module's schedule on this host (SPEC.md, "Window") inside the module's critical section
 * ({@link ModuleSection}, purpose {@code window:<schedule>}): finishes first a journalled window that is not running
 * ({@link WindowRecovery}); publishes the window and held nodes ({@link HeldRegistry}), confirmed, and journals itself
 * before anything is stopped; opens its {@link WindowStage}s in order and, whatever happened, closes them in reverse
 * ({@link WindowClosing}); then gives the fence back, deletes the nodes, records {@code lastWindow} in the report and
 * releases the lock. The rules: docs/design.md, "Window" and "Section".
 *
 * <p>Until the containers are stopped every Docker call needs the lock intact, so a window whose session went first
 * stops nothing; from then on it needs the fence alone and never waits for ZooKeeper to give its containers back.
 *
 * <p>When its process is told to stop ({@link #cutShort}: SIGTERM, docs/decisions/0026-agent-stop.md), a window that
 * has not begun does not begin, one whose step runs has its step killed, and either gives its containers back at once,
 * as always, reporting {@code failed}: the step was cut short because the agent is stopping.
 */
public final class WindowRunner {
    private static final Logger log = LoggerFactory.getLogger(WindowRunner.class);
    private static final DateTimeFormatter ID_TIME = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    /** How long the held and window nodes may take to be confirmed before the window gives up, stopping nothing. */
    static final Duration NODE_CREATE_WAIT = Duration.ofSeconds(15);

    private final HostContext context;
    private final MeshStore store;
    private final ContainerRuntime docker;
    private final String host;
    private final WindowRecovery recovery;
    private final WindowEvents events;
    /** The held containers' hooks (decision 38). */
    private final ContainerHooks hooks;

    /** @param context this host's store, engine, id, process, journal, policy and secrets dir */
    public WindowRunner(HostContext context) {
        this.context = context;
        this.store = context.store();
        this.docker = context.docker();
        this.host = context.host();
        this.recovery = context.recovery();
        this.events = new WindowEvents(new io.mesh.curator.EventOutbox(store.client(), store.paths(), host)
                .spoolIn(io.mesh.curator.EventOutbox.spoolOf(context.journal().stateDir())), host);
        this.hooks = new ContainerHooks(context.secrets());
    }

    /**
     * Writes the windows' events still queued for webhooks, for up to {@code millis}, before this process stops (its
     * ZooKeeper client is closed after); what is left is lost, logged (decision 34).
     *
     * @param millis how long to wait
     */
    public void closeEvents(long millis) { events.close(millis); }

    /**
     * The defaults of {@link HostContext#of}; kept for the benchmarks in {@code io.mesh.bench} until they build a
     * {@link HostContext} themselves.
     */
    public WindowRunner(MeshStore store, ContainerRuntime docker, String host, ProcessRef process, WindowJournal journal) {
        this(HostContext.of(store, docker, host, process, journal));
    }

    /** @return a new window id, such as {@code w-20261130T033000Z-3f2a} */
    public static String newWindowId() {
        return "w-" + ID_TIME.format(Times.now()) + "-" + String.format("%04x", ThreadLocalRandom.current().nextInt(0x10000));
    }

    /**
     * Runs one window now, as if fired now.
     *
     * @param module   module name
     * @param schedule schedule name
     * @param lockWait how long to wait for the module lock (an apply in progress)
     * @return the window's result; {@link WindowResult#succeeded()} when the step exited 0
     * @throws InterruptedException when interrupted while waiting for the lock (nothing was stopped then)
     */
    public WindowResult run(String module, String schedule, Duration lockWait) throws InterruptedException {
        return run(module, schedule, lockWait, Times.now());
    }

    /**
     * Runs one window of a cron time (or request): after its schedule's {@code jitter}, in its fleet-wide slot when
     * the schedule has one ({@link WindowSlot}), and skipped when it has not begun by {@code start-by} after
     * {@code firedAt} (SPEC.md, "Fleet-wide windows"). The slot is given back after the lock: once the containers are
     * ready again and the report is written.
     *
     * @param module   module name
     * @param schedule schedule name
     * @param lockWait how long to wait for the module lock (an apply in progress), at most until start-by
     * @param firedAt  the cron time, or when the window was asked for
     * @return the window's result
     * @throws InterruptedException when interrupted while waiting (nothing was stopped then)
     */
    public WindowResult run(String module, String schedule, Duration lockWait, Instant firedAt) throws InterruptedException {
        String windowId = newWindowId();
        Instant since = Times.now();
        WindowSlot slot = null;
        Instant startBy = null;
        try {
            DesiredRecord d = desiredOrNull(module);
            ScheduleSpec s = d == null ? null : d.spec().schedules().get(schedule);
            if (s != null) { // else runLocked says what is wrong
                startBy = firedAt.plus(s.startByDuration());
                if (!jitter(s, module, schedule, windowId)) return stopping(module, schedule, windowId, since, d);
                // A drained host runs no window (decision 37): said before its gate is asked or a place of its slot taken,
                // and again under the lock
                io.mesh.wire.DrainRecord drained = store.drain(host);
                if (drained != null) return finish(module, WindowResult.skipped(schedule, windowId, since, drained.describe() + "; nothing was stopped"), d);
                if (s.gate() != null) {
                    Gate.Answer a = awaitGate(s, module, schedule, windowId, startBy);
                    if (a == null) return stopping(module, schedule, windowId, since, d);
                    gates.put(windowId, a.said() + " at " + Times.now());
                    if (a.blocked()) {
                        String why = "gate blocked (on-blocked: " + s.gate().onBlockedOrDefault() + ")"
                                + (s.gate().onBlockedOrDefault() == GateSpec.OnBlocked.WAIT ? " until start-by passed, " + startBy : "")
                                + ": " + a.said();
                        log.warn("window host={} module={} schedule={} window={} skipped: {}", host, module, schedule, windowId, why);
                        return finish(module, WindowResult.skipped(schedule, windowId, since, why), d);
                    }
                }
                List<ModuleSpec> specs = desiredSpecs();
                Optional<WindowSlot.Limit> limit = WindowSlot.limit(store.paths(), module, schedule, s, specs);
                if (limit.isPresent()) {
                    WindowSlot.Limit l = limit.get();
                    // A group's limit counts its hosts down for another cause too (decision 37, the one disruption budget)
                    WindowSlot.OtherCauses others = s.group() == null ? WindowSlot.OtherCauses.NONE
                            : () -> GroupDowntime.causes(s.group(), specs, HeldRegistry.readAll(store.client(), store.paths()),
                                    io.mesh.curator.ApplyReports.readAll(store.client(), store.paths(), GroupDowntime.modulesOf(s.group(), specs)),
                                    ZkClock.earliest());
                    slot = new WindowSlot(store, l, new SlotRecord(l.key(), l.limit(), host, module, schedule, windowId,
                            SlotState.WAITING, firedAt, Times.now(), startBy, context.process()), claimFor(d.spec(), s), others);
                    waiting.add(slot);
                    boolean held;
                    try {
                        log.info("window host={} module={} schedule={} window={} waits for slot {} (limit {}) until {}", host, module,
                                schedule, windowId, l.key(), l.limit(), startBy);
                        held = slot.acquire(startBy);
                    } finally {
                        waiting.remove(slot);
                    }
                    if (!held && closing) return stopping(module, schedule, windowId, since, d);
                    if (!held) {
                        String why = "start-by passed: not begun by " + startBy + " (" + (s.startBy() != null ? "start-by " + s.startBy()
                                : "start-by defaults to the timeout, " + s.timeout()) + ", after " + firedAt + "), waiting for slot "
                                + l.key() + " (limit " + l.limit() + ")" + (slot.ahead().isEmpty() ? "" : "; " + slot.ahead());
                        log.warn("window host={} module={} schedule={} window={} skipped: {}", host, module, schedule, windowId, why);
                        return finish(module, WindowResult.skipped(schedule, windowId, since, why), d);
                    }
                    log.info("window host={} module={} schedule={} window={} holds slot {} after {} ms", host, module, schedule,
                            windowId, l.key(), Duration.between(since, Times.now()).toMillis());
                }
            }
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            return finish(module, WindowResult.failed(schedule, windowId, since, List.of(), "could not take the window's slot: "
                    + WindowClosing.describe(e) + "; nothing was stopped"), null);
        }
        ModuleSection section = new ModuleSection(store, context.journal().fences(), module, host, context.process(), LockHolder.windowPurpose(schedule))
                .recordTo(context.ledger(), CallCause.window(windowId, schedule));
        try {
            return runLocked(section, module, schedule, windowId, since, lockWait, startBy);
        } finally {
            section.close(); // the lock last: after the report, as an apply's
            if (slot != null) slot.close(); // after the containers are ready again (WindowClosing) and the lock
            gates.remove(windowId);
            hookLines.remove(windowId);
        }
    }

    /** How often a gate blocked under {@code on-blocked: wait} is asked again. */
    static final Duration GATE_AGAIN = Duration.ofSeconds(5);

    /** By window id, one line per hook it ran (decision 38): its result carries them ({@link #finish}). */
    private final java.util.Map<String, List<String>> hookLines = new java.util.concurrent.ConcurrentHashMap<>();

    /** By window id, what its schedule's gate last answered: its result carries it ({@link #finish}). */
    private final java.util.Map<String, String> gates = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Asks the schedule's gate before the window takes its slot (decision 35): once under {@code on-blocked: skip};
     * under {@code wait}, again every {@link #GATE_AGAIN} while it is blocked and start-by has not passed.
     *
     * @return the last answer; {@code null} when {@link #cancelWaiting} ended the wait (nothing was stopped)
     */
    private Gate.Answer awaitGate(ScheduleSpec s, String module, String schedule, String windowId, Instant startBy)
            throws InterruptedException {
        Gate gate = Gate.prometheus(io.mesh.gate.AnswerWithin.client(), s.gate().prometheus());
        Thread me = Thread.currentThread();
        waiting.add(me);
        String waitNode = store.paths().gateWait(host, module, schedule);
        Instant since = null;
        try {
            while (true) {
                if (closing) return null;
                Gate.Answer a = gate.ask();
                if (!a.blocked() || s.gate().onBlockedOrDefault() == GateSpec.OnBlocked.SKIP) return a;
                long left = Duration.between(Times.now(), startBy).toMillis();
                if (left <= 0) return a;
                log.info("window host={} module={} schedule={} window={} waits for its gate until {}: {}", host, module, schedule, windowId,
                        startBy, a.said());
                if (since == null) since = Times.now();
                showWait(waitNode, new GateWaitRecord(host, module, schedule, windowId, since, startBy, a.said(), Times.now()));
                Thread.sleep(Math.min(left, GATE_AGAIN.toMillis()));
            }
        } catch (InterruptedException e) {
            if (closing) return null;
            throw e;
        } finally {
            waiting.remove(me);
            if (since != null) showWait(waitNode, null);
        }
    }

    /**
     * Writes (or, {@code null}, deletes) the node that shows {@code mesh windows} this window waiting for its gate.
     * Display only: never waits for a ZooKeeper that does not answer (the wait goes on, unseen).
     */
    private void showWait(String path, GateWaitRecord r) {
        try {
            // only while connected: a wait goes on whatever ZooKeeper answers, and a node left by a lost connection is
            // the next wait's of the schedule (written over, or deleted) or goes with the session
            if (!store.session().connected()) return;
            if (r == null) store.client().delete().quietly().forPath(path);
            else store.client().create().orSetData().creatingParentsIfNeeded().withMode(org.apache.zookeeper.CreateMode.EPHEMERAL)
                    .forPath(path, Json.bytes(r));
        } catch (Exception e) {
            log.debug("gate wait {} not {}: {}", path, r == null ? "removed" : "written", e.toString());
        }
    }

    /** Windows waiting for a jitter or a slot, which {@link #cancelWaiting} ends. */
    private final java.util.Set<Object> waiting = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile boolean closing;
    /** Set by {@link #cutShort}: this process stops, and its windows give their containers back now. */
    private volatile boolean cutting;
    /** The windows between their first stop and their closing, whose step {@link #cutShort} kills. */
    private final java.util.Set<Holding> holding = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** What the agent's stop says of a window cut short, in its result and report ({@code lastWindow}). */
    public static final String STOPPING = "the agent is stopping";

    /**
     * This process is told to stop (SIGTERM; docs/decisions/0026-agent-stop.md): every wait ends as with
     * {@link #cancelWaiting} (those windows stopped nothing), and each window that holds containers now cuts its step
     * short: a running step is killed, one not started yet is not started, a window still stopping its containers stops
     * no more. Each then closes its stages in reverse as always ({@link WindowClosing}: the same containers started
     * again, waiting for their readiness only briefly) and reports {@code failed}, saying its step was cut short because
     * the agent is stopping. Idempotent, and never waits for ZooKeeper: the caller calls it again until its windows end
     * (a kill that came as the step was being started finds nothing to kill; the next one does).
     */
    public void cutShort() {
        if (!cutting) {
            cutting = true;
            cancelWaiting(); // once: its interrupts must not reach a window again after its wait ended
        }
        for (Holding h : holding) h.killStep();
    }

    /** How long a window cut short waits for its containers' readiness, at most, once they run again. */
    public static final Duration STOPPING_READY_WAIT = WindowClosing.STOPPING_READY_WAIT;

    /** A window between its first stop and its closing: its step, while it runs, for {@link #cutShort} to kill. */
    private static final class Holding {
        private final String window;
        private volatile ContainerRuntime fenced;
        private volatile String step;
        private volatile Instant stepStarted;
        private volatile boolean killSent;
        /** When the first kill was sent, or null. */
        private volatile Instant killedAt;
        private long lastKill;

        Holding(String window) {
            this.window = window;
        }

        /** The step is about to be started: from now on a cut kills it. */
        void stepStarting(String id, ContainerRuntime fenced, Instant at) {
            this.fenced = fenced;
            this.stepStarted = at;
            this.step = id;
        }

        /** The step's wait returned: nothing more to kill. */
        void stepEnded() {
            step = null;
        }

        /** Kills the step if it may run, at most once a second (a kill sent before Docker started it finds nothing). */
        synchronized void killStep() {
            String id = step;
            if (id == null || System.nanoTime() - lastKill < 1_000_000_000L && lastKill != 0) return;
            lastKill = System.nanoTime();
            if (!killSent) killedAt = Times.now();
            killSent = true;
            try {
                fenced.kill(id);
                log.warn("window {}: the agent is stopping: its step {} is killed, and its held containers are given back", window, id);
            } catch (RuntimeException e) {
                log.warn("window {}: the agent is stopping: its step {} could not be killed yet ({}); trying again", window, id, WindowClosing.describe(e));
            }
        }
    }

    /**
     * Ends every wait for a jitter, a slot or the module lock (the agent stops): those windows stop nothing and report
     * that the agent is stopping. A window holding the lock is not affected.
     */
    public void cancelWaiting() {
        closing = true;
        for (Object w : waiting) {
            if (w instanceof WindowSlot s) s.cancel();
            else if (w instanceof Thread t) t.interrupt();
        }
    }

    /** Sleeps a random part of the schedule's jitter; false when {@link #cancelWaiting} ended it. */
    private boolean jitter(ScheduleSpec s, String module, String schedule, String windowId) throws InterruptedException {
        Duration j = s.jitterDuration();
        if (j.isZero() || closing) return !closing;
        long ms = ThreadLocalRandom.current().nextLong(j.toMillis() + 1);
        log.info("window host={} module={} schedule={} window={} begins after a jitter of {} ms", host, module, schedule, windowId, ms);
        Thread me = Thread.currentThread();
        waiting.add(me);
        try {
            Thread.sleep(ms);
            return true;
        } catch (InterruptedException e) {
            if (closing) return false;
            throw e;
        } finally {
            waiting.remove(me);
        }
    }

    private WindowResult stopping(String module, String schedule, String windowId, Instant since, DesiredRecord d) {
        return finish(module, WindowResult.failed(schedule, windowId, since, List.of(), "the agent is stopping: the window had not begun; nothing was stopped"), d);
    }

    private DesiredRecord desiredOrNull(String module) {
        try {
            return store.desired(module);
        } catch (Exception e) {
            return null; // runLocked reads it again and says what is wrong
        }
    }

    /** @return every module's desired spec: a group's limit is set wherever the group is named */
    private List<ModuleSpec> desiredSpecs() throws Exception {
        List<ModuleSpec> out = new ArrayList<>();
        for (String m : store.desiredModules()) {
            try {
                DesiredRecord d = store.desired(m);
                if (d != null && d.spec() != null) out.add(d.spec());
            } catch (MeshStore.InvalidNodeException e) {
                // a node that does not parse names no group
            }
        }
        return out;
    }

    /** How long a running window's claim counts if never given back: its journal deadline, then its readiness wait. */
    private static Duration claimFor(ModuleSpec spec, ScheduleSpec s) {
        return s.timeoutDuration().plusSeconds(stopBudget(spec, s) + 30).plus(Durations.parse(ReadySpec.DEFAULT_DEADLINE)).plusMinutes(1);
    }

    private WindowResult runLocked(ModuleSection section, String module, String schedule, String windowId, Instant since,
                                   Duration lockWait, Instant startBy) throws InterruptedException {
        DesiredRecord desired = null;
        HeldRegistry published = null;
        List<String[]> heldNodes = null;
        WindowResult recovered = null;
        WindowResult result;
        try {
            Duration wait = lockWait;
            if (startBy != null) {
                Duration left = Duration.between(Times.now(), startBy);
                wait = left.isNegative() ? Duration.ZERO : Collections.min(List.of(lockWait, left));
            }
            Thread me = Thread.currentThread();
            waiting.add(me); // cancelWaiting ends a wait for the lock too: nothing is stopped yet
            boolean locked;
            try {
                locked = !closing && section.lock(wait);
            } catch (InterruptedException e) {
                if (closing) return finish(module, WindowResult.failed(schedule, windowId, since, List.of(),
                        "the agent is stopping: the window had not begun; nothing was stopped"), null);
                throw e;
            } finally {
                waiting.remove(me);
            }
            if (closing) { // stopping, whether or not the lock came: nothing is stopped yet, so the window does not begin
                Thread.interrupted(); // a cancel's interrupt that came after the lock must not reach the fence or Docker
                return finish(module, WindowResult.failed(schedule, windowId, since, List.of(),
                        "the agent is stopping: the window had not begun; nothing was stopped"), null);
            }
            if (!locked) {
                if (startBy != null && !Times.now().isBefore(startBy)) {
                    return finish(module, WindowResult.skipped(schedule, windowId, since, "start-by passed: not begun by " + startBy
                            + ", waiting for the module lock (an apply or another window holds it)"), null);
                }
                return finish(module, WindowResult.failed(schedule, windowId, since, List.of(), "the module lock was not free within " + lockWait.toSeconds() + "s"), null);
            }
            desired = store.desired(module);
            if (desired == null) return finish(module, WindowResult.failed(schedule, windowId, since, List.of(), "module " + module + " has no desired state"), null);
            ScheduleSpec s = desired.spec().schedules().get(schedule);
            if (s == null) {
                return finish(module, WindowResult.failed(schedule, windowId, since, List.of(),
                        "module " + module + " has no schedule '" + schedule + "'; it has " + desired.spec().schedules().keySet()), desired);
            }
            if (!context.policy().refusals(s.step()).isEmpty()) { // before anything is stopped
                return finish(module, WindowResult.failed(schedule, windowId, since, List.of(), "step refused by this agent's policy: "
                        + String.join("; ", context.policy().refusals(s.step()))), desired);
            }
            // Holding the lock, before the fence and anything stopped: a container an operator holds is not the window's,
            // and no window runs on a drained host (decision 37), also before its agent has placed the drain's holds.
            io.mesh.wire.DrainRecord drain = store.drain(host);
            if (drain != null) return finish(module, WindowResult.skipped(schedule, windowId, since, drain.describe() + "; nothing was stopped"), desired);
            Map<String, HeldRecord> held = store.held(host);
            String skip = OperatorHolds.skipWindow(held, desired.spec(), s.whileStopped());
            if (skip != null) return finish(module, WindowResult.skipped(schedule, windowId, since, skip), desired);
            if (!section.fence(lockWait)) {
                return finish(module, WindowResult.failed(schedule, windowId, since, List.of(), section.lockIntact()
                        ? "the host fence of " + module + " was not free within " + lockWait.toSeconds() + "s; held by " + section.fenceHolder()
                        : "the module lock lapsed (ZooKeeper session lost) before the window started; nothing was stopped"), desired);
            }
            // Fenced: a journalled window of this module is not running, whoever wrote it. Finish it first.
            Optional<WindowJournal.Entry> open = WindowRecovery.open(context.journal(), docker, module);
            if (open.isPresent() && WindowRecovery.mayRunElsewhere(context.journal(), open.get())) {
                return finish(module, WindowResult.failed(schedule, windowId, since, List.of(), "window " + open.get().window() + " of " + module
                        + " is open in process " + open.get().owner().pid() + ", which uses another --state-dir; not opening another"), desired);
            }
            if (open.isPresent()) recovered = recovery.recover(open.get(), section, held::get, () -> cutting);
            if (closing) {
                result = WindowResult.failed(schedule, windowId, since, List.of(), STOPPING + ": the window had not begun; nothing was stopped");
            } else {
                Plan plan = plan(desired.spec(), schedule, s, windowId, since, section.guarded(docker));
                String hookSkip = preStop(desired.spec(), windowId, plan, section.guarded(docker));
                if (hookSkip != null) {
                    log.warn("window host={} module={} schedule={} window={} skipped: {}", host, module, schedule, windowId, hookSkip);
                    result = WindowResult.skipped(schedule, windowId, since, hookSkip);
                } else {
                    published = HeldRegistry.publish(store.client(), store.paths(), host, module, schedule, windowId, since, plan.nodes(),
                            context.process(), NODE_CREATE_WAIT);
                    heldNodes = plan.nodes();
                    // Published, nothing stopped yet: the window has opened (decision 34); posted, never waited for.
                    events.started(module, schedule, windowId, plan.nodes().stream().map(n -> n[0]).toList());
                    HeldRegistry nodes = published;
                    result = hold(desired.spec(), schedule, s, plan.entry(), section, nodes::operatorHolding,
                            () -> heldLines(LedgerKind.HELD_OPEN, module, schedule, windowId, plan.nodes()));
                }
            }
        } catch (InterruptedException e) {
            throw e;
        } catch (HeldRegistry.HeldByOperatorException e) {
            // An operator's hold placed after the check above: it is left as it is, and nothing was stopped.
            result = WindowResult.skipped(schedule, windowId, since, e.getMessage());
        } catch (WindowJournal.UnreadableException e) {
            result = WindowResult.failed(schedule, windowId, since, List.of(), e.getMessage());
        } catch (Exception e) {
            result = WindowResult.failed(schedule, windowId, since, List.of(), WindowClosing.describe(e) + "; nothing was stopped");
        } finally {
            // The fence first: the containers run again; what follows may wait for ZooKeeper. The ledger's interval
            // closes before that wait: a process killed in it has finished its window, which no recovery closes again.
            try {
                section.unfence();
                if (heldNodes != null) heldLines(LedgerKind.HELD_CLOSE, module, schedule, windowId, heldNodes);
            } finally {
                // The nodes go as the window ends, whatever happened before and to its containers (SPEC.md "Window";
                // failure model row 113): left, they live with this process's session and defer every apply of them.
                if (published != null) published.close();
                if (recovered != null) WindowRecovery.record(store, host, module, recovered, null);
            }
        }
        return finish(module, result, desired);
    }

    /**
     * Runs the {@code pre-stop} hook of each held container that runs, all before anything is published, journalled or
     * stopped (decision 38), under the lock and the fence, through the guarded runtime (a lapsed lock runs no more). The
     * first that exits {@link io.mesh.manifest.HooksSpec#SKIP_WINDOW} skips the window: the hooks after it do not run,
     * and the {@code post-start} of each container whose {@code pre-stop} ran before it does, so that what those did
     * (a drain) is undone as after a give-back. Any other end of a hook is said in the result and the window goes on.
     *
     * @return the skip's reason ({@code hook: pre-stop of C exited 75; nothing was stopped}), or {@code null}
     */
    private String preStop(ModuleSpec spec, String windowId, Plan plan, ContainerRuntime guarded) {
        List<String> lines = hookLines.computeIfAbsent(windowId, k -> Collections.synchronizedList(new ArrayList<>()));
        List<String[]> ran = new ArrayList<>();
        HookRun skip = null;
        for (String[] n : plan.nodes()) {
            if (cutting) return null; // hold() says the window did not begin
            ContainerSpec cs = spec.containerOf(n[0]);
            if (cs == null || cs.hooksOrNone().preStop().isEmpty() || !guarded.isRunning(n[1])) continue; // nothing to stop
            Optional<HookRun> r = hooks.run(guarded, HookPhase.PRE_STOP, n[0], n[1], cs, cutting);
            if (r.isEmpty()) continue;
            lines.add(r.get().line());
            if (r.get().skipsWindow()) {
                skip = r.get();
                break;
            }
            ran.add(n);
        }
        if (skip == null) return null;
        for (String[] n : ran) {
            hooks.run(guarded, HookPhase.POST_START, n[0], n[1], spec.containerOf(n[0]), cutting).ifPresent(r -> lines.add(r.line()));
        }
        return "hook: " + skip.phase() + " of " + skip.container() + " exited " + skip.exitCode() + " (not now)"
                + (skip.output().isEmpty() ? "" : ": " + skip.output().get(skip.output().size() - 1).strip()) + "; nothing was stopped";
    }

    /** The ledger's held interval of each held container, as its nodes are published or deleted (decision 28). */
    private void heldLines(LedgerKind kind, String module, String schedule, String windowId, List<String[]> nodes) {
        for (String[] n : nodes) {
            LedgerEntry e = LedgerEntry.held(kind, context.ledger().now(), module, n[0], n[1], LedgerEntry.WINDOW, windowId, schedule,
                    null, null, null);
            // An opening is on disk before the first stop, as a call's line is (decision 28); a closing before the
            // wait for ZooKeeper that follows it.
            context.ledger().writeAhead(e);
        }
    }

    /** What a window will hold: the journal entry to write and the (Docker name, id) of each held container. */
    private record Plan(WindowJournal.Entry entry, List<String[]> nodes) {}

    /** Finds the held containers (of this module only) and their restart policies; changes nothing. */
    private Plan plan(ModuleSpec spec, String schedule, ScheduleSpec s, String windowId, Instant since, ContainerRuntime guarded) {
        String module = spec.module();
        List<WindowJournal.HeldContainer> held = new ArrayList<>();
        List<String[]> nodes = new ArrayList<>();
        for (String name : s.whileStopped()) {
            String dockerName = spec.dockerName(name);
            String id = guarded.idByName(dockerName);
            if (id == null) {
                log.warn("window host={} module={} schedule={} window={}: {} does not exist; nothing to hold", host, module, schedule, windowId, dockerName);
                continue;
            }
            String owner = guarded.labels(id).get(Labels.MODULE);
            if (!module.equals(owner)) { // failure model row 16: never act on another module's container
                log.warn("window host={} module={} schedule={} window={}: {} belongs to module {}; not holding it", host, module,
                        schedule, windowId, dockerName, owner);
                continue;
            }
            String policy = guarded.restartPolicy(id);
            held.add(new WindowJournal.HeldContainer(dockerName, id, policy.equals("no") ? null : policy));
            nodes.add(new String[] {dockerName, id});
        }
        int stopBudget = stopBudget(spec, s);
        String stepName = module + "." + schedule + "." + windowId;
        WindowJournal.Entry entry = new WindowJournal.Entry(host, module, schedule, windowId, since,
                since.plus(s.timeoutDuration()).plusSeconds(stopBudget + 30), context.process(), WindowJournal.thisProcessStart(),
                stepName, List.copyOf(held), List.of());
        return new Plan(entry, nodes);
    }

    /**
     * Fenced, nodes published: journal, stages opened in order, then closed in reverse whatever happened; a container
     * an operator came to hold meanwhile ({@code operatorHolds}, answered from memory) is kept stopped.
     */
    private WindowResult hold(ModuleSpec spec, String schedule, ScheduleSpec s, WindowJournal.Entry entry, ModuleSection section,
                              Function<String, HeldRecord> operatorHolds, Runnable heldOpened) {
        String module = spec.module();
        List<String> heldNames = entry.held().stream().map(WindowJournal.HeldContainer::container).toList();
        ContainerRuntime guarded = section.guarded(docker);
        context.journal().write(entry); // throws before anything changed when --state-dir cannot be written
        // The ledger's held interval opens once the journal has the window, before its first stop: a process killed
        // after this line is recovered from its journal, and its recovery closes the interval (WindowRecovery); one
        // killed before it opened none. Opened first, a kill in between left it open for good (failure model).
        heldOpened.run();
        String error = null;
        StepResult step = null;
        String cut = null; // why the agent's stop cut the window short, or null
        Holding me = new Holding(entry.window());
        holding.add(me); // from here cutShort() reaches this window
        try {
            if (cutting) throw new CutShort("the window had not begun; nothing was stopped");
            if (s.silence() != null && !entry.held().isEmpty()) {
                // Before the first stop (SPEC.md "The rest of the operator's stack"): journalled as opened first, so that
                // a process killed while Alertmanager answers leaves at most silences that end on their own.
                entry = opening(entry, WindowStage.SILENCED);
                List<WindowJournal.Silence> made = WindowSilences.create(s.silence(), host, heldNames,
                        entry.deadline().plus(Durations.parse(ReadySpec.DEFAULT_DEADLINE)).plus(Duration.ofMinutes(1)),
                        "window " + entry.window() + " of schedule " + schedule + " (module " + module + ")");
                entry = entry.withSilences(made);
                context.journal().write(entry);
            }
            entry = opening(entry, WindowStage.STEP_CREATED);
            // The step container is created before anything is stopped: Docker itself then shows every mesh process
            // on the host that this window is open. Its label carries the entry with every stage counted as opened,
            // so that a reader that only has the label closes them all (fail safe).
            String volumesFrom = s.step().volumesFrom() == null ? null : ModuleSpec.dockerName(module, s.step().volumesFrom());
            Map<String, String> labels = Map.of(Labels.WINDOW, entry.window(), Labels.MODULE, module, Labels.SCHEDULE, schedule,
                    Labels.JOURNAL, Json.text(entry.withEveryStage()));
            String stepId = guarded.createStep(entry.stepContainer(), s.step(), volumesFrom, labels);
            log.info("window host={} module={} schedule={} window={} opened held={}", host, module, schedule, entry.window(), heldNames);
            entry = opening(entry, WindowStage.HELD);
            for (WindowJournal.HeldContainer h : List.copyOf(entry.held())) {
                if (cutting) throw new CutShort("its step was cut short before it started; it stopped no more of its containers");
                if (h.restorePolicy() != null) guarded.updateRestartPolicy(h.containerId(), "no");
                section.checkLock(); // a window whose lock lapsed stops nothing more: not even journalled as sent
                entry = entry.stopping(h.containerId());
                context.journal().write(entry);
                guarded.stop(h.containerId(), stopTimeout(spec, h.container().substring(module.length() + 1)));
            }
            if (cutting) throw new CutShort("its step was cut short before it started");
            entry = opening(entry.stopsReturned(), WindowStage.STEP_STARTED); // every stop returned
            // Known to cutShort() before the last look at cutting: a stop that comes after this look finds the step.
            me.stepStarting(stepId, section.fenced(docker), Times.now());
            if (cutting) throw new CutShort("its step was cut short before it started");
            step = guarded.runStep(stepId, s.timeoutDuration(), WindowResult.LOG_LINES);
        } catch (CutShort e) {
            cut = e.getMessage();
        } catch (RuntimeException e) {
            error = WindowClosing.describe(e);
            if (!entry.openedStages().contains(WindowStage.HELD)) error += "; nothing was stopped";
        } finally {
            me.stepEnded();
            holding.remove(me);
            ModuleSpec desiredSpec = spec;
            WindowClosing closing = new WindowClosing(section.fenced(docker), context.journal(), entry, operatorHolds, () -> cutting, context.secrets())
                    .withPostStart((rt, c, id, stopping) -> hooks.run(rt, HookPhase.POST_START, c, id, desiredSpec.containerOf(c), stopping))
                    .closeAll();
            hookLines.computeIfAbsent(entry.window(), k -> Collections.synchronizedList(new ArrayList<>())).addAll(closing.hooks());
            if (closing.error() != null) error = error == null ? closing.error() : error + "; " + closing.error();
            for (String k : closing.kept()) error = error == null ? k : error + "; " + k;
            if (step == null && closing.exitCode() != null && cut == null) {
                step = new StepResult(closing.exitCode(), closing.stepKilled(), closing.logTail());
            }
            // Killed for the stop, unless it had ended by itself (exit 0) as the kill came.
            if (cut == null && (closing.stepCutShort() || me.killSent && (step == null || step.exitCode() != 0))) {
                Instant began = me.stepStarted;
                Instant killed = me.killedAt == null ? Times.now() : me.killedAt;
                cut = "its step was cut short" + (began == null ? "" : " after " + Duration.between(began, killed).toSeconds() + "s")
                        + " (killed" + (step == null ? "" : ", exit " + step.exitCode()) + "; its timeout is " + s.timeout() + ")";
            }
            if (cut != null) {
                String why = STOPPING + ": " + cut;
                for (String u : closing.unawaited()) why += "; " + u;
                error = error == null ? why : why + "; " + error;
            }
        }
        if (cut != null) { // given back as always; failed, saying why
            if (step == null) return WindowResult.failed(schedule, entry.window(), entry.since(), heldNames, error);
            List<String> tail = step.logTail() == null ? null : StepRedaction.of(context.secrets(), spec, schedule).apply(step.logTail());
            return WindowResult.ended(schedule, entry.window(), entry.since(), WindowOutcome.FAILED, step.exitCode(), heldNames, tail, error);
        }
        if (step == null) return WindowResult.failed(schedule, entry.window(), entry.since(), heldNames, error); // error is set
        WindowOutcome outcome = error != null ? WindowOutcome.FAILED
                : step.timedOut() ? WindowOutcome.TIMED_OUT
                : step.exitCode() == 0 ? WindowOutcome.SUCCEEDED : WindowOutcome.STEP_FAILED;
        if (error == null && step.timedOut()) error = "step killed at its timeout of " + s.timeout();
        else if (error == null && step.exitCode() != 0) error = "step exited " + step.exitCode();
        // volumes-from mounts that container's file secrets too: the step can print them (decision 18)
        List<String> tail = step.logTail() == null ? null : StepRedaction.of(context.secrets(), spec, schedule).apply(step.logTail());
        return WindowResult.ended(schedule, entry.window(), entry.since(), outcome, step.exitCode(), heldNames, tail, error);
    }

    /** Thrown inside a window that {@link #cutShort} reached before its step ran: what the window did not do. */
    private static final class CutShort extends RuntimeException {
        CutShort(String what) {
            super(what, null, false, false);
        }
    }

    /** Journals a stage as opened, before it acts. */
    private WindowJournal.Entry opening(WindowJournal.Entry entry, WindowStage stage) {
        WindowJournal.Entry next = entry.opening(stage);
        context.journal().write(next);
        return next;
    }

    /**
     * @return the seconds the schedule's held containers may take to stop, one after another, with their
     *         {@code pre-stop} hooks (decision 38): part of its deadline
     */
    private static int stopBudget(ModuleSpec spec, ScheduleSpec s) {
        return s.whileStopped().stream().mapToInt(n -> stopTimeout(spec, n) + preStopBound(spec, n)).sum();
    }

    private static int preStopBound(ModuleSpec spec, String name) {
        ContainerSpec cs = spec.containers().get(name);
        return cs == null || cs.hooksOrNone().preStop().isEmpty() ? 0 : (int) cs.hooksOrNone().timeoutDuration().toSeconds();
    }

    private static int stopTimeout(ModuleSpec spec, String name) {
        ContainerSpec cs = spec.containers().get(name);
        return cs == null ? 10 : cs.stopTimeoutSeconds();
    }

    private WindowResult finish(String module, WindowResult r, DesiredRecord desired) {
        String gate = r.window() == null ? null : gates.get(r.window());
        if (gate != null) r = r.withGate(gate);
        List<String> ran = r.window() == null ? null : hookLines.get(r.window());
        if (ran != null && !ran.isEmpty()) r = r.withHooks(List.copyOf(ran));
        WindowRecovery.record(store, host, module, r, desired);
        events.finished(module, r); // after the report: posted, never waited for (decision 34)
        return r;
    }
}
