package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.mesh.manifest.CronTimes;
import io.mesh.manifest.Durations;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Optional;

/**
 * Data of {@code /mesh/freezes/<module>} and {@code /mesh/freezes/_all} (persistent, written by the coordinator;
 * SPEC.md, "Freezes" and "The rest of the operator's stack"; docs/decisions/0014-freezes.md,
 * docs/decisions/0037-recurring-freezes-drains-and-one-budget.md): while it is in force, agents apply none of the
 * module's changes.
 * <p>
 * A freeze is either one span, from {@code since} to {@code until}, or a <b>recurring</b> one ({@code cron} given):
 * in force from each cron time (read in {@code timezone}, UTC when none) for {@code for}, until {@code until} ends the
 * recurrence (none: until thawed). Whether one is in force is asked with ZooKeeper's clock at its earliest and at its
 * latest (decision 27): a span starts when the latest reaches it and ends when the earliest does, so an agent obeys a
 * freeze a little early and a little late, never late and early.
 *
 * @param by       who froze it, as a push's {@code by} reads ({@link HistoryRecord#by()})
 * @param reason   why, as the operator wrote it
 * @param since    when it was written; in a report's {@code freeze}, when its span began
 * @param until    when it ends by itself; for a recurring freeze, when the recurrence ends ({@code null}: never); in a
 *                 report's {@code freeze}, when the span in force ends
 * @param cron     five-field cron expression of a recurring freeze's starts; {@code null} for one span
 * @param timezone IANA zone the cron fields are read in; {@code null} for UTC
 * @param lasts    how long each span of a recurring freeze lasts, such as {@code 30m} (JSON {@code for})
 */
