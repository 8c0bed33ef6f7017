package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.time.Instant;

/**
 * Data of {@code /mesh/rollouts/<module>/<host>} (docs/decisions/0013-rollouts.md): one host's progress in a rollout,
 * created {@code waiting} by the coordinator in the push's transaction and then written by that host's agent alone
 * (its ACL, {@code MeshAcls}), at the version read.
 *
 * @param host  the host
 * @param push  the push of the rollout it belongs to: a node of another push counts as {@code waiting}
 * @param state where the host is
 * @param since when it got there
 * @param error for {@code failed}: what failed (the parent's {@code note} quotes it); else {@code null}
 */
@JsonPropertyOrder({"host", "push", "state", "since", "error"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RolloutHostRecord(String host, String push, RolloutHostState state, Instant since, String error) {
    /** How much of an apply's error an agent writes into its node, in characters (a report has the whole of it). */
    public static final int ERROR_CHARS = 2_000;

    /**
     * @return a host of {@code push}'s rollout whose wave has not come, as the push writes it
     */
    public static RolloutHostRecord waiting(String host, String push, Instant at) {
        return new RolloutHostRecord(host, push, RolloutHostState.WAITING, at, null);
    }

    /**
     * @param next  where the host is now
     * @param error for {@link RolloutHostState#FAILED}, why; ignored otherwise
     * @return this host moved to {@code next} at {@code at}, in {@code push}'s rollout
     */
    public RolloutHostRecord moved(String push, RolloutHostState next, String error, Instant at) {
        return new RolloutHostRecord(host, push, next, at, next != RolloutHostState.FAILED || error == null ? null : cut(error, ERROR_CHARS));
    }

    /**
     * How a host's error is cut wherever it is copied (its node, the rollout's note): a host writes its own node with
     * anything its ACL allows.
     *
     * @param error the error
     * @param chars the most characters kept
     * @return {@code error}, or its first {@code chars} characters and "…"
     */
    static String cut(String error, int chars) {
        return error.length() > chars ? error.substring(0, chars) + "…" : error;
    }
}
