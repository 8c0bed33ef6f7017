package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.manifest.Durations;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import static io.mesh.client.ClientText.*;
import static io.mesh.client.CoordinatorCommand.*;
import static io.mesh.client.ExitCodes.*;
import static io.mesh.client.AuditCommands.*;

/** {@code mesh held}, {@code hold}, {@code release}: containers held on purpose (SPEC.md, "Operator holds"; decisions 15, 25, 33). */
final class HoldCommands {
    private HoldCommands() {}

    /** {@code mesh held}: every container held, by a window or by an operator, on every host. */
    @Command(name = "held", description = {"Every container held on purpose, on every host (GET /v1/held).",
            "First those an open window holds stopped, then operator holds (mesh hold) with HOLD BY / REASON / UNTIL / CONFIRMED; an expired one reads EXPIRED until its agent deletes it.",
            "CONFIRMED is when the host's agent confirmed the hold, from which time it is in force; 'not yet' is a hold recorded but not yet in force (its agent is down or busy)."},
            exitCodeList = {"0:shown (also when nothing is held)", "4:the coordinator cannot be reached"})
    public static final class Held extends Lookup {
        /** Read by {@link Lookup#json()}, by name. */
        @Option(names = "--json", description = "Print the coordinator's JSON (window holds, open windows, operator holds) instead of tables.")
        boolean json;

        @Override
        String path() { return "/v1/held"; }

        @Override
        void print(JsonNode answer, PrintWriter out) {
            Table.of(answer.path("held"), (table, h) -> table.add(h.path("host").asText(), h.path("container").asText(),
                            h.path("module").asText(), h.path("schedule").asText(), h.path("window").asText(), text(h.path("since")), by(h.path("by"))),
                    "HOST", "CONTAINER", "MODULE", "SCHEDULE", "WINDOW", "SINCE", "BY PID").print(out, "no container is held by a window");
            out.println();
            Table.of(answer.path("holds"), (table, h) -> {
                        JsonNode hold = h.path("hold");
                        String until = hold.path("until").isMissingNode() || hold.path("until").isNull() ? "until released" : text(hold.path("until"));
                        table.add(h.path("host").asText(), h.path("container").asText(), h.path("module").asText(),
                                hold.path("by").asText(), hold.path("reason").asText(), until + (h.path("expired").asBoolean() ? " (EXPIRED)" : ""),
                                hold.path("stop").asBoolean() ? (hold.path("stoppedAt").isMissingNode() ? "to stop" : "stopped") : "running",
                                hold.hasNonNull("confirmed") ? text(hold.path("confirmed")) : "not yet");
                    }, "HOST", "CONTAINER", "MODULE", "HOLD BY", "REASON", "UNTIL", "STOP", "CONFIRMED")
                    .print(out, "no container is held by an operator");
            // A drained host: its agent holds every container of it, a hold per container above once placed (decision 37)
            for (JsonNode d : answer.path("drains")) {
                JsonNode r = d.path("drain");
                out.println("drained: " + d.path("host").asText() + " by " + r.path("by").asText() + ": " + r.path("reason").asText()
                        + (r.hasNonNull("until") ? " until " + text(r.path("until")) : " until mesh undrain")
                        + (r.path("stop").asBoolean() ? ", containers stopped" : "") + (d.path("ended").asBoolean() ? " (ENDED)" : ""));
            }
            // An agent that went mid-window: its held nodes went with it, its containers may still be stopped.
            for (JsonNode o : answer.path("offline")) {
                out.println();
                out.println(o.path("host").asText() + " " + o.path("module").asText() + ": " + lastKnown(o.path("lastKnown")));
            }
        }
    }

