package io.mesh.wire;


/**
 * Data of {@code /mesh/desired/<module>}: the desired state of one module, written by the coordinator.
 *
 * @param module   module name
 * @param revision the push's revision (the {@code X-Mesh-Revision} header or {@code --revision}, else a content hash)
 * @param push     the push node name that last wrote it, such as {@code push-0000000002}
 * @param spec     the module document as validated
 */
public record DesiredRecord(String module, String revision, String push, ModuleSpec spec) {}
