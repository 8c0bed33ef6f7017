package io.mesh.window;

/**
 * The stages a window opens, in order; each closes in reverse (Nomad's alloc-runner hooks, docs/design.md "Window").
 * A stage is recorded in the {@link WindowJournal} before it acts, so that whoever finishes the window (its own
 * process, or {@link WindowRecovery} after a crash) closes exactly the stages that opened, in reverse, with the same
 * code ({@link WindowClosing}). Closing a stage is idempotent: starting a running container, restoring a policy that
 * was never changed, removing a container that is gone all do nothing.
 */
public enum WindowStage {
    /**
     * Each held container is silenced in Alertmanager (a schedule with {@code silence}), before anything else: the
     * silences are in the journal ({@code silences}). Closed last, once the containers are ready again, by expiring
     * them; an Alertmanager that does not answer is logged, and the silence lapses at its own end
     * (docs/decisions/0036-window-silences.md).
     */
    SILENCED,
    /**
     * The step container exists, created but not started, before anything is stopped: Docker itself shows every mesh
     * process on the host that the window is open (its {@code mesh.journal} label). Closed by removing it.
     */
    STEP_CREATED,
    /**
     * Each held container's restart policy is {@code no} (checked by an inspect), so that dockerd starts none of them
     * when it restarts, whatever their policy, and each is stopped. Closed by putting each policy back (checked by an
     * inspect) and starting the same container again: never waits for ZooKeeper.
     */
    HELD,
    /**
     * The step was started. Closed when the step is known dead: it ended, or it was killed at the window's deadline
     * and an inspect shows it stopped. Only then may {@link #HELD} close.
     */
    STEP_STARTED
}
