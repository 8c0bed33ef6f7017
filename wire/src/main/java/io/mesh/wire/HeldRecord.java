package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.time.Instant;

/**
 * Data of {@code /mesh/held/<host>/<container>}: a container stopped or kept on purpose. Either a window's hold
 * (ephemeral node; {@code schedule} and {@code window} set, {@code hold} null) or an operator's hold made by
 * {@code mesh hold} (persistent node; {@code hold} set, {@code schedule} and {@code window} null). Readers tell them
 * apart with {@link #operatorHold()}; {@code HeldRegistry} is where they are written, read and judged.
 *
 * @param host        host id
 * @param module      module name
 * @param container   Docker name, {@code <module>-<name>}
 * @param containerId Docker container id; for an operator hold the id when the hold was placed, {@code null} when the
 *                    coordinator could not know it
 * @param schedule    schedule name (a window's hold)
 * @param window      window id (a window's hold)
 * @param since       when the window opened, or when the operator placed the hold
 * @param by          the process running the window, or the coordinator that wrote the hold
 * @param hold        the operator's hold, {@code null} for a window's
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record HeldRecord(String host, String module, String container, String containerId, String schedule,
                         String window, Instant since, ProcessRef by, OperatorHold hold) {
    /** Marks the window of a held node whose data could not be read. */
    public static final String UNREADABLE = "unreadable";
    /** How {@link #reason()} begins for an operator's hold: a report's reason says who holds the container. */
    public static final String OPERATOR_REASON = "held by operator ";

    /**
     * A window's hold (SPEC.md, "ZooKeeper layout").
     *
     * @param host        host id
     * @param module      module name
     * @param container   Docker name
     * @param containerId Docker container id
     * @param schedule    schedule name
     * @param window      window id
     * @param since       when the window opened
     * @param by          the process running the window
     */
    public HeldRecord(String host, String module, String container, String containerId, String schedule,
                      String window, Instant since, ProcessRef by) {
        this(host, module, container, containerId, schedule, window, since, by, null);
    }

    /**
     * An operator's hold ({@code mesh hold}), to be written as a persistent node.
     *
     * @param host        host id
     * @param module      module name
     * @param container   Docker name
     * @param containerId the container's id when known, else {@code null}
     * @param by          the coordinator process writing it
     * @param hold        who, why, since and until when
     * @return the record; {@code since} is the hold's
     */
    public static HeldRecord operator(String host, String module, String container, String containerId, ProcessRef by,
                                      OperatorHold hold) {
        return new HeldRecord(host, module, container, containerId, null, null, hold.since(), by, hold);
    }

    /**
     * An operator's hold: SPEC.md's {@code hold: {by, reason, since, until}}, plus whether the agent is to stop the
     * container and when it did (so that it stops it once, not again after a restart).
     *
     * @param by        who placed it: the named token's name (with {@code X-Mesh-User} as a claim), and from where
     * @param reason    why, as the operator wrote it
     * @param since     when it was placed
     * @param until     when it ends by itself; {@code null} for never (until {@code mesh release})
     * @param stop      true when the host's agent stops the container while held ({@code --stop})
     * @param stoppedAt when the agent stopped it, {@code null} before (or without {@code stop})
     * @param confirmed when the host's agent confirmed it under the module's lock and fence: the hold is in force from
     *                  then on (docs/decisions/0025-hold-confirmation.md); {@code null} while only recorded
     * @param drain     true for a hold its host's agent placed for a drain ({@code mesh drain}, decision 37): it
     *                  ends with the drain; {@code null} for {@code mesh hold}'s
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record OperatorHold(String by, String reason, Instant since, Instant until, Boolean stop, Instant stoppedAt,
                               Instant confirmed, Boolean drain) {
        /** A hold of {@code mesh hold}, as read or confirmed. */
        public OperatorHold(String by, String reason, Instant since, Instant until, Boolean stop, Instant stoppedAt, Instant confirmed) {
            this(by, reason, since, until, stop, stoppedAt, confirmed, null);
        }

        /** @return true for a hold a drain placed: it ends with the drain */
        @JsonIgnore
        public boolean ofDrain() { return Boolean.TRUE.equals(drain); }

        /** A hold as the coordinator records it: not yet confirmed by its host. */
        public OperatorHold(String by, String reason, Instant since, Instant until, Boolean stop, Instant stoppedAt) {
            this(by, reason, since, until, stop, stoppedAt, null);
        }

        /** @return true when {@code --stop} was asked */
        @JsonIgnore
        public boolean stops() { return Boolean.TRUE.equals(stop); }

        /**
         * @param now the time to judge at
         * @return true when {@code until} is at or before {@code now}
         */
        public boolean expiredAt(Instant now) { return until != null && !until.isAfter(now); }

        /**
         * @param at when the agent stopped the container
         * @return this hold, recording the stop
         */
        public OperatorHold stoppedAt(Instant at) { return new OperatorHold(by, reason, since, until, stop, at, confirmed, drain); }

        /**
         * @param at when the host's agent confirmed it
         * @return this hold, confirmed
         */
        public OperatorHold confirmedAt(Instant at) { return new OperatorHold(by, reason, since, until, stop, stoppedAt, at, drain); }

        /** @return true once the host's agent confirmed it: in force (SPEC.md "Operator holds") */
        @JsonIgnore
        public boolean isConfirmed() { return confirmed != null; }
    }

    /** @return true for a hold placed by an operator ({@code mesh hold}), false for a window's */
    @JsonIgnore
    public boolean operatorHold() { return hold != null; }

    /**
     * @param now the time to judge at
     * @return true for an operator hold whose {@code until} has passed: it holds nothing any more, even before the
     *         host's agent deletes its node; a window's hold never expires (it ends with its window or session)
     */
    public boolean expiredAt(Instant now) { return hold != null && hold.expiredAt(now); }

    /** @return why the container is held, for a report's reasons */
    public String reason() {
        if (hold != null) {
            return OPERATOR_REASON + hold.by() + ": " + hold.reason() + " (since " + hold.since() + ", until "
                    + (hold.until() == null ? "released" : hold.until()) + ")";
        }
        return UNREADABLE.equals(window) ? "held (its held node's data cannot be read: treated as held)"
                : "held by window " + schedule + " since " + since;
    }

    /**
     * A held node whose data does not parse: it still means held (a reader that cannot tell why a container is held
     * must not take it for broken). Only the host and the container's name are known.
     *
     * @param host      host id
     * @param container Docker name (the node's name)
     * @return a record with {@link #UNREADABLE} as its window and nothing else known
     */
    public static HeldRecord unreadable(String host, String container) {
        return new HeldRecord(host, null, container, null, null, UNREADABLE, null, null);
    }
}
