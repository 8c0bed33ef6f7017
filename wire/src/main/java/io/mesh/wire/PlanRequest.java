package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.mesh.manifest.ModuleSpec;

import java.time.Instant;
import java.util.List;

/**
 * Data of {@code /mesh/plans/<plan>} (persistent, named like a sequential node): a manifest an operator wants to see
 * planned before it is pushed ({@code mesh push FILE --plan}). Written by the coordinator, with one {@link PlanAnswer}
 * child per targeted host, in one transaction; nothing else is written for it (docs/decisions/0012-plans.md).
 *
 * @param plan        the node's name, such as {@code plan-0000000003}
 * @param revision    the revision the push would have ({@code X-Mesh-Revision}, or the content hash)
 * @param requestedAt when the coordinator wrote it
 * @param by          the coordinator process and who asked
 * @param modules     the modules as validated, in document order
 * @param hosts       the hosts asked (one child each)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PlanRequest(String plan, String revision, Instant requestedAt, ProcessRef by, List<ModuleSpec> modules,
                          List<String> hosts) {}
