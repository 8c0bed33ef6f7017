package io.mesh.coordinator;

import io.mesh.wire.AuditReport;

import java.time.Instant;
import java.util.List;

/**
 * Where the page's "Last 24 hours" ({@link Dashboard}, {@link Timeline}) gets its audit: every host's
 * {@link AuditReport} over a span, as {@code GET /v1/audit} answers it (SPEC.md, "Audit"; decision 28). Given to the
 * coordinator with {@link HttpApi#auditSource(AuditSource)}; without one the section says "audit unavailable".
 *
 * <p>The page asks at most once a minute ({@link Dashboard#AUDIT_CACHE}) and from its own thread, waiting at most
 * {@link Dashboard#AUDIT_WAIT} for the answer: an implementation may block while it asks the hosts, and should give a
 * host that does not answer in its time as {@link AuditReport#unanswered} rather than wait for it.
 */
@FunctionalInterface
public interface AuditSource {
    /**
     * @param from the span's start
     * @param to   the span's end (now, when the page asks)
     * @return one report per host, in the order the page should list them
     * @throws Exception when the audit cannot be made at all; the page says so and shows the rest
     */
    List<AuditReport> audit(Instant from, Instant to) throws Exception;
}
