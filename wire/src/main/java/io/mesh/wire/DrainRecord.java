package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.time.Instant;

/**
 * Data of {@code /mesh/drains/<host>} (persistent, written by the coordinator; SPEC.md "The rest of the operator's
 * stack"; docs/decisions/0037-recurring-freezes-drains-and-one-budget.md): the host is in maintenance. Its agent holds
 * every mesh container of the host as an operator's hold ({@link HeldRecord.OperatorHold#ofDrain()}), no window runs
 * there, and rollouts pass over it.
 *
 * @param by     who drained it, as a push's {@code by} reads
 * @param reason why, as the operator wrote it
 * @param since  when, by ZooKeeper's clock
 * @param until  when it ends by itself; {@code null}: at {@code mesh undrain}
 * @param stop   true when the holds stop their containers ({@code --stop}); {@code null} otherwise
 */
@JsonPropertyOrder({"by", "reason", "since", "until", "stop"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record DrainRecord(String by, String reason, Instant since, Instant until, Boolean stop) {
    /** How a drain's hold's reason begins: {@code mesh held} and reports say the container is held for a drain. */
    public static final String REASON_PREFIX = "drain: ";

    /**
     * A drain node whose data does not parse still drains (a reader that cannot tell holds, as for freezes and held
     * nodes); {@code mesh undrain} deletes it.
     *
     * @return a drain with no end and no stop
     */
    public static DrainRecord unreadable() {
        return new DrainRecord("unknown", "its drain node's data cannot be read: held until mesh undrain", null, null, null);
    }

    /** @return true when its holds stop their containers */
    @JsonIgnore
    public boolean stops() { return Boolean.TRUE.equals(stop); }

    /**
     * @param now ZooKeeper's clock at its earliest (decision 27)
     * @return true while it holds: no {@code until}, or {@code until} not reached
     */
    public boolean inForceAt(Instant now) { return until == null || now.isBefore(until); }

    /** @return the operator's hold this drain places on each container of its host: not yet confirmed */
    public HeldRecord.OperatorHold hold() {
        return new HeldRecord.OperatorHold(by, REASON_PREFIX + reason, since, until, stops() ? Boolean.TRUE : null, null, null, Boolean.TRUE);
    }

    /** @return how a window's skip and {@code mesh why} name it */
    public String describe() {
        return "host drained by " + by + ": " + reason + " (since " + since + (until == null ? ", until mesh undrain" : ", until " + until) + ")";
    }
}
