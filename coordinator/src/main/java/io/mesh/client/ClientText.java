package io.mesh.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.wire.PushState;
import io.mesh.manifest.WireName;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * How the commands write the coordinator's JSON as text: a push target's progress ({@link #describe}), a refusal's
 * errors, an offline agent's last known window, ages, joined arrays, padding. Shared by the commands and the
 * {@link Table} they print.
 */
final class ClientText {
    private ClientText() {}

    /**
     * @param e one entry of a 400's {@code errors}: {@code {document, field, message}}
     * @return {@code document N, field: message} ({@code field: message} for errors about the request itself)
     */
    static String formatError(JsonNode e) {
        int doc = e.path("document").asInt();
        String field = e.path("field").asText("");
        String message = e.path("message").asText("");
        if (doc <= 0) return (field.isEmpty() ? "request" : field) + ": " + message;
        return "document " + doc + (field.isEmpty() ? "" : ", " + field) + ": " + message;
    }

    /**
     * @param target a push status target: {@code state} is {@code pending | applied | deferred | failed | superseded}
     * @return the progress text: {@code pending}, {@code pending (pulling IMAGE (3 of 7 layers))}, {@code applied r2}, {@code deferred (window S W since T)},
     *         {@code deferred (frozen: REASON, until T)}, {@code failed: E},
     *         {@code superseded by push-N}; any other state (one this version does not know) as it is named
     */
    static String describe(JsonNode target) {
        String text = target.path("state").asText();
        return switch (WireName.of(PushState.class, text)) {
            case APPLIED -> text + " " + target.path("revision").asText();
            case DEFERRED, FAILED -> text + detailSuffix(text, target);
            case SUPERSEDED -> detail(text, target);
            case WAITING -> text + (target.hasNonNull("rollout") ? " (" + target.path("rollout").asText() + ")" : "");
            case EXPIRED -> text + " (no agent)";
            case PENDING -> text + detailSuffix(text, target);
            default -> text;
        };
    }

    /**
     * @param k a {@code FleetStatus.LastKnownWindow}
     * @return {@code agent offline; last known: window W (S) holding C since T (from its last report)}
     */
    static String lastKnown(JsonNode k) {
        List<String> held = new ArrayList<>();
        k.path("held").forEach(h -> held.add(h.asText()));
        return "agent offline; last known: window " + k.path("window").asText() + " (" + k.path("schedule").asText() + ") holding "
                + (held.isEmpty() ? "nothing" : String.join(", ", held)) + (k.hasNonNull("since") ? " since " + text(k.path("since")) : "")
                + ("report".equals(k.path("from").asText()) ? " (from its last report)" : " (its window node went with its session)");
    }

    /**
     * @return {@code , N drained}, {@code , N superseded}, {@code , N cancelled}, {@code , N expired} for those a push's
     *         {@code counts} has, else nothing
     */
    static String superseded(JsonNode counts) {
        StringBuilder b = new StringBuilder();
        for (PushState s : List.of(PushState.DRAINED, PushState.SUPERSEDED, PushState.CANCELLED, PushState.EXPIRED)) {
            int n = count(counts, s);
            if (n > 0) b.append(", ").append(n).append(' ').append(s.wire());
        }
        return b.toString();
    }

    static String detailSuffix(String state, JsonNode t) {
        String d = detail(state, t);
        if (d.isEmpty()) return "";
        return WireName.of(PushState.class, state) == PushState.FAILED ? ": " + d : " (" + d + ")";
    }

    /** @return the number of targets in {@code state}, from a push's {@code counts} */
    static int count(JsonNode counts, PushState state) {
        return counts.path(state.wire()).asInt();
    }

    static String detail(String state, JsonNode t) {
        // What the host's apply is doing while it is not done (decision 32): pulling, waiting for health, the fence, the lock.
        if (WireName.of(PushState.class, state) == PushState.PENDING) return t.hasNonNull("detail") ? t.path("detail").asText() : "";
        if (WireName.of(PushState.class, state) == PushState.FAILED) {
            // A push that failed there and that a newer one then replaced: said, as the newer one runs or waits there.
            String replaced = t.hasNonNull("supersededBy") ? " (then replaced by " + t.path("supersededBy").asText() + ")" : "";
            return (t.hasNonNull("error") ? t.path("error").asText() : "") + replaced;
        }
        if (WireName.of(PushState.class, state) == PushState.SUPERSEDED) {
            return "superseded" + (t.hasNonNull("supersededBy") ? " by " + t.path("supersededBy").asText() : "");
        }
        if (WireName.of(PushState.class, state) == PushState.EXPIRED) return "no agent runs there";
        JsonNode f = t.path("freeze");
        if (f.isObject()) return "frozen: " + f.path("reason").asText() + (f.hasNonNull("until") ? ", until " + f.path("until").asText() : "");
        JsonNode w = t.path("window");
        if (w.isObject()) return "window " + window(w);
        // Deferred with no window: held by an operator (mesh hold); the held container's reason names the hold.
        for (JsonNode c : t.path("containers")) {
            if ("held".equals(c.path("action").asText()) && c.path("reasons").size() > 0) {
                return c.path("container").asText() + " " + c.path("reasons").get(0).asText();
            }
        }
        return "";
    }

    /** @return an open window as {@code SCHEDULE WINDOW since SINCE} */
    static String window(JsonNode w) {
        return w.path("schedule").asText() + " " + w.path("window").asText() + " since " + w.path("since").asText();
    }

    static String by(JsonNode by) {
        if (by == null || by.isMissingNode() || by.isNull()) return "-";
        return by.path("pid").asText() + (by.hasNonNull("process") ? " (" + by.path("process").asText() + ")" : "");
    }

    /** @return the time from {@code since} to {@code at} (both ISO-8601), short: {@code 42s}, {@code 5m}; {@code -} without both */
    static String age(JsonNode at, JsonNode since) {
        if (!at.isTextual() || !since.isTextual()) return "-";
        long s;
        try {
            s = Math.max(0, Duration.between(Instant.parse(since.asText()), Instant.parse(at.asText())).toSeconds());
        } catch (DateTimeException e) {
            return "-";
        }
        if (s < 90) return s + "s";
        if (s < 90 * 60) return (s / 60) + "m";
        if (s < 36 * 3600) return (s / 3600) + "h";
        return (s / 86400) + "d";
    }

    static String text(JsonNode n) { return n == null || n.isMissingNode() || n.isNull() ? "-" : n.asText(); }

    static String joinText(JsonNode array) { return joinText(array, "-"); }

    /** @return the array's texts joined with commas; {@code none} when it has none */
    static String joinText(JsonNode array, String none) {
        List<String> s = new ArrayList<>();
        array.forEach(n -> s.add(n.asText()));
        return s.isEmpty() ? none : String.join(",", s);
    }

    static String pretty(JsonNode json) throws JsonProcessingException {
        return CoordinatorClient.TREES.writerWithDefaultPrettyPrinter().writeValueAsString(json);
    }

    static String pad(String s, int width) { return s.length() >= width ? s : s + " ".repeat(width - s.length()); }
}
