package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code mesh audit}'s text (SPEC.md "Audit"): per host, each window, hold, freeze and apply in the span (type, id,
 * module, from..to, containers, stops/starts, status), then each violation with its kind, container, time and message,
 * and the ledger line that shows it (action, container, id short, time). {@code mesh why}'s chain too.
 */
final class AuditOutput {
    private AuditOutput() {}

    /** Prints {@code GET /v1/audit}'s answer. */
    static void print(JsonNode answer, PrintWriter out) {
        out.println("audit " + ClientText.text(answer.path("from")) + " .. " + ClientText.text(answer.path("to")) + "  exit " + answer.path("exit").asInt());
        JsonNode hosts = answer.path("hosts");
        if (!hosts.isArray() || hosts.isEmpty()) {
            out.println("no host to audit (no agent node and no reports)");
            return;
        }
        for (JsonNode h : hosts) {
            out.println();
            String host = h.path("host").asText();
            if (h.hasNonNull("error")) {
                out.println(host + ": NO LEDGER: " + h.path("error").asText());
                continue;
            }
            out.println(host + (h.hasNonNull("coveredFrom") ? "  (ledger from " + ClientText.text(h.path("coveredFrom")) + ")" : "  (ledger empty)"));
            JsonNode items = h.path("items");
            if (items.isEmpty()) out.println("  no window, hold, freeze or apply in the span");
            for (JsonNode i : items) {
                List<String> parts = new ArrayList<>();
                parts.add(ClientText.pad(i.path("type").asText(), 6));
                if (i.hasNonNull("schedule")) parts.add(i.path("schedule").asText());
                parts.add(i.path("id").asText());
                parts.add("module " + ClientText.text(i.path("module")));
                parts.add(ClientText.text(i.path("from")) + ".." + (i.hasNonNull("to") ? ClientText.text(i.path("to")) : "(open)"));
                if (!i.path("containers").isEmpty()) parts.add("containers " + join(i.path("containers")));
                if (i.path("type").asText().equals("window") || i.path("type").asText().equals("hold")) {
                    parts.add("stops " + i.path("stops").asInt() + " starts " + i.path("starts").asInt());
                }
                parts.add(i.path("status").asText().toUpperCase(java.util.Locale.ROOT));
                out.println("  " + String.join("  ", parts));
            }
            JsonNode violations = h.path("violations");
            if (violations.isEmpty()) {
                out.println("  no violations");
                continue;
            }
            out.println("  violations:");
            for (JsonNode v : violations) {
                out.println("  " + v.path("kind").asText() + "  " + ClientText.text(v.path("container")) + "  " + ClientText.text(v.path("at")) + "  "
                        + v.path("message").asText());
                JsonNode e = v.path("evidence");
                if (e.isObject()) out.println("      evidence: " + evidence(e));
            }
        }
    }

    /** @return a ledger line in one line: {@code <kind> <action> <container> <id short> <time>} */
    static String evidence(JsonNode e) {
        List<String> parts = new ArrayList<>();
        parts.add(e.path("kind").asText());
        if (e.hasNonNull("action")) parts.add(e.path("action").asText());
        if (e.hasNonNull("container")) parts.add(e.path("container").asText());
        if (e.hasNonNull("containerId")) {
            String id = e.path("containerId").asText();
            parts.add(id.length() > 12 ? id.substring(0, 12) : id);
        }
        parts.add(ClientText.text(e.path("at")) + (e.hasNonNull("end") ? ".." + ClientText.text(e.path("end")) : ""));
        if (e.hasNonNull("cause")) parts.add("cause " + e.path("cause").asText());
        if (e.path("kind").asText().equals("gap") && e.hasNonNull("reason")) parts.add(e.path("reason").asText());
        return String.join(" ", parts);
    }

    /** Prints {@code GET /v1/why/{host}/{container}}'s answer: one line per reason. */
    static void printWhy(JsonNode answer, PrintWriter out) {
        out.println(answer.path("container").asText() + " on " + answer.path("host").asText() + " (module " + ClientText.text(answer.path("module")) + "): "
                + ClientText.text(answer.path("state")));
        JsonNode chain = answer.path("chain");
        if (chain.isEmpty()) out.println("  nothing holds, defers or stops it");
        for (JsonNode r : chain) {
            out.println("  " + ClientText.pad(r.path("reason").asText(), 18) + " since " + ClientText.pad(ClientText.text(r.path("since")), 24)
                    + " " + ClientText.text(r.path("detail")));
        }
    }

    private static String join(JsonNode array) {
        List<String> s = new ArrayList<>();
        array.forEach(n -> s.add(n.asText()));
        return String.join(",", s);
    }
}
