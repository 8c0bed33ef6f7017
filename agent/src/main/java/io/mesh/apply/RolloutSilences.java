package io.mesh.apply;

import io.mesh.manifest.SilenceSpec;
import io.mesh.wire.DesiredRecord;
import io.mesh.window.WindowJournal;
import io.mesh.window.WindowSilences;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A rollout host's Alertmanager silences (SPEC.md "The rest of the operator's stack": {@code silence} per schedule and
 * per {@code rollout}; docs/decisions/0036-window-silences.md): one per container the apply's recreate stops, made
 * just before that stop with the rollout's matchers plus {@code mesh_host} and {@code mesh_container}, expired once the
 * apply has ended (after its readiness wait). Not journalled: an agent that dies mid-apply leaves each to end on its own,
 * {@link #bound} after it began. Alertmanager not answering is logged and stops nothing (the window's rule).
 */
final class RolloutSilences implements AutoCloseable {
    /** Beyond the recreate's own bound (stop, hooks, readiness), how long a silence lasts if never expired. */
    static final Duration MARGIN = Duration.ofMinutes(10);
    /** None: an apply that is no rollout's, or whose rollout asks no silence. */
    static final RolloutSilences NONE = new RolloutSilences(null, null, null, null);

    private final SilenceSpec spec;
    private final io.mesh.manifest.ModuleSpec module;
    private final String host;
    private final String who;
    private final List<WindowJournal.Silence> made = new ArrayList<>();
    private final java.util.Set<String> asked = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private RolloutSilences(SilenceSpec spec, io.mesh.manifest.ModuleSpec module, String host, String who) {
        this.spec = spec;
        this.module = module;
        this.host = host;
        this.who = who;
    }

    /**
     * @param toApply the desired state the rollout lets this host apply, or {@code null}
     * @param host    this host
     * @return its silences, {@link #NONE} when its rollout asks none
     */
    static RolloutSilences of(DesiredRecord toApply, String host) {
        if (toApply == null || toApply.spec() == null || toApply.spec().rollout() == null || toApply.spec().rollout().silence() == null) {
            return NONE;
        }
        return new RolloutSilences(toApply.spec().rollout().silence(), toApply.spec(), host, "rollout of " + toApply.push());
    }

    /**
     * @param container a Docker name of the module
     * @return how long its recreate may take at most: its stop, its hooks, its readiness deadline, and {@link #MARGIN}
     */
    Duration bound(String container) {
        io.mesh.manifest.ContainerSpec c = module == null ? null : module.containerOf(container);
        if (c == null) return MARGIN.multipliedBy(3);
        Duration hooks = c.hooks() == null ? Duration.ZERO : c.hooks().timeoutDuration().multipliedBy(2);
        Duration ready = c.ready() == null ? io.mesh.manifest.Durations.parse(io.mesh.manifest.ReadySpec.DEFAULT_DEADLINE) : c.ready().deadlineTime();
        return Duration.ofSeconds(c.stopTimeoutSeconds()).plus(hooks).plus(ready).plus(MARGIN);
    }

    /** Silences {@code container} until the apply ends (or {@link #bound}); once per container; Alertmanager asked unlocked. */
    void before(String container) {
        if (spec == null || !asked.add(container)) return;
        List<WindowJournal.Silence> silences = WindowSilences.create(spec, host, List.of(container), Instant.now().plus(bound(container)), who);
        synchronized (made) {
            made.addAll(silences);
        }
    }

    /**
     * Expires the silences made; what could not be expired ends on its own. An agent told to stop (its thread
     * interrupted) still expires them: the interrupt is kept for after.
     */
    @Override
    public void close() {
        List<WindowJournal.Silence> all;
        synchronized (made) {
            all = List.copyOf(made);
            made.clear();
        }
        if (all.isEmpty()) return;
        boolean interrupted = Thread.interrupted();
        try {
            WindowSilences.expire(all, who);
        } finally {
            if (interrupted) Thread.currentThread().interrupt();
        }
    }
}
