package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.manifest.CronTimes;
import io.mesh.manifest.Durations;
import io.mesh.manifest.ModuleName;
import io.mesh.manifest.Printable;
import io.mesh.wire.FreezeRecord;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.Set;

/**
 * The body of {@code POST /v1/freezes} (SPEC.md, "Freezes" and "The rest of the operator's stack"), checked whole
 * before anything is written: {@code {"module": "m" | "all": true, "for": "2h" | "until": "ISO", "reason": "..."}},
 * or a recurring freeze {@code {"module"|"all", "cron": "0 18 * * 5", "for": "14h", "timezone"?: "Europe/Berlin",
 * "until"?: "ISO", "reason"}} (decision 37).
 *
 * @param target   the freeze node's name: the module, or {@link FreezeRecord#ALL}
 * @param reason   why, as the operator wrote it (stripped)
 * @param until    when the freeze ends by itself; for a recurring one, when the recurrence ends ({@code null}: at a thaw)
 * @param cron     a recurring freeze's starts, or {@code null}
 * @param timezone the zone its fields are read in, or {@code null} for UTC
 * @param lasts    each span's length of a recurring freeze, as written, or {@code null}
 */
public record FreezeRequest(String target, String reason, Instant until, String cron, String timezone, String lasts) {
    private static final Set<String> FIELDS = Set.of("module", "all", "for", "until", "reason", "cron", "timezone");
    /**
     * How much shorter than the shortest gap between two starts a span must be: a start is judged by ZooKeeper's clock at
     * its latest and an end at its earliest (decision 27), each off by up to half a write's round trip.
     */
    static final java.time.Duration GAP_MARGIN = java.time.Duration.ofSeconds(5);
    /** How many of a rule's next starts are read for the shortest gap between two. */
    private static final int GAPS_READ = 500;
    private static final String EXAMPLE = "{\"module\":\"store\",\"for\":\"2h\",\"reason\":\"release weekend\"}";

    /**
     * @param json the body as JSON, or {@code null} when it is not a JSON object
     * @param now  the coordinator's clock: {@code for} counts from it, and {@code until} must be after it
     * @return the request
     * @throws Refusal 400 naming the field and the fix
     */
    public static FreezeRequest parse(JsonNode json, Instant now) {
        if (json == null || !json.isObject()) throw Refusal.badRequest("body", "the body must be a JSON object such as " + EXAMPLE);
        for (Iterator<String> f = json.fieldNames(); f.hasNext(); ) {
            String name = f.next();
            if (!FIELDS.contains(name)) {
                throw Refusal.badRequest(name, "unknown field '" + Printable.cut(name) + "': a freeze takes module or all, for or until, and reason (a recurring one cron, for, "
                        + "and timezone), such as " + EXAMPLE);
            }
        }
        JsonNode module = json.get("module"), all = json.get("all");
        boolean everyModule = all != null && !all.isNull();
        if (everyModule && !(all.isBoolean() && all.booleanValue())) {
            throw Refusal.badRequest("all", "all: must be true (to freeze every module), or left out and module given");
        }
        String target;
        if (module != null && !module.isNull()) {
            if (everyModule) throw Refusal.badRequest("module", "module and all: give one of them, not both (mesh freeze MODULE, or mesh freeze --all)");
            if (!module.isTextual() || !ModuleName.matches(module.asText())) {
                throw Refusal.badRequest("module", "module: must be a module name matching " + ModuleName.REGEX + ", such as \"store\"; got "
                        + Printable.cut(module.toString()));
            }
            target = module.asText();
        } else if (everyModule) {
            target = FreezeRecord.ALL;
        } else {
            throw Refusal.badRequest("module", "module: missing: name the module to freeze (\"module\":\"store\"), or freeze every module (\"all\":true)");
        }
        String reason = reason(json);
        JsonNode cronNode = json.get("cron");
        if (cronNode != null && !cronNode.isNull()) return recurring(json, target, reason, cronNode, now);
        JsonNode zoneNode = json.get("timezone");
        if (zoneNode != null && !zoneNode.isNull()) {
            throw Refusal.badRequest("timezone", "timezone: only a recurring freeze takes one (with cron, such as \"cron\":\"0 18 * * 5\"); "
                    + "a one-off freeze's until is a UTC time");
        }
        JsonNode forNode = json.get("for"), untilNode = json.get("until");
        boolean hasFor = forNode != null && !forNode.isNull(), hasUntil = untilNode != null && !untilNode.isNull();
        if (hasFor == hasUntil) {
            throw Refusal.badRequest(hasFor ? "until" : "for", (hasFor ? "for and until: give one of them, not both" : "for: missing: say how long the freeze lasts")
                    + " (\"for\":\"2h\" or \"until\":\"2026-12-24T18:00:00Z\"); a freeze always ends by itself");
        }
        Instant until;
        if (hasFor) {
            until = now.plus(OperatorWords.duration(forNode, "for"));
        } else {
            if (!untilNode.isTextual()) throw Refusal.badRequest("until", "until: must be an ISO-8601 UTC time as a string, such as \"2026-12-24T18:00:00Z\"");
            try {
                until = Instant.parse(untilNode.asText());
            } catch (DateTimeParseException e) {
                throw Refusal.badRequest("until", "until: '" + Printable.cut(untilNode.asText()) + "' is not an ISO-8601 UTC time: write it such as \"2026-12-24T18:00:00Z\"");
            }
            if (!until.isAfter(now)) {
                throw Refusal.badRequest("until", "until: " + until + " has passed (it is " + now + " here): give a time to come, or use for");
            }
        }
        if (until.isAfter(now.plus(OperatorWords.MAX_LENGTH))) {
            throw Refusal.badRequest(hasFor ? "for" : "until", (hasFor ? "for" : "until") + ": a freeze lasts at most "
                    + OperatorWords.MAX_LENGTH.toDays() + " days (until " + now.plus(OperatorWords.MAX_LENGTH) + "): give a nearer end, and freeze again then if need be");
        }
        return new FreezeRequest(target, reason, until, null, null, null);
    }

