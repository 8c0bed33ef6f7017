package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.manifest.Printable;
import io.mesh.manifest.Durations;

import java.time.Duration;

/**
 * The fields an operator's stop request shares ({@code mesh freeze}, {@code mesh hold}, {@code mesh drain}): its
 * {@code reason} and its {@code for}, each refused naming the field and the fix. One rule for all three, so that a
 * reason or a duration one of them takes the others take too.
 */
final class OperatorWords {
    /** The longest reason: one line (a newline or an escape would forge rows in {@code mesh held} and lines in the logs). */
    static final int MAX_REASON = 500;
    /** The longest a freeze, hold or drain may last by itself: it ends in a time an operator still remembers it. */
    static final Duration MAX_LENGTH = Duration.ofDays(366);

    private OperatorWords() {}

    /**
     * @param body    the request
     * @param example a reason to show when it is missing
     * @param carried where the reason shows afterwards, for the message (such as "every frozen module's report carries it")
     * @return the request's {@code reason}, stripped
     * @throws Refusal it is missing, not text, blank, longer than {@link #MAX_REASON} or not one line
     */
    static String reason(JsonNode body, String example, String carried) {
        JsonNode reason = body.get("reason");
        if (reason == null || reason.isNull() || !reason.isTextual() || reason.asText().isBlank()) {
            throw Refusal.badRequest("reason", "reason: missing: say why, such as \"" + example + "\"" + (carried == null ? "" : " (" + carried + ")"));
        }
        String r = reason.asText().strip();
        if (r.length() > MAX_REASON || r.codePoints().anyMatch(OperatorWords::hidden)) {
            throw Refusal.badRequest("reason", "reason: must be one line of at most " + MAX_REASON + " characters, with no control or "
                    + "formatting characters (no line or paragraph separator, no direction override)");
        }
        return r;
    }

    /**
     * @return true for a code point that breaks a line or hides what a table shows: a control character, a line or
     *         paragraph separator, a format character (a right-to-left override, a zero-width joiner)
     */
    private static boolean hidden(int cp) {
        int type = Character.getType(cp);
        return Character.isISOControl(cp) || type == Character.FORMAT || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR;
    }

    /**
     * @param node  the request's duration field, or {@code null}
     * @param field its name, for the message ({@code for})
     * @return the duration, or {@code null} when the field is absent or null
     * @throws Refusal it is not a string or not a duration such as {@code 2h}, {@code 30m} or {@code 1h30m}
     */
    static Duration duration(JsonNode node, String field) {
        if (node == null || node.isNull()) return null;
        if (!node.isTextual()) throw Refusal.badRequest(field, field + ": must be a duration as a string, such as \"2h\", \"30m\" or \"1h30m\"");
        try {
            return Durations.parse(node.asText());
        } catch (IllegalArgumentException e) {
            throw Refusal.badRequest(field, field + ": " + e.getMessage().replaceAll("\\p{Cntrl}", "?"));
        }
    }

    /**
     * A hold's or a drain's {@code for}.
     *
     * @param node    the request's {@code for}, or {@code null}
     * @param what    {@code hold} or {@code drain}
     * @param without what leaving {@code for} out does, for the message (such as "hold until mesh release")
     * @return how long it lasts, or {@code null} for until released
     * @throws Refusal as {@link #duration}, or longer than {@link #MAX_LENGTH}
     */
    static Duration lasts(JsonNode node, String what, String without) {
        Duration d = duration(node, "for");
        if (d != null && d.compareTo(MAX_LENGTH) > 0) {
            throw Refusal.badRequest("for", "for: a " + what + " lasts at most " + MAX_LENGTH.toDays() + " days (" + MAX_LENGTH.toHours() + "h), not "
                    + Printable.cut(node.asText()) + ": give a shorter --for, or none to " + without);
        }
        return d;
    }
}
