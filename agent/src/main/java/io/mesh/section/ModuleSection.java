package io.mesh.section;

import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.ObservedContainer;
import io.mesh.ledger.CallCause;
import io.mesh.ledger.Ledger;
import io.mesh.wire.CallOutcome;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.ProcessRef;
import io.mesh.zk.MeshStore;
import io.mesh.zk.SessionGuard;
import io.mesh.zk.SessionGuard.SessionLostException;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A module's critical section on this host: the one place that takes and gives back what an apply or a window needs
 * before it may make a Docker call on the module's containers (docs/decisions/0008-host-fence.md).
 *
 * <ol>
 *   <li>{@link #lock}: the ZooKeeper module lock ({@link ModuleLock}, Curator's {@code InterProcessMutex}), the claim
 *       every process of the fleet sees;</li>
 *   <li>{@link #fence}: the {@link HostFence}, which cannot lapse; taken after the lock, before anything is
 *       published or any Docker call;</li>
 *   <li>Docker calls, through {@link #guarded} (the lock must still be intact: an apply) or {@link #fenced} (the fence
 *       alone: a window giving its containers back, which never waits for ZooKeeper);</li>
 *   <li>{@link #unfence} after the last Docker call, then the lock's release, alone ({@link #close}) or in one
 *       transaction with the report ({@link #releaseWith}).</li>
 * </ol>
 *
 * <p>The session rule: the lock is intact while the session that took it, the same before and after the acquire, was
 * never lost and ZooKeeper is connected now ({@link SessionGuard}); a section never waits for ZooKeeper while it holds the fence. States move forward only,
 * by compare-and-set, as Curator's {@code PersistentNode} does. One thread uses a section: the lock is Curator's,
 * owned by the thread that acquired it.
 */
public final class ModuleSection implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ModuleSection.class);

    /** Where a section is. */
    public enum State {
        /** nothing taken yet (or the lock was not free: {@link #lock} may be called again) */
        LATENT,
        /** the ZooKeeper lock is held */
        LOCKED,
        /** the lock and the host fence are held: Docker calls may be made */
        FENCED,
        /** the fence is given back; the lock is still to be released */
        UNFENCED,
        /** everything is given back */
        RELEASED
    }

    private final MeshStore store;
    private final HostFence fences;
    private final String module;
    private final String host;
    private final ProcessRef who;
    private final ModuleLock lock;
    private final AtomicReference<State> state = new AtomicReference<>(State.LATENT);
    private volatile long lostAtLock;
    private volatile HostFence.Held fence;
    private volatile Ledger ledger = Ledger.NONE;
    private volatile CallCause cause;
    /** Docker names by id, as this section's calls met them: a call line names its container cheaply. */
    private final Map<String, String> names = new ConcurrentHashMap<>();

    /**
     * @param store   ZooKeeper access (its client and {@link SessionGuard})
     * @param fences  the host's fences ({@code --state-dir})
     * @param module  module name
     * @param host    host id
     * @param who     this process
     * @param purpose {@code apply} or {@code window:<schedule>}, the lock node's purpose
     */
    public ModuleSection(MeshStore store, HostFence fences, String module, String host, ProcessRef who, String purpose) {
        this.store = store;
        this.fences = fences;
        this.module = module;
        this.host = host;
        this.who = who;
        this.lock = new ModuleLock(store.client(), store.paths(), module, host, who, purpose);
    }

    /**
     * Records this section's changing Docker calls in the ledger, with their cause (decision 28).
     *
     * @param ledger this process's ledger
     * @param cause  why the section's user makes its calls
     * @return this section
     */
    public ModuleSection recordTo(Ledger ledger, CallCause cause) {
        this.ledger = ledger == null ? Ledger.NONE : ledger;
        this.cause = cause;
        return this;
    }

    /**
     * Sets the cause of the calls from now on (a recovery of a window inside an apply, a repair).
     *
     * @param cause the new cause
     * @return the cause before
     */
    public CallCause cause(CallCause cause) {
        CallCause was = this.cause;
        this.cause = cause;
        return was;
    }

    /**
     * Sets the cause of the calls from now on to a repair (a put-back inside an apply of a push, which a freeze lets
     * through: SPEC.md "Freezes"), until the answer is run.
     *
     * @return what sets the cause back to the one before
     */
    public Runnable repairing() {
        CallCause was = cause(CallCause.REPAIR);
        return () -> cause(was);
    }

    /**
     * Sets the cause of the calls from now on to an apply of a push, and records in the ledger that the apply begins
     * here: the audit's freeze rule asks when the apply that made a call began ({@link io.mesh.wire.AuditChecker}).
     *
     * @param push the push's cause ({@link CallCause#push})
     */
    public void beginApply(CallCause push) {
        this.cause = push;
        try {
            if (ledger.enabled()) ledger.write(LedgerEntry.apply(ledger.now(), module, push.cause(), who));
        } catch (RuntimeException e) {
            log.debug("ledger: apply of {} not recorded: {}", module, e.toString());
        }
    }

    /** @return the cause of this section's calls now, or {@code null} */
    public CallCause cause() { return cause; }

    /** @return the ledger this section records to ({@link Ledger#NONE} when none) */
    public Ledger ledger() { return ledger; }

    /** @return where this section is */
    public State state() { return state.get(); }

    /** @return the module */
    public String module() { return module; }

    /** @return the ZooKeeper lock's path, {@code /mesh/locks/<module>/<host>} */
    public String lockPath() { return lock.path(); }

    /**
     * Asks for the ZooKeeper lock; may be called again while it returns false.
     *
     * @param wait the longest wait
     * @return true when held (state {@link State#LOCKED})
     * @throws Exception from ZooKeeper, as Curator throws it
     */
    public boolean lock(Duration wait) throws Exception {
        if (state.get() != State.LATENT) throw new IllegalStateException("lock() in state " + state.get());
        // Both read before the acquire: a waiter whose node was made by a session that was lost meanwhile can come
        // first once the holder's node goes, and "hold" a lock whose node the server is about to expire
        // (FleetHistoryIT seed 8). Such a lock is never intact.
        SessionGuard session = store.session();
        long lost = session.lostCount();
        long sessionId = session.sessionId();
        if (!lock.acquire(wait)) return false;
        lostAtLock = sessionId != 0 && session.sessionId() == sessionId ? lost : lost - 1;
        state.set(State.LOCKED);
        return true;
    }

    /**
     * Takes the host fence, holding the lock. Refuses (false) when the lock is no longer intact, so that a section
     * whose session went while it waited does not start.
     *
     * @param wait the longest wait for a fence held by another thread or process of this host
     * @return true when fenced (state {@link State#FENCED})
     * @throws InterruptedException when interrupted while waiting
     */
    public boolean fence(Duration wait) throws InterruptedException {
        if (state.get() != State.LOCKED) throw new IllegalStateException("fence() in state " + state.get());
        Optional<HostFence.Held> f = fences.acquire(module, describeHolder(), wait);
        if (f.isEmpty()) return false;
        if (!lockIntact()) { // the session went while we waited: another process may hold the lock now
            f.get().close();
            return false;
        }
        fence = f.get();
        state.set(State.FENCED);
        return true;
    }

    /** @return who holds this module's fence on this host, as it wrote it (for a waiter's log and report) */
    public String fenceHolder() { return fences.holder(module); }

    /**
     * @return true while the session that took the lock was never lost and ZooKeeper is connected now: no other
     *         process can hold the lock
     */
    public boolean lockIntact() {
        SessionGuard s = store.session();
        return s.lostCount() == lostAtLock && s.connected();
    }

    /**
     * The session rule, before a Docker call of an apply: never waits.
     *
     * @throws SessionLostException when the lock is not intact, or the fence is not held
     */
    public void checkLock() {
        requireFenced();
        store.session().check(lostAtLock);
    }

    /**
     * @param docker the host's runtime
     * @return the runtime as an apply uses it: every call first passes {@link #checkLock()}, so that a process whose
     *         lock lapsed makes no further call
     */
    public ContainerRuntime guarded(ContainerRuntime docker) {
        return proxy(docker, this::checkLock);
    }

    /**
     * @param docker the host's runtime
     * @return the runtime as a window that stopped containers uses it: every call needs the fence alone, so that the
     *         window gives its containers back whatever ZooKeeper does
     */
    public ContainerRuntime fenced(ContainerRuntime docker) {
        return proxy(docker, this::requireFenced);
    }

    private void requireFenced() {
        HostFence.Held f = fence;
        if (state.get() != State.FENCED || f == null || !f.valid()) {
            throw new SessionLostException("the host fence of module " + module + " is not held (" + state.get() + "); no Docker call");
        }
    }

    private ContainerRuntime proxy(ContainerRuntime docker, Runnable before) {
        return (ContainerRuntime) Proxy.newProxyInstance(ContainerRuntime.class.getClassLoader(), new Class<?>[] {ContainerRuntime.class},
                (p, m, args) -> {
                    if (m.getDeclaringClass() == Object.class) return m.invoke(docker, args);
                    String op = ledger.enabled() ? CALLS.get(m.getName()) : null;
                    LedgerEntry call = op == null ? null : beginCall(op, m, args);
                    // The lock's check after the written-ahead line, right before the call: the line's wait (up to 2 s)
                    // must not stand between the check and the call (decision 8: a lapsed lock makes no further call).
                    try {
                        before.run();
                    } catch (RuntimeException refused) {
                        if (call != null) endCall(call, m, args, null, refused, CallOutcome.REFUSED); // not made: its line ends at once
                        throw refused;
                    }
                    try {
                        Object r = m.invoke(docker, args);
                        if (call != null) endCall(call, m, args, r, null, CallOutcome.MADE);
                        else learnNames(m, args, r);
                        return r;
                    } catch (InvocationTargetException e) {
                        if (call != null) endCall(call, m, args, null, e.getCause(), CallOutcome.FAILED);
                        throw e.getCause();
                    }
                });
    }

    /** The changing operations of {@link ContainerRuntime}, by method name, as a ledger's call line names them. */
    private static final Map<String, String> CALLS = Map.of("create", "create", "createStep", "create", "start", "start",
            "stop", "stop", "kill", "kill", "remove", "remove", "rename", "rename", "updateRestartPolicy", "update", "runStep", "run", "exec", "exec");

    /** Remembers the names that reads give with ids, so that a later call's line names its container. */
    private void learnNames(Method m, Object[] args, Object r) {
        try {
            if (m.getName().equals("idByName") && r instanceof String id && args[0] instanceof String name) names.put(id, name);
            else if (r instanceof List<?> l && m.getName().equals("moduleContainers")) {
                for (Object o : l) if (o instanceof ObservedContainer c && c.id() != null) names.put(c.id(), c.dockerName());
            }
        } catch (RuntimeException e) {
            // a name is a convenience of the ledger: never a reason to fail the call
        }
    }

    /**
     * Writes a call's line as it begins, without its end (decision 28): a process that dies in a call leaves it so, and
     * an audit that runs while a long call (a step's run) is under way finds it.
     *
     * @return the line, or {@code null} when it could not be made (never a reason to fail the call)
     */
    private LedgerEntry beginCall(String op, Method m, Object[] args) {
        try {
            String id = null;
            String name = null;
            if (m.getName().equals("create") || m.getName().equals("createStep")) {
                name = (String) args[0];
            } else if (args != null && args.length > 0 && args[0] instanceof String s) {
                id = s;
                name = names.get(id);
            }
            CallCause c = cause;
            LedgerEntry e = LedgerEntry.call(ledger.now(), module, name, id, op, c == null ? null : c.cause(), c == null ? null : c.window(),
                    c == null ? null : c.schedule(), who);
            ledger.writeAhead(e);
            return e;
        } catch (RuntimeException e) {
            log.debug("ledger: call {} not recorded: {}", op, e.toString());
            return null;
        }
    }

    /** Writes a call's line again as it ends: its end, the id it made (a create), its error. Never throws. */
    private void endCall(LedgerEntry call, Method m, Object[] args, Object result, Throwable error, CallOutcome outcome) {
        try {
            String id = call.containerId();
            if (id == null && result instanceof String s) id = s; // a create's new id
            if (id != null && call.container() != null) names.put(id, call.container());
            if (m.getName().equals("rename") && id != null && error == null && args[1] instanceof String to) names.put(id, to); // from now on
            ledger.write(call.ended(ledger.now(), id, error == null ? null : String.valueOf(error.getMessage()), outcome));
        } catch (RuntimeException e) {
            log.debug("ledger: call {} not recorded: {}", call.action(), e.toString());
        }
    }

    /** Gives the fence back: after the last Docker call, before anything that may wait for ZooKeeper. Idempotent. */
    public void unfence() {
        if (state.compareAndSet(State.FENCED, State.UNFENCED)) {
            HostFence.Held f = fence;
            fence = null;
            f.close();
        }
    }

    /**
     * Releases the lock in one ZooKeeper transaction with {@code op} (the apply's report: {@link ModuleLock#releaseWith}).
     * The fence is given back first.
     *
     * @param op the write that ends what the lock guarded
     * @return the transaction's results, {@code op}'s first; {@code null} when it did not commit (the lock is then
     *         still to be released by {@link #close()})
     * @throws Exception other than a {@code KeeperException}, as Curator throws it
     */
    public List<CuratorTransactionResult> releaseWith(CuratorOp op) throws Exception {
        unfence();
        if (state.get() != State.UNFENCED && state.get() != State.LOCKED) return null;
        if (!lock.isHeld()) return null;
        List<CuratorTransactionResult> r = lock.releaseWith(op);
        if (r != null) state.set(State.RELEASED);
        return r;
    }

    /** @return true while this thread's ZooKeeper lock node is held (as far as this process knows) */
    public boolean lockHeld() { return lock.isHeld(); }

    /**
     * Gives the fence back, then releases the lock (Curator's guaranteed delete; its node is ephemeral and goes with
     * the session anyway). Never throws; idempotent. Must run on the thread that took the lock.
     */
    @Override
    public void close() {
        unfence();
        State was = state.getAndSet(State.RELEASED);
        if (was == State.RELEASED || was == State.LATENT) return;
        try {
            lock.release();
        } catch (Exception e) {
            log.warn("module lock {} not released cleanly ({}); its node is ephemeral and goes with the session", lock.path(), e.toString());
        }
    }

    private String describeHolder() {
        return lock.holder().purpose() + " of " + module + " by " + who.process() + " pid " + who.pid() + " on " + host
                + " since " + lock.holder().since();
    }
}
