package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.mesh.manifest.ModuleSpec;

import java.time.Instant;

/**
 * Data of {@code /mesh/history/<module>/rev-<seq>} (persistent sequential): one push of one module, written by the
 * coordinator in the push's own transaction; the newest {@value #KEPT} are kept per module (SPEC.md, "ZooKeeper
 * layout" and "History and rollback"; docs/decisions/0011-history-rollback-delete.md). Built by name:
 * {@link #pushed}, {@link #rolledBack}, {@link #deleted}.
 *
 * @param module     module name
 * @param revision   the push's revision
 * @param push       the push, such as {@code push-0000000002}
 * @param spec       the module's spec as the push wrote it; {@code null} for a delete
 * @param pushedAt   when the coordinator took the push (the push record's {@code receivedAt})
 * @param by         who pushed: the name of the bearer token ({@code --token-file} {@code name:token} lines;
 *                   {@value #BY_TOKEN} for the older single token), {@value #BY_WEBHOOK} for a signed webhook push,
 *                   {@value #BY_ANONYMOUS} when the coordinator asks for no credentials
 * @param source     the push's {@code X-Mesh-Source} header (such as a commit id), or {@code null}
 * @param action     push, rollback or delete
 * @param rollbackOf for a rollback, the push whose spec it pushed again; else {@code null} (and not written)
 */
@JsonPropertyOrder({"module", "revision", "push", "spec", "pushedAt", "by", "source", "action", "rollbackOf"})
public record HistoryRecord(String module, String revision, String push, ModuleSpec spec, Instant pushedAt, String by,
                            String source, PushAction action,
                            @JsonInclude(JsonInclude.Include.NON_NULL) String rollbackOf) {
    /** How many history nodes are kept per module: the newest. */
    public static final int KEPT = 50;
    /** {@code by} of a push signed with the webhook secret. */
    public static final String BY_WEBHOOK = "webhook";
    /** {@code by} of a push with the older single (unnamed) bearer token. */
    public static final String BY_TOKEN = "token";
    /** {@code by} of a push to a coordinator that asks for no credentials. */
    public static final String BY_ANONYMOUS = "anonymous";

    /** @return the record of a manifest pushed */
    public static HistoryRecord pushed(ModuleSpec spec, String revision, String push, Instant at, String by, String source) {
        return new HistoryRecord(spec.module(), revision, push, spec, at, by, source, PushAction.PUSH, null);
    }

    /** @return the record of a rollback: {@code spec} is the one {@code rollbackOf} pushed */
    public static HistoryRecord rolledBack(ModuleSpec spec, String revision, String push, Instant at, String by, String source,
                                           String rollbackOf) {
        return new HistoryRecord(spec.module(), revision, push, spec, at, by, source, PushAction.ROLLBACK, rollbackOf);
    }

    /** @return the record of a delete: no spec */
    public static HistoryRecord deleted(String module, String revision, String push, Instant at, String by, String source) {
        return new HistoryRecord(module, revision, push, null, at, by, source, PushAction.DELETE, null);
    }

    /** @return the action, {@link PushAction#PUSH} when the record names none */
    public PushAction actionOrPush() { return action == null ? PushAction.PUSH : action; }
}
