package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.time.Instant;

/**
 * Data of {@code /mesh/requests/<host>/window-<seq>} (persistent sequential): an operator's request that the agent of
 * {@code <host>} run one window now ({@code mesh window run MODULE/SCHEDULE --host H}).
 *
 * <p>Its state goes {@code requested} (the coordinator) → {@code running} (claimed by the agent with a
 * compare-and-set) → {@code done}; the life of a request, with its TTL: docs/design.md, "Window requests".
 *
 * @param module      module name
 * @param schedule    schedule name
 * @param requestedAt when the request was made
 * @param by          who asked: the coordinator's pid and a description naming the operator and address
 * @param state       requested, running or done
 * @param runner      the agent process running it, once claimed
 * @param startedAt   when the agent claimed it
 * @param finishedAt  when it was done
 * @param result      the window's result, when a window ran
 * @param error       why no window ran, or why its result is unknown
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record WindowRequest(String module, String schedule, Instant requestedAt, ProcessRef by, WindowRequestState state,
                            ProcessRef runner, Instant startedAt, Instant finishedAt, WindowResult result, String error) {
    /**
     * @return a new request
     * @param module      module name
     * @param schedule    schedule name
     * @param requestedAt now
     * @param by          who asks
     */
    public static WindowRequest of(String module, String schedule, Instant requestedAt, ProcessRef by) {
        return new WindowRequest(module, schedule, requestedAt, by, WindowRequestState.REQUESTED, null, null, null, null, null);
    }

    /** @return this request claimed by {@code runner} at {@code at} */
    public WindowRequest running(ProcessRef runner, Instant at) {
        return new WindowRequest(module, schedule, requestedAt, by, WindowRequestState.RUNNING, runner, at, null, null, null);
    }

    /** @return this request finished at {@code at} with a result (or {@code null}) and an error (or {@code null}) */
    public WindowRequest done(Instant at, WindowResult r, String err) {
        return new WindowRequest(module, schedule, requestedAt, by, WindowRequestState.DONE, runner, startedAt, at, r, err);
    }

    /** @return true when done and the window's step succeeded */
    public boolean succeeded() { return state == WindowRequestState.DONE && result != null && result.succeeded() && error == null; }
}