@JsonPropertyOrder({"by", "reason", "since", "until", "cron", "timezone", "for"})
public record FreezeRecord(String by, String reason, Instant since, Instant until,
                           @JsonInclude(JsonInclude.Include.NON_NULL) String cron,
                           @JsonInclude(JsonInclude.Include.NON_NULL) String timezone,
                           @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("for") String lasts) {
    /** Name of the node that freezes every module: {@code _all} cannot be a module name (they start with a-z or 0-9). */
    public static final String ALL = "_all";
    /** The reason of a freeze node whose data cannot be read. */
    public static final String UNREADABLE = "its freeze node's data cannot be read: treated as frozen until thawed";

    /** A freeze of one span. */
    public FreezeRecord(String by, String reason, Instant since, Instant until) {
        this(by, reason, since, until, null, null, null);
    }

    /** @return true for a recurring freeze ({@code cron} given) */
    @JsonIgnore
    public boolean recurring() { return cron != null; }

    /**
     * @param now the reader's clock
     * @return true while the freeze holds, judged with one clock reading ({@link #inForce(Instant, Instant)})
     */
    public boolean activeAt(Instant now) {
        return inForce(now, now).isPresent();
    }

    /**
     * The rule. One span holds until {@code until} ({@code null} until, an unreadable node: holds). A recurring freeze
     * holds from the last cron time at or before {@code latest} for {@code for}, if that cron time is before the
     * recurrence's {@code until}. A recurring node whose rule cannot be read holds, as an unreadable node does.
     *
     * @param earliest the earliest ZooKeeper's clock may read now: ends are judged by it
     * @param latest   the latest it may read now: a recurring freeze's starts are judged by it
     * @return the freeze in force, as a report names it: a recurring freeze's span, with its start as {@code since}
     *         and its end as {@code until}; or empty
     */
    public Optional<FreezeRecord> inForce(Instant earliest, Instant latest) {
        if (!recurring()) return until == null || earliest.isBefore(until) ? Optional.of(this) : Optional.empty();
        Optional<Span> span = span(latest);
        if (span.isEmpty()) return Optional.empty();
        Span s = span.get();
        // in force with no end: a reader that cannot tell when it ends must not set a timer at an until it cannot judge
        if (s.unreadable()) return Optional.of(new FreezeRecord(by, reason, since, null, cron, timezone, lasts));
        return earliest.isBefore(s.end()) ? Optional.of(new FreezeRecord(by, reason, s.start(), s.end(), cron, timezone, lasts)) : Optional.empty();
    }

    /**
     * @param after a point in time
     * @return a recurring freeze's next start strictly after {@code after}, before the recurrence's end; empty for one
     *         span, past the recurrence's end, or a rule that cannot be read
     */
    public Optional<Instant> nextStart(Instant after) {
        if (!recurring()) return Optional.empty();
        try {
            return CronTimes.next(cron, zone(), after).map(t -> t.toInstant()).filter(t -> until == null || t.isBefore(until));
        } catch (IllegalArgumentException | DateTimeException e) {
            return Optional.empty();
        }
    }

    /**
     * A moment a freeze begins or ends holding, for the webhooks' {@code freeze.started} and {@code freeze.ended}.
     *
     * @param at      when
     * @param started true for a span's start, false for an end
     * @param span    the span that starts or ends (its {@code since} and {@code until})
     */
    public record Boundary(Instant at, boolean started, FreezeRecord span) {}

    /**
     * Where the freeze starts or stops holding in {@code (after, upTo]}, in order: one span's {@code until}; each span
     * of a recurring freeze, its start and its end. A freeze whose rule or end cannot be read has none.
     *
     * @param after the last moment already announced
     * @param upTo  now
     * @param most  how many at most (the newest are dropped: the caller announces the rest at its next look)
     * @return the boundaries, oldest first
     */
    public java.util.List<Boundary> boundaries(Instant after, Instant upTo, int most) {
        java.util.List<Boundary> out = new java.util.ArrayList<>();
        Instant t = after;
        FreezeRecord span = inForce(t, t).orElse(null);
        while (out.size() < most) {
            if (span != null) {
                if (span.until() == null || span.until().isAfter(upTo)) break; // holds past now: nothing more to announce
                out.add(new Boundary(span.until(), false, span));
                t = span.until();
            }
            Instant start = nextStart(t).orElse(null);
            if (start == null || start.isAfter(upTo) || out.size() >= most) break;
            span = inForce(start, start).orElse(null);
            if (span == null || span.until() == null) break;
            out.add(new Boundary(start, true, span));
        }
        return out;
    }

    /**
     * @return each span's length of a recurring freeze
     * @throws IllegalArgumentException {@code for} does not read as a duration
     */
    public Duration spanLength() { return Durations.parse(lasts); }

    /**
     * A recurring freeze's span that began at or before {@code latest}: its last cron time, and that plus {@code for}.
     *
     * @return the span, one marked unreadable when the rule cannot be read, or empty before the first cron time or
     *         at or past the recurrence's end
     */
    private Optional<Span> span(Instant latest) {
        try {
            Optional<Instant> start = CronTimes.last(cron, zone(), latest).filter(t -> until == null || t.isBefore(until));
            Duration length = spanLength();
            return start.map(s -> new Span(s, s.plus(length), false));
        } catch (IllegalArgumentException | DateTimeException | NullPointerException e) {
            // Written by hand or by a later mesh: a reader that cannot tell applies nothing (decision 14).
            return Optional.of(new Span(null, null, true));
        }
    }

    private record Span(Instant start, Instant end, boolean unreadable) {}

    private ZoneId zone() { return timezone == null ? ZoneOffset.UTC : ZoneId.of(timezone); }

    /**
     * A freeze node whose data does not parse still means frozen (a reader that cannot tell whether the module is
     * frozen must not apply its changes); {@code mesh thaw} deletes it.
     *
     * @return a record with {@link #UNREADABLE} as its reason and no end
     */
    public static FreezeRecord unreadable() {
        return new FreezeRecord(null, UNREADABLE, null, null);
    }

    /** @return how a report or the client names it: {@code frozen: REASON, until T} (a recurring freeze's span adds its rule) */
    public String describe() {
        return "frozen: " + reason + (until == null ? "" : ", until " + until) + (recurring() ? " (every '" + cron + "'"
                + (timezone == null ? "" : " " + timezone) + " for " + lasts + ")" : "") + (by == null ? "" : " (by " + by + ")");
    }
}
