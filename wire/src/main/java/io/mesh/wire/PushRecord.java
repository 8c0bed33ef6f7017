package io.mesh.wire;

import java.time.Instant;
import java.util.List;

/**
 * Data of {@code /mesh/pushes/push-<seq>}: one push, written in the same transaction as its desired nodes.
 *
 * @param push       the node name, such as {@code push-0000000002}
 * @param revision   the revision it carries
 * @param modules    names of the modules it wrote
 * @param receivedAt when the coordinator took it
 */
public record PushRecord(String push, String revision, List<String> modules, Instant receivedAt) {}
