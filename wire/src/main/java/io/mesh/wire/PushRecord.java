package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.time.Instant;
import java.util.List;

/**
 * Data of {@code /mesh/pushes/push-<seq>}: one push, written in the same transaction as its desired nodes and its
 * history nodes.
 *
 * @param push       the node name, such as {@code push-0000000002}
 * @param revision   the revision it carries
 * @param modules    names of the modules it wrote
 * @param receivedAt when the coordinator took it
 * @param action     push, rollback or delete; {@code null} in records written before history existed (a push)
 * @param rollbackOf for a rollback: the push whose spec it pushed again; else {@code null}
 * @param by         who pushed ({@link HistoryRecord#by()}); {@code null} in older records
 * @param source     the {@code X-Mesh-Source} header (such as a commit id), or {@code null}
 */
public record PushRecord(String push, String revision, List<String> modules, Instant receivedAt,
                         @JsonInclude(JsonInclude.Include.NON_NULL) PushAction action,
                         @JsonInclude(JsonInclude.Include.NON_NULL) String rollbackOf,
                         @JsonInclude(JsonInclude.Include.NON_NULL) String by,
                         @JsonInclude(JsonInclude.Include.NON_NULL) String source) {
    /** A record without action, origin or rollback: as written before history existed. */
    public PushRecord(String push, String revision, List<String> modules, Instant receivedAt) {
        this(push, revision, modules, receivedAt, null, null, null, null);
    }

    /** @return the action, {@link PushAction#PUSH} for a record that names none */
    public PushAction actionOrPush() { return action == null ? PushAction.PUSH : action; }
}
