package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.time.Instant;
import java.util.List;

/**
 * Data of {@code /mesh/audits/audit-<seq>} (persistent, named like a sequential node): the coordinator asks hosts for
 * their ledger's slice of a span ({@code mesh audit}, {@code mesh why}; SPEC.md "Audit", decision 28). Written with one
 * {@link AuditAnswer} child per host, in one transaction, and deleted once the coordinator has judged the answers.
 *
 * @param audit       the node's name, such as {@code audit-0000000003}
 * @param since       the span's start
 * @param until       the span's end
 * @param modules     the modules wanted, or {@code null} for all
 * @param hosts       the hosts asked (one child each)
 * @param requestedAt when the coordinator wrote it (an agent ignores a request older than
 *                    {@link AuditAnswer#MAX_REQUEST_AGE}: its coordinator has given up on it)
 * @param by          the coordinator process and who asked
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AuditRequest(String audit, Instant since, Instant until, List<String> modules, List<String> hosts,
                           Instant requestedAt, ProcessRef by) {}
