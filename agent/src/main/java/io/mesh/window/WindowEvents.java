package io.mesh.window;

import io.mesh.curator.EventOutbox;
import io.mesh.wire.EventType;
import io.mesh.wire.MeshEvent;
import io.mesh.wire.Times;
import io.mesh.wire.WindowResult;

import java.util.List;

/**
 * A window's events for webhooks, written by the window's own process into its host's outbox
 * (docs/decisions/0034-webhooks-from-an-outbox.md; SPEC.md, "The rest of the operator's stack"):
 * {@code window.started} once its held and window nodes are published, before its first stop; then one of
 * {@code window.ended} (the step exited 0), {@code window.failed} (the step failed or timed out, or the window could
 * not run it or give its containers back) or {@code window.skipped} (it did not open and stopped nothing). A window never
 * waits for them: they are posted ({@link EventOutbox#post}).
 */
final class WindowEvents {
    private final EventOutbox outbox;
    private final String host;

    /**
     * @param outbox the host's outbox
     * @param host   this host's id
     */
    WindowEvents(EventOutbox outbox, String host) {
        this.outbox = outbox;
        this.host = host;
    }

    /** {@code window.started}: the window opened, holding {@code held} (Docker names). */
    void started(String module, String schedule, String window, List<String> held) {
        outbox.post(MeshEvent.of(EventType.WINDOW_STARTED, Times.now(), host, module).withWindow(schedule, window).withHeld(held));
    }

    /** {@code window.ended}, {@code window.failed} or {@code window.skipped}, by the result's outcome. */
    void finished(String module, WindowResult r) {
        EventType type = switch (r.outcome()) {
            case SUCCEEDED -> EventType.WINDOW_ENDED;
            case SKIPPED -> EventType.WINDOW_SKIPPED;
            case STEP_FAILED, TIMED_OUT, FAILED -> EventType.WINDOW_FAILED;
            case RECOVERED, UNKNOWN -> null; // a recovery finishes another process's window: its result is in the report
        };
        if (type == null) return;
        outbox.post(MeshEvent.of(type, r.finishedAt() == null ? Times.now() : r.finishedAt(), host, module)
                .withWindow(r.schedule(), r.window())
                .withOutcome(r.outcome().wire(), r.exitCode())
                .withBy(null, r.error())
                .withHeld(r.held()));
    }

    /** Writes what is queued for up to {@code millis} (the process stops); the rest is lost, logged. */
    void close(long millis) { outbox.close(millis); }
}
