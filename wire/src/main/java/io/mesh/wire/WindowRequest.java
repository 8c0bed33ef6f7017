package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.time.Instant;

/**
 * Data of {@code /mesh/requests/<host>/window-<seq>} (persistent sequential): an operator's request that the agent of
 * {@code <host>} run one window now ({@code mesh window run MODULE/SCHEDULE --host H}).
 *
 * <p>Its state goes {@value #REQUESTED} (the coordinator) → {@value #RUNNING} (claimed by the agent with a
 * compare-and-set) → {@value #DONE}; the life of a request, with its TTL: docs/design.md, "Window requests".
 *
 * @param module      module name
 * @param schedule    schedule name
 * @param requestedAt when the request was made
 * @param by          who asked: the coordinator's pid and a description naming the operator and address
 * @param state       {@value #REQUESTED}, {@value #RUNNING} or {@value #DONE}
 * @param runner      the agent process running it, once claimed
 * @param startedAt   when the agent claimed it
 * @param finishedAt  when it was done
 * @param result      the window's result, when a window ran
 * @param error       why no window ran, or why its result is unknown
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record WindowRequest(String module, String schedule, Instant requestedAt, ProcessRef by, String state,
                            ProcessRef runner, Instant startedAt, Instant finishedAt, WindowResult result, String error) {
    /** Written by the requester; nobody runs it yet. */
    public static final String REQUESTED = "requested";
    /** Claimed by the agent; its window is running or waiting for the module lock. */
    public static final String RUNNING = "running";
    /** Finished: {@code result} or {@code error} says how. */
    public static final String DONE = "done";

    /**
     * @return a new request
     * @param module      module name
     * @param schedule    schedule name
     * @param requestedAt now
     * @param by          who asks
     */
    public static WindowRequest of(String module, String schedule, Instant requestedAt, ProcessRef by) {
        return new WindowRequest(module, schedule, requestedAt, by, REQUESTED, null, null, null, null, null);
    }

    /** @return this request claimed by {@code runner} at {@code at} */
    public WindowRequest running(ProcessRef runner, Instant at) {
        return new WindowRequest(module, schedule, requestedAt, by, RUNNING, runner, at, null, null, null);
    }

    /** @return this request finished at {@code at} with a result (or {@code null}) and an error (or {@code null}) */
    public WindowRequest done(Instant at, WindowResult r, String err) {
        return new WindowRequest(module, schedule, requestedAt, by, DONE, runner, startedAt, at, r, err);
    }

    /** @return true when done and the window's step succeeded */
    public boolean succeeded() { return DONE.equals(state) && result != null && result.succeeded() && error == null; }
}
