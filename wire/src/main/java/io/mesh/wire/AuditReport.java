package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.time.Instant;
import java.util.List;

/**
 * What {@code mesh audit} found on one host (SPEC.md, "Audit"): each window, operator hold and freeze in the span,
 * {@code ok} or its violations, and every violation with the ledger line (a Docker event, or the call) that shows it.
 *
 * @param host        the host
 * @param from        the span's start
 * @param to          the span's end
 * @param coveredFrom the ledger's first line: before it the host kept no ledger (not a gap: nothing was running to
 *                    keep one); {@code null} when the ledger is empty
 * @param items       windows, holds and freezes that overlap the span, oldest first
 * @param violations  every violation, oldest first
 * @param error       why the host gave no ledger (did not answer in time, failed); then the other fields are empty
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AuditReport(String host, Instant from, Instant to, Instant coveredFrom, List<Item> items,
                          List<Violation> violations, String error) {

    /** The exit code of a clean audit. */
    public static final int CLEAN = 0;
    /** The exit code when any host shows a violation other than a gap. */
    public static final int VIOLATIONS = 1;
    /** The exit code when the only findings are gaps or hosts that did not answer. */
    public static final int GAPS_ONLY = 3;

    /** @return a host's report that says why it has no ledger to show */
    public static AuditReport unanswered(String host, Instant from, Instant to, String error) {
        return new AuditReport(host, from, to, null, List.of(), List.of(), error);
    }

    /**
     * A window, an operator's hold or a freeze, as the ledger shows it.
     *
     * @param type       {@code window}, {@code hold}, {@code freeze} or {@code apply}
     * @param id         the window id, {@code hold:<container>:<by>}, {@code freeze:<module>:<since>} or
     *                   {@code apply:<module>:<push>}
     * @param module     the module ({@code _all} for a freeze of every module)
     * @param schedule   a window's schedule
     * @param by         a hold's or freeze's {@code by}; an apply's push
     * @param reason     a hold's or freeze's reason
     * @param from       opened
     * @param to         closed; {@code null} while open
     * @param containers the held containers (a freeze: none)
     * @param stops      Docker {@code stop} events of those containers made by the window (or the hold's {@code --stop})
     * @param starts     Docker {@code start} events of those containers made by the window
     * @param status     {@code ok}, {@code violations} or {@code open} (its end, or 60 s after it, not yet in the ledger)
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Item(String type, String id, String module, String schedule, String by, String reason, Instant from,
                       Instant to, List<String> containers, int stops, int starts, String status) {}

    /**
     * One violation.
     *
     * @param kind      SPEC's kind
     * @param module    the module ({@code null} for a gap)
     * @param container the container ({@code null} for a gap)
     * @param at        when
     * @param item      the id of the window, hold or freeze it breaks, or {@code null}
     * @param message   what happened, in a sentence
     * @param evidence  the ledger line that shows it: the Docker event, else the call, else the gap
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Violation(AuditViolationKind kind, String module, String container, Instant at, String item,
                            String message, LedgerEntry evidence) {}

    /**
     * @param reports every host's report
     * @return SPEC's exit code: {@link #VIOLATIONS} when any violation is not a gap, {@link #GAPS_ONLY} when there are
     *         gaps or hosts that did not answer, else {@link #CLEAN}
     */
    public static int exitCode(List<AuditReport> reports) {
        boolean gaps = false;
        for (AuditReport r : reports) {
            if (r.error() != null) gaps = true;
            for (Violation v : r.violations()) {
                if (v.kind() == AuditViolationKind.GAP) gaps = true;
                else return VIOLATIONS;
            }
        }
        return gaps ? GAPS_ONLY : CLEAN;
    }
}
