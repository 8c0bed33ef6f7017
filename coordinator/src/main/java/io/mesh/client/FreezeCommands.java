package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.manifest.Durations;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import static io.mesh.client.ClientText.*;
import static io.mesh.client.CoordinatorCommand.*;
import static io.mesh.client.ExitCodes.*;
import static io.mesh.client.StatusCommands.*;
import static io.mesh.client.AuditCommands.*;

/** {@code mesh freeze}, {@code thaw}, {@code freezes} (SPEC.md, "Freezes"; decision 14). */
final class FreezeCommands {
    private FreezeCommands() {}

    /**
     * {@code mesh freeze MODULE|--all (--for DURATION|--until TIME) --reason TEXT} (docs/decisions/0014-freezes.md), or
     * a recurring freeze {@code --cron EXPR --for DURATION [--timezone ZONE] [--until TIME]} (decision 37).
     */
    @Command(name = "freeze",
            description = {"Freeze MODULE, or every module with --all (POST /v1/freezes): pushes are still accepted and recorded, but agents apply none of them.",
                    "No Docker call is made on the module until the freeze ends, at --for/--until by itself or at mesh thaw; then the newest",
                    "revision lands with no new push. Reports read deferred with the freeze. Windows still run. Freezing again replaces the freeze.",
                    "An apply already in progress (it holds the module lock) still lands the container changes it has begun, and begins no other: mesh freeze names each one.",
                    "With --cron the freeze recurs: in force from each cron time for --for (such as --cron '0 18 * * 5' --for 14h: Fridays from 18:00",
                    "to Saturday 08:00), in --timezone (UTC when left out), until --until ends the recurrence or mesh thaw."},
            exitCodeList = {"0:frozen", "2:bad input (MODULE and --all, --for and --until, --cron without --for, no --reason, a bad duration, time or cron), unauthorized",
                    "4:the coordinator cannot be reached"})
    public static final class Freeze extends CoordinatorCommand {
        @Parameters(index = "0", arity = "0..1", paramLabel = "MODULE", description = "The module to freeze, such as store (or --all).")
        String module;

        @Option(names = "--all", description = "Freeze every module (/mesh/freezes/_all).")
        boolean all;

        @Option(names = "--for", paramLabel = "DURATION", description = "How long, such as 2h, 30m or 1h30m.")
        String forDuration;

        @Option(names = "--until", paramLabel = "TIME", description = "Until when, ISO-8601 UTC, such as 2026-12-24T18:00:00Z.")
        String until;

        @Option(names = "--reason", paramLabel = "TEXT", required = true, description = "Why: every frozen module's report carries it.")
        String reason;

        @Option(names = "--cron", paramLabel = "EXPR", description = "Recur: in force from each time of this 5-field cron expression for --for, such as '0 18 * * 5'.")
        String cron;

        @Option(names = "--timezone", paramLabel = "ZONE", description = "The zone --cron is read in, such as Europe/Berlin (UTC when left out).")
        String timezone;

        /**
         * The request's body, checked here as the coordinator checks it (it checks again), so that a typo is named before
         * anything is sent.
         *
         * @return {@code {"module"|"all", "for"|"until", "reason"}}
         * @throws IllegalArgumentException naming the option and the fix
         */
        static Map<String, Object> body(String module, boolean all, String forDuration, String until, String reason) {
            return body(module, all, forDuration, until, reason, null, null);
        }

