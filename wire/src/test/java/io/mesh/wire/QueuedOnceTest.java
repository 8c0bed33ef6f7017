package io.mesh.wire;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link QueuedOnce}: one queued run per key until it starts; a refusing executor leaves no key stuck. */
class QueuedOnceTest {
    /** Runs handed over and not run yet, run by the test when it chooses. */
    private final List<Runnable> handed = new ArrayList<>();
    private final List<String> ran = new ArrayList<>();

    @Test
    void aKeyAskedAgainBeforeItsRunStartsRunsOnce() {
        QueuedOnce q = new QueuedOnce(handed::add);
        q.ask("a", () -> ran.add("a"));
        q.ask("a", () -> ran.add("a again"));
        q.ask("b", () -> ran.add("b"));
        assertThat(handed).hasSize(2);
        handed.forEach(Runnable::run);
        assertThat(ran).containsExactly("a", "b");
    }

    @Test
    void aKeyAskedWhileItsRunGoesOnIsQueuedAgain() {
        QueuedOnce q = new QueuedOnce(handed::add);
        q.ask("a", () -> {
            ran.add("first");
            q.ask("a", () -> ran.add("second"));
        });
        handed.remove(0).run();
        assertThat(handed).hasSize(1);
        handed.remove(0).run();
        assertThat(ran).containsExactly("first", "second");
    }

    @Test
    void aRefusedRunLeavesTheKeyFreeAndThrowsNothing() {
        boolean[] open = {false};
        QueuedOnce q = new QueuedOnce(run -> {
            if (!open[0]) throw new RejectedExecutionException("shut down");
            handed.add(run);
        });
        q.ask("a", () -> ran.add("refused"));
        open[0] = true;
        q.ask("a", () -> ran.add("queued"));
        handed.forEach(Runnable::run);
        assertThat(ran).containsExactly("queued");
    }
}