    private static String reason(JsonNode json) {
        return OperatorWords.reason(json, "release weekend", "every frozen module's report carries it");
    }

    /**
     * A recurring freeze (decision 37): {@code cron} and {@code for} required, {@code timezone} and {@code until}
     * (the recurrence's end) optional. A span as long as the shortest gap between two starts would never end, and is
     * refused: that is a freeze until thawed, which {@code mesh freeze --for} says plainly.
     */
    private static FreezeRequest recurring(JsonNode json, String target, String reason, JsonNode cronNode, Instant now) {
        String example = " such as \"cron\":\"0 18 * * 5\",\"for\":\"14h\" (Fridays from 18:00 for 14 hours)";
        if (!cronNode.isTextual() || cronNode.asText().isBlank()) throw Refusal.badRequest("cron", "cron: must be a cron expression as a string," + example);
        String cron = cronNode.asText().trim();
        if (cron.split("\\s+").length != 5) {
            throw Refusal.badRequest("cron", "cron: '" + Printable.cut(cron) + "' is not a 5-field cron expression (minute hour day-of-month "
                    + "month day-of-week)," + example);
        }
        try {
            CronTimes.check(cron);
        } catch (IllegalArgumentException e) {
            throw Refusal.badRequest("cron", "cron: '" + Printable.cut(cron) + "' is not a valid cron expression: "
                    + String.valueOf(e.getMessage()).replaceAll("\\p{Cntrl}", "?") + ";" + example);
        }
        ZoneId zone = ZoneOffset.UTC;
        String timezone = null;
        JsonNode zoneNode = json.get("timezone");
        if (zoneNode != null && !zoneNode.isNull()) {
            try {
                zone = ZoneId.of(zoneNode.asText());
                timezone = zoneNode.asText();
            } catch (DateTimeException e) {
                throw Refusal.badRequest("timezone", "timezone: '" + Printable.cut(zoneNode.asText()) + "' is not an IANA zone id: write it such as "
                        + "\"Europe/Berlin\" or \"UTC\" (UTC when left out)");
            }
        }
        JsonNode forNode = json.get("for");
        if (forNode == null || forNode.isNull()) {
            throw Refusal.badRequest("for", "for: missing: a recurring freeze says how long each span lasts," + example);
        }
        Duration length = OperatorWords.duration(forNode, "for");
        if (length.compareTo(OperatorWords.MAX_LENGTH) > 0) {
            throw Refusal.badRequest("for", "for: a span lasts at most " + OperatorWords.MAX_LENGTH.toDays() + " days ("
                    + OperatorWords.MAX_LENGTH.toHours() + "h), as a freeze does: give a shorter one");
        }
        Instant until = null;
        JsonNode untilNode = json.get("until");
        if (untilNode != null && !untilNode.isNull()) {
            try {
                until = Instant.parse(untilNode.asText());
            } catch (DateTimeParseException e) {
                throw Refusal.badRequest("until", "until: '" + Printable.cut(untilNode.asText()) + "' is not an ISO-8601 UTC time: write it such as "
                        + "\"2027-06-30T00:00:00Z\" (a recurring freeze's until ends the recurrence; leave it out to recur until thawed)");
            }
            if (!until.isAfter(now)) throw Refusal.badRequest("until", "until: " + until + " has passed (it is " + now + " here): give a time to come");
        }
        Duration gap = shortestGap(cron, zone, now);
        if (gap == null) {
            throw Refusal.badRequest("cron", "cron: '" + Printable.cut(cron) + "' has no time to come: write one that recurs," + example);
        }
        if (length.compareTo(gap.minus(GAP_MARGIN)) > 0) {
            throw Refusal.badRequest("for", "for: " + forNode.asText() + " is as long as the shortest gap between two starts of '" + cron + "' ("
                    + Durations.format(gap) + ", less " + GAP_MARGIN.toSeconds() + "s: a start is obeyed a little early and an end a little "
                    + "late): the module would never thaw; give a shorter for, or freeze with --for/--until instead");
        }
        Instant first = CronTimes.next(cron, zone, now).map(t -> t.toInstant()).orElse(null);
        if (until != null && (first == null || !first.isBefore(until))) {
            throw Refusal.badRequest("until", "until: " + until + " comes before the first start of '" + cron + "' (" + first
                    + "): the freeze would never be in force; give a later until, or none to recur until thawed");
        }
        return new FreezeRequest(target, reason, until, cron, timezone, forNode.asText());
    }

    /** @return the shortest time between two of the rule's next {@value #GAPS_READ} starts, or {@code null} with fewer than two */
    private static Duration shortestGap(String cron, ZoneId zone, Instant now) {
        Duration shortest = null;
        Instant previous = CronTimes.next(cron, zone, now).map(t -> t.toInstant()).orElse(null);
        for (int i = 0; previous != null && i < GAPS_READ; i++) {
            Instant next = CronTimes.next(cron, zone, previous).map(t -> t.toInstant()).orElse(null);
            if (next == null) break;
            Duration gap = Duration.between(previous, next);
            if (shortest == null || gap.compareTo(shortest) < 0) shortest = gap;
            previous = next;
        }
        return shortest;
    }

    /**
     * @param by    who asked, as a push's {@code by}
     * @param since now
     * @return the freeze node's data
     */
    public FreezeRecord record(String by, Instant since) {
        return new FreezeRecord(by, reason, since, until, cron, timezone, lasts);
    }
}
