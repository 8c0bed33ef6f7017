package io.mesh.window;

import io.mesh.curator.HeldRegistry;
import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.Labels;
import io.mesh.ledger.CallCause;
import io.mesh.hooks.ContainerHooks;
import io.mesh.hooks.HookPhase;
import io.mesh.ledger.Ledger;
import io.mesh.manifest.ModuleSpec;
import io.mesh.secrets.SecretsDir;
import io.mesh.section.ModuleSection;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.LedgerKind;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.Times;
import io.mesh.wire.WindowResult;
import io.mesh.zk.MeshStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.mesh.wire.Json;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Finishes a window that is not running but whose journal entry is still there: its process died mid-window (kill -9,
 * a crash, a host reboot), or it gave up on a path that did not close its stages. Called inside the module's critical
 * section, fenced, by whichever mesh process holds it next on the host: an apply, or the next window. The fence is
 * the proof that the window is not running: its process held the fence from before its first stop to after its last
 * start.
 *
 * <p>It makes the window's held nodes again in the background (never waiting for them: the fence, not the nodes,
 * keeps other processes of the host off its containers) and closes exactly the stages the journal says opened, in
 * reverse ({@link WindowClosing}); the
 * caller records the result, outcome {@code recovered}, once it has given the fence back ({@link #record}). The rule:
 * docs/design.md, "Crash recovery".
 *
 * @param store   ZooKeeper access
 * @param docker  the local container runtime
 * @param host    this host's id
 * @param process this process
 * @param journal the host's window journal
 * @param secrets the host's secrets dir: a finished step's log lines lose the secrets it could read
 * @param ledger  this process's ledger: the recovery's calls are the window's ({@code window:<schedule>}), and it
 *                closes the window's held intervals (decision 28)
 */
public record WindowRecovery(MeshStore store, ContainerRuntime docker, String host, ProcessRef process, WindowJournal journal,
                             SecretsDir secrets, Ledger ledger) {
    private static final Logger log = LoggerFactory.getLogger(WindowRecovery.class);

    /**
     * The open window of a module on this host, as the host itself records it: the journal entry under
     * {@code --state-dir}, else the entry a step container of the module carries in its {@code mesh.journal} label.
     * The label is what lets a process that does not share the window's {@code --state-dir} see it: a window creates
     * its step container before it stops anything.
     *
     * @param journal this process's journal
     * @param docker  the local container runtime
     * @param module  module name
     * @return the entry, if a window of the module is open or died open
     */
    public static Optional<WindowJournal.Entry> open(WindowJournal journal, ContainerRuntime docker, String module) {
        Optional<WindowJournal.Entry> j = journal.read(module);
        if (j.isPresent()) return j;
        for (Map<String, String> labels : docker.stepLabels(module)) {
            String json = labels.get(Labels.JOURNAL);
            if (json == null) continue;
            try {
                return Optional.of(Json.read(json.getBytes(StandardCharsets.UTF_8), WindowJournal.Entry.class));
            } catch (RuntimeException e) {
                log.warn("step container of {} carries an unreadable {} label: {}", module, Labels.JOURNAL, e.getMessage());
            }
        }
        return Optional.empty();
    }

    /**
     * Whether an open entry may belong to a window that still runs although the fence is held: it was not found in
     * this process's journal but on a step container's label (so its process uses another {@code --state-dir}, and
     * another fence), its process lives, and its deadline has not passed. Such a window is deferred to, not finished.
     *
     * @param journal this process's journal
     * @param e       the entry {@link #open} returned
     * @return true when the entry's window may still run in another process
     */
    public static boolean mayRunElsewhere(WindowJournal journal, WindowJournal.Entry e) {
        return journal.read(e.module()).isEmpty() && e.ownerAlive() && Times.now().isBefore(e.deadline());
    }

    /**
     * Finishes a window that is not running. The caller holds the section, fenced. Its containers are given back
     * before anything is asked of ZooKeeper (SPEC.md "Window": starting them again never waits for it); a container an
     * operator holds is kept stopped ({@code operatorHolds}: the holds the caller read under the lock).
     *
     * @param e             the journal entry
     * @param section       the caller's section, fenced
     * @param operatorHolds the held node of a container by Docker name, as read under the lock, or {@code null}
     * @return the result, outcome {@code recovered}, for the caller to {@link #record} after it gave the fence back
     */
    public WindowResult recover(WindowJournal.Entry e, ModuleSection section, Function<String, HeldRecord> operatorHolds) {
        return recover(e, section, operatorHolds, () -> false);
    }

    /**
     * As {@link #recover(WindowJournal.Entry, ModuleSection, Function)}, in a process that may be told to stop: once
     * {@code stopping}, a step still running is killed at once rather than let run to the window's deadline, and
     * readiness is awaited only briefly (docs/decisions/0026-agent-stop.md).
     *
     * @param stopping true once this process is told to stop
     */
    public WindowResult recover(WindowJournal.Entry e, ModuleSection section, Function<String, HeldRecord> operatorHolds,
                                BooleanSupplier stopping) {
        String owner = e.owner() == null ? "?" : e.owner().pid() + " (" + e.owner().process() + ")";
        log.warn("window host={} module={} schedule={} window={}: not running, its journal still open (process {} {}); finishing it",
                host, e.module(), e.schedule(), e.window(), owner, e.ownerAlive() ? "lives, but left it" : "died");
        List<String> heldNames = e.held().stream().map(WindowJournal.HeldContainer::container).toList();
        // Its held and window nodes went with its process's session: made again in the background, never waited for
        // (the give-back must not wait for ZooKeeper), so that every process sees its containers held until they run
        // again; the fence keeps the host's other processes off them meanwhile.
        HeldRegistry nodes = e.openedStages().contains(WindowStage.HELD) && !e.held().isEmpty()
                ? HeldRegistry.startInBackground(store.client(), store.paths(), host, e.module(), e.schedule(), e.window(), e.since(),
                        e.held().stream().map(h -> new String[] {h.container(), h.containerId()}).toList(), process)
                : null;
        Function<String, HeldRecord> holds = c -> {
            HeldRecord h = operatorHolds == null ? null : operatorHolds.apply(c);
            return h != null || nodes == null ? h : nodes.operatorHolding(c);
        };
        WindowClosing closing;
        // Each container's post-start (decision 38), from the desired spec this process already holds, else as the container
        // was created (its hooks label): the give-back must not wait for ZooKeeper.
        ModuleSpec spec = cachedSpec(e.module());
        ContainerHooks hooks = new ContainerHooks(secrets);
        // Its calls are the window's own: the audit reads the give-back as the window's (decision 28).
        CallCause before = section.cause(CallCause.window(e.window(), e.schedule()));
        try {
            closing = new WindowClosing(section.fenced(docker), journal, e, holds, stopping, secrets)
                    .withPostStart((rt, c, id, cutting) -> hooks.run(rt, HookPhase.POST_START, c, id,
                            spec != null ? spec.containerOf(c) : ContainerHooks.asCreated(rt.labels(id)), cutting))
                    .closeAll();
        } finally {
            section.cause(before);
            if (nodes != null) nodes.closeInBackground();
            Ledger l = section.ledger() != Ledger.NONE ? section.ledger() : ledger;
            if (l != null) for (WindowJournal.HeldContainer h : e.held()) {
                l.writeAhead(LedgerEntry.held(LedgerKind.HELD_CLOSE, l.now(), e.module(), h.container(), h.containerId(),
                        LedgerEntry.WINDOW, e.window(), e.schedule(), null, null, null));
            }
        }
        WindowSlot.forget(store, host, e.module(), e.window()); // its containers run again: its claim no longer counts
        List<String> notes = new ArrayList<>();
        notes.add("the window's process " + owner + (e.ownerAlive() ? " left it open" : " died mid-window") + "; finished by "
                + process.process() + " (pid " + process.pid() + ")");
        notes.addAll(closing.notes());
        if (closing.error() != null) notes.add(closing.error());
        WindowResult r = WindowResult.recovered(e.schedule(), e.window(), e.since(), closing.exitCode(), heldNames,
                redacted(e, closing.logTail()), String.join("; ", notes));
        return closing.hooks().isEmpty() ? r : r.withHooks(closing.hooks());
    }

    /** @return the module's desired spec from the daemon's cache, or {@code null} when it is not cached (no ZooKeeper call) */
    private ModuleSpec cachedSpec(String module) {
        if (!store.desiredIsCached()) return null;
        try {
            DesiredRecord d = store.desired(module);
            return d == null || d.tombstone() ? null : d.spec();
        } catch (Exception x) {
            log.warn("window recovery of {}: no post-start hook runs, its desired state cannot be read ({})", module, WindowClosing.describe(x));
            return null;
        }
    }

    /** The step's log lines without the secrets it could read (decision 18); none when the spec cannot be read. */
    private List<String> redacted(WindowJournal.Entry e, List<String> lines) {
        if (lines == null || lines.isEmpty()) return lines;
        try {
            DesiredRecord d = store.desired(e.module());
            return StepRedaction.of(secrets, d == null ? null : d.spec(), e.schedule()).apply(lines);
        } catch (Exception x) {
            log.warn("window {}: its step's log lines are left out: the desired state to redact them by cannot be read ({})", e.window(),
                    WindowClosing.describe(x));
            return List.of();
        }
    }

    /**
     * Logs a window's result and sets it as the module's report's {@code lastWindow}.
     *
     * @param store   ZooKeeper access
     * @param host    host id
     * @param module  module name
     * @param r       the result
     * @param desired the desired state the window ran under, or {@code null}
     */
    public static void record(MeshStore store, String host, String module, WindowResult r, DesiredRecord desired) {
        String push = desired == null ? "-" : desired.push();
        if (r.succeeded()) {
            log.info("window host={} module={} push={} schedule={} window={} outcome={} exit={} held={}", host, module, push,
                    r.schedule(), r.window(), r.outcome(), r.exitCode(), r.held());
        } else {
            log.warn("window host={} module={} push={} schedule={} window={} outcome={} exit={} held={} error=\"{}\" log={}", host, module,
                    push, r.schedule(), r.window(), r.outcome(), r.exitCode(), r.held(), r.error(), r.logTail());
        }
        try {
            ApplyReport empty = ApplyReport.noApply(host, module, desired == null ? null : desired.revision(),
                    desired == null ? null : desired.push());
            store.writeWindowResult(host, module, r, empty);
        } catch (Exception e) {
            log.warn("window {}: result not written to the report: {}", r.window(), WindowClosing.describe(e));
        }
    }

}
