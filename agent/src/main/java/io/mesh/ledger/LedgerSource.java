package io.mesh.ledger;

import io.mesh.wire.LedgerEntry;

import java.time.Instant;
import java.util.List;
import java.util.Set;

/** The lines of this host's ledger that bear on a span, as {@link io.mesh.wire.AuditChecker#check} takes them (decision 28). */
public interface LedgerSource {
    /**
     * @param from    the span's start
     * @param to      the span's end
     * @param modules the modules wanted, or {@code null} for all (freezes of {@code _all} and gaps always come)
     * @return the lines in the span, the openings before it still open at its start, and the lines up to
     *         {@link io.mesh.wire.AuditChecker#LEFT_STOPPED_AFTER} after it; a line that does not read or verify
     *         comes as a {@code gap} naming its file and line
     */
    List<LedgerEntry> slice(Instant from, Instant to, Set<String> modules);
}
