package io.mesh.wire;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * Work by key, queued at most once per key: a key asked again before its run starts is not queued again (that one run
 * serves both asks); a key asked once its run has started is queued again, since the run may have read too early. The
 * agent answers plans so and the coordinator folds rollouts so.
 */
public final class QueuedOnce {
    private final Set<String> queued = ConcurrentHashMap.newKeySet();
    private final Consumer<Runnable> queue;

    /**
     * @param queue hands a run to its executor (at once, or after a delay); throws {@link RejectedExecutionException}
     *              once the executor is shut down
     */
    public QueuedOnce(Consumer<Runnable> queue) {
        this.queue = queue;
    }

    /**
     * Queues {@code run} for {@code key}, unless a run of the key is queued and not started yet. Nothing is queued once
     * the executor is shut down (closing).
     *
     * @param key what the run is about, such as a plan or a module
     * @param run the work; it handles its own failures
     */
    public void ask(String key, Runnable run) {
        if (!queued.add(key)) return;
        try {
            queue.accept(() -> {
                queued.remove(key);
                run.run();
            });
        } catch (RejectedExecutionException closed) {
            queued.remove(key);
        }
    }
}