        /**
         * @return {@code {"module"|"all", "for"|"until", "reason"}}, with {@code "cron"} and {@code "timezone"} for a
         *         recurring freeze (whose {@code until} ends the recurrence)
         * @throws IllegalArgumentException naming the option and the fix
         */
        static Map<String, Object> body(String module, boolean all, String forDuration, String until, String reason, String cron, String timezone) {
            if ((module == null) == !all) {
                throw new IllegalArgumentException(all ? "give MODULE or --all, not both" : "give the MODULE to freeze, or --all for every module");
            }
            if (cron == null && timezone != null) {
                throw new IllegalArgumentException("--timezone: only a recurring freeze takes one (with --cron, such as --cron '0 18 * * 5' --for 14h)");
            }
            if (cron != null && forDuration == null) {
                throw new IllegalArgumentException("--for: missing: a recurring freeze says how long each span lasts, such as --cron '0 18 * * 5' --for 14h");
            }
            if (cron == null && (forDuration == null) == (until == null)) {
                throw new IllegalArgumentException(forDuration == null ? "give --for DURATION (such as 2h) or --until TIME: a freeze always ends by itself"
                        : "give --for or --until, not both");
            }
            if (forDuration != null) {
                try {
                    Durations.parse(forDuration);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("--for: " + e.getMessage());
                }
            }
            if (until != null) {
                try {
                    Instant.parse(until);
                } catch (java.time.format.DateTimeParseException e) {
                    throw new IllegalArgumentException("--until: '" + until + "' is not an ISO-8601 UTC time: write it such as 2026-12-24T18:00:00Z");
                }
            }
            if (reason == null || reason.isBlank()) throw new IllegalArgumentException("--reason: say why, such as --reason 'release weekend'");
            Map<String, Object> body = new java.util.LinkedHashMap<>();
            if (all) body.put("all", true);
            else body.put("module", module);
            if (cron != null) body.put("cron", cron);
            if (timezone != null) body.put("timezone", timezone);
            if (forDuration != null) body.put("for", forDuration);
            if (until != null) body.put("until", until);
            body.put("reason", reason);
            return body;
        }

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            Map<String, Object> body;
            try {
                body = body(module, all, forDuration, until, reason, cron, timezone);
            } catch (IllegalArgumentException e) {
                return fail(BAD_INPUT, e.getMessage());
            }
            CoordinatorClient.Response r = client().postJson("/v1/freezes", body);
            Integer bad = failure(r, 201);
            if (bad != null) return bad;
            JsonNode j = r.json();
            PrintWriter out = out();
            String thaw = "mesh thaw " + (all ? "--all" : module);
            if (j.hasNonNull("cron")) {
                out.println((all ? "every module" : module) + " frozen every '" + j.path("cron").asText() + "'"
                        + (j.hasNonNull("timezone") ? " " + j.path("timezone").asText() : " UTC") + " for " + j.path("for").asText() + " by "
                        + text(j.path("by")) + ": " + j.path("reason").asText() + "; " + (j.path("active").asBoolean()
                        ? "in force now, until " + text(j.path("spanUntil"))
                        : "next from " + text(j.path("next"))) + (j.hasNonNull("until") ? "; recurs until " + text(j.path("until")) : "")
                        + " (" + thaw + " ends it)");
            } else {
                out.println((all ? "every module" : module) + " frozen until " + text(j.path("until")) + " by " + text(j.path("by"))
                        + ": " + j.path("reason").asText() + " (" + thaw + " ends it sooner)");
            }
            JsonNode was = j.path("replaced");
            if (was.isObject()) {
                out.println("  replaces " + (was.hasNonNull("cron") ? "the recurring freeze (every '" + was.path("cron").asText() + "' for "
                        + was.path("for").asText() + "), which recurs no more," : "the freeze until " + text(was.path("until")))
                        + " by " + text(was.path("by")) + ": " + was.path("reason").asText());
            }
            // SPEC.md "Freezes": a freeze stops changes that begin after it; decision 14: an apply under way finishes the
            // container change it is in (all of them when it changes three or more at once) and begins no other.
            for (JsonNode a : j.path("applying")) {
                out.println("  an apply of " + a.path("module").asText() + " is in progress on " + a.path("host").asText() + " (since "
                        + text(a.path("since")) + "): the container changes it has already begun will still land; the freeze "
                        + "stops those that begin after it (mesh locks shows the apply, its report which containers changed)");
            }
            out.flush();
            return OK;
        }
    }

    /** {@code mesh thaw MODULE|--all}: ends a freeze now. */
    @Command(name = "thaw",
            description = {"End MODULE's freeze, or the freeze of every module with --all (DELETE /v1/freezes/MODULE or /v1/freezes/_all):",
                    "the agents apply the newest revision now, with no new push. A module frozen both ways stays frozen until both end."},
            exitCodeList = {"0:thawed", "2:no such freeze, MODULE and --all, unauthorized", "4:the coordinator cannot be reached"})
    public static final class Thaw extends CoordinatorCommand {
        @Parameters(index = "0", arity = "0..1", paramLabel = "MODULE", description = "The module to thaw, such as store (or --all).")
        String module;

        @Option(names = "--all", description = "End the freeze of every module (/mesh/freezes/_all); a module's own freeze stays.")
        boolean all;

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            if ((module == null) == !all) return fail(BAD_INPUT, all ? "give MODULE or --all, not both" : "give the MODULE to thaw, or --all");
            String target = all ? "_all" : module;
            CoordinatorClient.Response r = client().delete("/v1/freezes/" + URLEncoder.encode(target, StandardCharsets.UTF_8));
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            String ended = r.json() == null ? "" : r.json().path("ended").asText("");
            out().println(ended.isEmpty() ? (all ? "every module" : module) + " thawed: the newest revision lands now"
                    : (all ? "the freeze of every module" : module + "'s freeze") + " had ended at " + ended + "; its node is deleted");
            out().flush();
            return OK;
        }
    }

    /** {@code mesh freezes}: every freeze. */
    @Command(name = "freezes", description = "Every freeze, of a module or of every module (GET /v1/freezes).",
            exitCodeList = {"0:shown (also when nothing is frozen)", "4:the coordinator cannot be reached"})
    public static final class Freezes extends Listing {
        @Mixin
        JsonOption json;

        Freezes() { super("/v1/freezes", "freezes", "nothing is frozen", "MODULE", "UNTIL", "BY", "SINCE", "REASON", "RECURS"); }

        @Override
        void add(Table table, JsonNode f) {
            boolean active = f.path("active").asBoolean(true);
            String until;
            String recurs = "";
            if (f.hasNonNull("cron")) {
                // A recurring freeze: the span in force, or the next; its rule and the recurrence's end beside
                until = active ? text(f.path("spanUntil")) + " (in force)" : f.hasNonNull("next") ? "next from " + text(f.path("next")) : "(ended)";
                recurs = "every '" + f.path("cron").asText() + "'" + (f.hasNonNull("timezone") ? " " + f.path("timezone").asText() : "")
                        + " for " + f.path("for").asText() + (f.hasNonNull("until") ? " until " + text(f.path("until")) : "");
            } else {
                until = text(f.path("until")) + (active ? "" : " (ended)");
            }
            table.add(f.path("all").asBoolean() ? "(all)" : f.path("module").asText(), until, text(f.path("by")), text(f.path("since")),
                    f.path("reason").asText(), recurs);
        }
    }
}
