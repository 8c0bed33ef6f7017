package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.manifest.Durations;
import io.mesh.manifest.ModuleName;
import io.mesh.manifest.Printable;
import io.mesh.wire.FreezeRecord;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.Set;

/**
 * The body of {@code POST /v1/freezes} (SPEC.md, "Freezes"), checked whole before anything is written:
 * {@code {"module": "m" | "all": true, "for": "2h" | "until": "ISO", "reason": "..."}}.
 *
 * @param target the freeze node's name: the module, or {@link FreezeRecord#ALL}
 * @param reason why, as the operator wrote it (stripped)
 * @param until  when the freeze ends by itself
 */
public record FreezeRequest(String target, String reason, Instant until) {
    /** Longest reason taken, in characters: it travels in every frozen module's report. */
    public static final int MAX_REASON = 500;
    private static final Set<String> FIELDS = Set.of("module", "all", "for", "until", "reason");
    /** The longest a freeze may last: it always ends by itself, in a time an operator still remembers it. */
    static final java.time.Duration MAX_LENGTH = java.time.Duration.ofDays(366);
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
                throw Refusal.badRequest(name, "unknown field '" + Printable.cut(name) + "': a freeze takes module or all, for or until, and reason, such as " + EXAMPLE);
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
        JsonNode forNode = json.get("for"), untilNode = json.get("until");
        boolean hasFor = forNode != null && !forNode.isNull(), hasUntil = untilNode != null && !untilNode.isNull();
        if (hasFor == hasUntil) {
            throw Refusal.badRequest(hasFor ? "until" : "for", (hasFor ? "for and until: give one of them, not both" : "for: missing: say how long the freeze lasts")
                    + " (\"for\":\"2h\" or \"until\":\"2026-12-24T18:00:00Z\"); a freeze always ends by itself");
        }
        Instant until;
        if (hasFor) {
            if (!forNode.isTextual()) throw Refusal.badRequest("for", "for: must be a duration as a string, such as \"2h\", \"30m\" or \"1h30m\"");
            try {
                until = now.plus(Durations.parse(forNode.asText()));
            } catch (IllegalArgumentException e) {
                throw Refusal.badRequest("for", "for: " + e.getMessage().replaceAll("\\p{Cntrl}", "?"));
            }
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
        if (until.isAfter(now.plus(MAX_LENGTH))) {
            throw Refusal.badRequest(hasFor ? "for" : "until", (hasFor ? "for" : "until") + ": a freeze lasts at most "
                    + MAX_LENGTH.toDays() + " days (until " + now.plus(MAX_LENGTH) + "): give a nearer end, and freeze again then if need be");
        }
        JsonNode reason = json.get("reason");
        if (reason == null || reason.isNull() || !reason.isTextual() || reason.asText().isBlank()) {
            throw Refusal.badRequest("reason", "reason: missing: say why, such as \"release weekend\" (every frozen module's report carries it)");
        }
        String r = reason.asText().strip();
        if (r.length() > MAX_REASON || r.codePoints().anyMatch(Character::isISOControl)) {
            throw Refusal.badRequest("reason", "reason: must be one line of at most " + MAX_REASON + " characters");
        }
        return new FreezeRequest(target, r, until);
    }

    /**
     * @param by    who asked, as a push's {@code by}
     * @param since now
     * @return the freeze node's data
     */
    public FreezeRecord record(String by, Instant since) {
        return new FreezeRecord(by, reason, since, until);
    }
}
