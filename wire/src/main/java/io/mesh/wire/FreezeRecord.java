package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.time.Instant;

/**
 * Data of {@code /mesh/freezes/<module>} and {@code /mesh/freezes/_all} (persistent, written by the coordinator;
 * SPEC.md, "Freezes"; docs/decisions/0014-freezes.md): while it lasts, agents apply none of the module's changes.
 *
 * @param by     who froze it, as a push's {@code by} reads ({@link HistoryRecord#by()})
 * @param reason why, as the operator wrote it
 * @param since  when it was written
 * @param until  when it ends by itself (the agents' clocks decide); a freeze never lasts for ever
 */
@JsonPropertyOrder({"by", "reason", "since", "until"})
public record FreezeRecord(String by, String reason, Instant since, Instant until) {
    /** Name of the node that freezes every module: {@code _all} cannot be a module name (they start with a-z or 0-9). */
    public static final String ALL = "_all";
    /** The reason of a freeze node whose data cannot be read. */
    public static final String UNREADABLE = "its freeze node's data cannot be read: treated as frozen until thawed";

    /**
     * @param now the reader's clock
     * @return true while the freeze holds: {@code until} not reached ({@code null} until, an unreadable node, holds)
     */
    public boolean activeAt(Instant now) {
        return until == null || now.isBefore(until);
    }

    /**
     * A freeze node whose data does not parse still means frozen (a reader that cannot tell whether the module is
     * frozen must not apply its changes); {@code mesh thaw} deletes it.
     *
     * @return a record with {@link #UNREADABLE} as its reason and no end
     */
    public static FreezeRecord unreadable() {
        return new FreezeRecord(null, UNREADABLE, null, null);
    }

    /** @return how a report or the client names it: {@code frozen: REASON, until T} */
    public String describe() {
        return "frozen: " + reason + (until == null ? "" : ", until " + until) + (by == null ? "" : " (by " + by + ")");
    }
}
