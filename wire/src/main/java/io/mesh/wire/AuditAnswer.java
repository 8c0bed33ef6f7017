package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.time.Duration;

/**
 * Data of {@code /mesh/audits/<audit>/<host>}: {@code pending} as the coordinator writes it, then the answer of that
 * host's agent, written with a {@code setData} at the version it read once every page child
 * ({@code page-<n>}, {@link AuditPage}) is written: a coordinator that reads {@code answered} finds every page.
 *
 * @param audit the audit's name
 * @param host  the host
 * @param state {@link AuditState}
 * @param pages how many page children hold the slice ({@code page-0} ...); 0 unless answered
 * @param error why the agent gave no slice ({@code failed}), else {@code null}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AuditAnswer(String audit, String host, AuditState state, int pages, String error) {
    /**
     * An agent answers no request older than this (by its {@code requestedAt}): the coordinator waits seconds, so such a
     * request is one whose coordinator gave up (or died) before deleting it.
     */
    public static final Duration MAX_REQUEST_AGE = Duration.ofMinutes(5);

    /** @return the node the coordinator writes */
    public static AuditAnswer pending(String audit, String host) {
        return new AuditAnswer(audit, host, AuditState.PENDING, 0, null);
    }

    /** @return this request answered in {@code pages} page children */
    public AuditAnswer answered(int pages) {
        return new AuditAnswer(audit, host, AuditState.ANSWERED, pages, null);
    }

    /** @return this request not answerable, for {@code why} */
    public AuditAnswer failed(String why) {
        return new AuditAnswer(audit, host, AuditState.FAILED, 0, why);
    }
}