    /**
     * {@code mesh hold HOST CONTAINER --reason TEXT [--for DURATION] [--stop] [--wait DURATION]}: an operator hold,
     * then a wait for its host's agent to confirm it (SPEC.md "Operator holds": it is in force from then on).
     */
    @Command(name = "hold", description = {"Hold CONTAINER (its Docker name, <module>-<name>) on HOST: no apply, rollout or window touches it.",
            "It is held until mesh release, or until --for has passed (at most 366 days), and survives agent and coordinator restarts (a persistent /mesh/held node).",
            "The hold is in force once the host's agent confirms it, under the module's lock; mesh hold waits for that (--wait). Not confirmed in time, it stays recorded, and the agent confirms it before its next Docker call of the module.",
            "With --stop, the host's agent stops it once and it stays stopped while held; without, it keeps running, untouched."},
            exitCodeList = {"0:held and confirmed by the host's agent: in force (with --stop, and the container stopped, unless its stop outlasts --wait: then it says so)",
                    "1:the hold was released or replaced by someone else before its host confirmed it",
                    "2:bad input: unknown host or container, missing reason, bad duration (--for above zero and at most 366 days; --wait), already held (by a window or an operator), unauthorized",
                    "3:recorded but not yet confirmed within --wait (at once when the host's agent is down; always with --wait 0s): the hold stays, and is in force once confirmed",
                    "4:the coordinator cannot be reached"})
    public static final class Hold extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "HOST", description = "The host, such as host-a.")
        String host;

        @Parameters(index = "1", paramLabel = "CONTAINER", description = "The Docker name, such as store-registry.")
        String container;

        @Option(names = "--reason", required = true, paramLabel = "TEXT", description = "Why, for whoever reads mesh held.")
        String reason;

        @Option(names = "--for", paramLabel = "DURATION", description = "End by itself after this, such as 30m or 2h; at most 366 days, 8784h (default: until mesh release).")
        String lasts;

        @Option(names = "--stop", description = "Have the host's agent stop the container (once); mesh release lets the next apply start it.")
        boolean stop;

        @Option(names = "--wait", paramLabel = "DURATION", defaultValue = "30s",
                description = "How long to wait for the host's agent to confirm the hold, such as 30s or 2m; 0s: do not wait (default: ${DEFAULT-VALUE}).")
        String await;

        /** How often the hold is read while waiting for its confirmation. */
        static final Duration CONFIRM_POLL = Duration.ofMillis(250);

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            Duration wait;
            try {
                wait = Durations.parseZeroAllowed(await);
            } catch (IllegalArgumentException e) {
                return fail(BAD_INPUT, "--wait: " + e.getMessage() + "; 0s does not wait");
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("host", host);
            body.put("container", container);
            body.put("reason", reason);
            if (lasts != null) body.put("for", lasts);
            if (stop) body.put("stop", true);
            CoordinatorClient client = client();
            CoordinatorClient.Response r = client.postJson("/v1/holds", body);
            Integer bad = failure(r, 201);
            if (bad != null) return bad;
            JsonNode hold = r.json().path("hold");
            PrintWriter out = out();
            out.println(container + " on " + host + ": hold recorded, by " + hold.path("by").asText() + ": " + hold.path("reason").asText()
                    + (hold.path("until").isTextual() ? " until " + hold.path("until").asText() : " until mesh release")
                    + (stop ? "; its agent stops it" : "; it keeps running, untouched"));
            out.flush();
            if (wait.isZero()) {
                return fail(TIMEOUT, "recorded, not waiting for " + host + "'s agent to confirm it (--wait 0s): the hold stays, and is in force once "
                        + "confirmed; mesh held shows CONFIRMED");
            }
            out.println("waiting up to " + await + " for " + host + "'s agent to confirm it");
            out.flush();
            try (InterruptNotice ignored = InterruptNotice.during(this::warn, "interrupted: the hold of " + container + " on " + host
                    + " stays recorded, and is in force once its agent confirms it; see it with: mesh held")) {
                return confirmed(client, hold.path("since").asText(), r.json().path("module").asText(), wait, out);
            }
        }

        /**
         * Reads the hold ({@code GET /v1/holds/{host}/{container}}) every {@link #CONFIRM_POLL} until its host's agent
         * confirms it, for at most {@code wait}; at once when that host has no agent node (nothing could confirm it).
         *
         * @param since  the hold's {@code since} as written: another is someone else's hold
         * @param module the container's module, whose lock the agent confirms under
         * @return the command's exit code: {@value #OK} confirmed, {@value #TIMEOUT} not (yet), {@value #FAILED} gone or
         *         replaced, {@value #UNREACHABLE} when the coordinator stopped answering
         */
        private int confirmed(CoordinatorClient client, String since, String module, Duration wait, PrintWriter out) throws InterruptedException {
            String path = "/v1/holds/" + URLEncoder.encode(host, StandardCharsets.UTF_8) + "/" + URLEncoder.encode(container, StandardCharsets.UTF_8);
            String notYet = "recorded but not yet confirmed (not in force yet; the hold stays, nothing is lost): ";
            Polling polling = new Polling(wait, CONFIRM_POLL);
            long deadline = polling.deadline();
            String unanswered = null;
            while (true) {
                JsonNode v = null;
                try {
                    CoordinatorClient.Response g = client.getWithToken(path);
                    if (g.status() == 200 && g.json() != null) {
                        v = g.json();
                        unanswered = null;
                    } else if (g.status() == 404) {
                        return fail(FAILED, "the hold is gone before " + host + "'s agent confirmed it: " + g.error());
                    } else if (g.status() < 500) {
                        return failure(g, 200);
                    } else {
                        unanswered = g.status() + " " + g.error();
                    }
                } catch (IOException e) {
                    unanswered = e.getMessage();
                }
                if (v != null) {
                    JsonNode h = v.path("hold");
                    if (!since.equals(h.path("since").asText())) {
                        return fail(FAILED, "the hold was replaced meanwhile by one of " + h.path("by").asText() + " (since " + text(h.path("since"))
                                + "): mesh held shows it");
                    }
                    if (h.hasNonNull("confirmed") && (!stop || h.hasNonNull("stoppedAt"))) {
                        out.println(host + "'s agent confirmed it at " + h.path("confirmed").asText() + ": in force, no mesh process touches "
                                + container + (stop ? "; it stopped it at " + h.path("stoppedAt").asText() : ""));
                        out.flush();
                        return OK;
                    }
                    if (h.hasNonNull("confirmed") && !polling.pause(deadline)) {
                        // In force; its --stop waits out the container's stop-timeout: said, not a failure.
                        out.println(host + "'s agent confirmed it at " + h.path("confirmed").asText() + ": in force, no mesh process touches "
                                + container + " but to stop it; it is still stopping it (up to its stop-timeout): mesh held shows STOP stopped once done");
                        out.flush();
                        return OK;
                    }
                    if (h.hasNonNull("confirmed")) continue;
                    if (v.path("expired").asBoolean()) {
                        return fail(TIMEOUT, "it ended (until " + text(h.path("until")) + ") before " + host + "'s agent confirmed it: it holds "
                                + "nothing; hold it again with a longer --for");
                    }
                    if (!v.path("agent").asBoolean()) {
                        // Nothing else confirms it: waiting would only delay the answer.
                        return fail(TIMEOUT, notYet + host + "'s agent is down (no agent node /mesh/agents/" + host + "); when it comes back "
                                + "it confirms the hold before its first Docker call of module " + module + ". mesh held shows CONFIRMED then");
                    }
                }
                if (!polling.pause(deadline)) {
                    if (unanswered != null) {
                        return fail(UNREACHABLE, "the hold is recorded (it stays), but whether " + host + "'s agent confirmed it is unknown: the "
                                + "coordinator did not answer (" + unanswered + "); mesh held shows CONFIRMED");
                    }
                    String busy = lockHolder(client, host, module);
                    return fail(TIMEOUT, notYet + host + "'s agent runs but did not confirm it within " + await + " ("
                            + (busy == null ? "busy, or slow to see the hold; mesh locks shows who holds the module lock" : "busy: " + busy)
                            + "); it confirms the hold before its next Docker call of module " + module + ". mesh held shows CONFIRMED then");
                }
            }
        }

        /**
         * @return who holds the module lock of {@code module} on {@code host} ({@code GET /v1/locks}), such as
         *         {@code the module lock of store on host-a is held by window:nightly (pid 7, since ...)}; {@code null}
         *         when nobody does, or the coordinator does not say
         */
        static String lockHolder(CoordinatorClient client, String host, String module) throws InterruptedException {
            try {
                CoordinatorClient.Response l = client.get("/v1/locks");
                if (l.status() != 200 || l.json() == null) return null;
                for (JsonNode lock : l.json().path("locks")) {
                    if (!host.equals(lock.path("host").asText()) || !module.equals(lock.path("module").asText())) continue;
                    JsonNode holder = lock.path("holder");
                    if (!holder.isObject()) return null;
                    return "the module lock of " + module + " on " + host + " is held by " + holder.path("purpose").asText() + " (pid "
                            + holder.path("pid").asText() + ", since " + text(holder.path("since")) + "; mesh locks shows it)";
                }
            } catch (IOException | RuntimeException e) {
                // only a hint: the answer stands without it
            }
            return null;
        }
    }

    /**
     * {@code mesh release HOST CONTAINER [--stale]}: ends an operator hold; the host's agent applies the module at once.
     * With {@code --stale} (an admin's token): removes a held node nothing owns instead (SPEC.md "Operator holds").
     */
    @Command(name = "release", description = {"End the operator hold of CONTAINER on HOST: its agent applies the module at once (a container its --stop stopped is started again, the same container, unless its spec changed).",
            "With --stale (an admin's token: the coordinator's --admin NAME): remove a held node that is neither an operator's hold nor a running window's (one made by hand, or left behind)."},
            exitCodeList = {"0:released", "2:no operator hold there (or a window's; with --stale: none, an operator's hold or a running window's), unauthorized",
                    "4:the coordinator cannot be reached"})
    public static final class Release extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "HOST", description = "The host, such as host-a.")
        String host;

        @Parameters(index = "1", paramLabel = "CONTAINER", description = "The Docker name, such as store-registry.")
        String container;

        @Option(names = "--stale", description = "Remove a held node nothing owns (not an operator's hold, not a running window's); needs an admin's token.")
        boolean stale;

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            CoordinatorClient.Response r = client().delete("/v1/holds/" + URLEncoder.encode(host, StandardCharsets.UTF_8) + "/"
                    + URLEncoder.encode(container, StandardCharsets.UTF_8) + (stale ? "?stale=true" : ""));
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            PrintWriter out = out();
            if (stale) {
                JsonNode gone = r.json().path("released");
                out.println("the stale held node of " + container + " on " + host + " is removed (it read: "
                        + (gone.path("window").asText().equals("unreadable") ? "data that cannot be read"
                        : "window " + gone.path("window").asText() + ", schedule " + gone.path("schedule").asText()) + ")");
                out.flush();
                return OK;
            }
            out.println(container + " on " + host + " released (it was held by " + r.json().path("released").path("hold").path("by").asText()
                    + ": " + r.json().path("released").path("hold").path("reason").asText() + ")");
            out.flush();
            return OK;
        }
    }
}
