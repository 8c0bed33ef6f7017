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
 * apply has ended (after its readiness wait). Not journalled: an agent that dies mid-apply leaves each to end on its own
 * {@link #BOUND} after it began. Alertmanager not answering is logged and stops nothing (the window's rule).
 */
final class RolloutSilences implements AutoCloseable {
    /** How long a silence lasts if never expired (an agent that died mid-apply). */
    static final Duration BOUND = Duration.ofMinutes(30);
    /** None: an apply that is no rollout's, or whose rollout asks no silence. */
    static final RolloutSilences NONE = new RolloutSilences(null, null, null);

    private final SilenceSpec spec;
    private final String host;
    private final String who;
    private final List<WindowJournal.Silence> made = new ArrayList<>();

    private RolloutSilences(SilenceSpec spec, String host, String who) {
        this.spec = spec;
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
        return new RolloutSilences(toApply.spec().rollout().silence(), host, "rollout of " + toApply.push());
    }

    /** Silences {@code container} until the apply ends (or {@link #BOUND}); once per container. */
    synchronized void before(String container) {
        if (spec == null || made.stream().anyMatch(s -> s.container().equals(container))) return;
        made.addAll(WindowSilences.create(spec, host, List.of(container), Instant.now().plus(BOUND), who));
    }

    /** Expires the silences made; what could not be expired ends on its own. */
    @Override
    public synchronized void close() {
        if (made.isEmpty()) return;
        WindowSilences.expire(made, who);
        made.clear();
    }
}
