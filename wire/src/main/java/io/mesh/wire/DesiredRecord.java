package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.mesh.manifest.ModuleSpec;

import java.time.Instant;
import java.util.List;

/**
 * Data of {@code /mesh/desired/<module>}: the desired state of one module, written by the coordinator.
 *
 * <p>A deleted module keeps its desired node as a <em>tombstone</em> ({@code mesh delete}; decision 11): no
 * {@code spec}, and {@code deleted} saying which hosts the module named when it was deleted, so that every agent
 * removes its containers, also one that was down then, and the hosts it named report it. The agent reads a tombstone
 * as a spec that runs nowhere ({@link ModuleSpec#nowhere}), so its containers are {@code removed} like those of a
 * module that left the host.
 *
 * @param module   module name
 * @param revision the push's revision (the {@code X-Mesh-Revision} header or {@code --revision}, else a content hash)
 * @param push     the push node name that last wrote it, such as {@code push-0000000002}
 * @param spec     the module document as validated; {@code null} in a tombstone as stored
 * @param deleted  {@code null}, or the tombstone's facts
 */
public record DesiredRecord(String module, String revision, String push,
                            @JsonInclude(JsonInclude.Include.NON_NULL) ModuleSpec spec,
                            @JsonInclude(JsonInclude.Include.NON_NULL) Deleted deleted) {
    /** A desired state (not a tombstone). */
    public DesiredRecord(String module, String revision, String push, ModuleSpec spec) {
        this(module, revision, push, spec, null);
    }

    /**
     * What a tombstone says.
     *
     * @param hosts the hosts the module named when it was deleted (or {@code ["*"]}): each reports the delete
     * @param at    when the coordinator took the delete
     * @param by    who deleted it ({@link HistoryRecord#by()})
     */
    public record Deleted(List<String> hosts, Instant at, String by) {
        public Deleted {
            hosts = hosts == null ? List.of() : List.copyOf(hosts);
        }

        /** @return true when the module named {@code host} (or every host) when it was deleted */
        public boolean named(String host) {
            return hosts.contains(ModuleSpec.ALL_HOSTS) || hosts.contains(host);
        }
    }

    /**
     * @param module   module name
     * @param revision the delete's revision
     * @param push     the delete's push
     * @param deleted  hosts, time and who
     * @return a tombstone as stored: no spec
     */
    public static DesiredRecord tombstoneOf(String module, String revision, String push, Deleted deleted) {
        return new DesiredRecord(module, revision, push, null, deleted);
    }

    /** @return true for a deleted module's tombstone */
    public boolean tombstone() { return deleted != null; }

    /** @return true when it holds what a reader acts on: a spec, or a delete's tombstone (not a node edited into neither) */
    public boolean complete() { return spec != null || tombstone(); }
}
