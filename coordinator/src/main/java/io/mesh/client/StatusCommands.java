package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.wire.PushState;
import io.mesh.manifest.WireName;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

import static io.mesh.client.ClientText.*;
import static io.mesh.client.CoordinatorCommand.*;
import static io.mesh.client.ExitCodes.*;

/** {@code mesh status}, {@code windows}, {@code locks}: what the fleet does now, from the coordinator's cache (decision 22), and the table they print. */
final class StatusCommands {
    private StatusCommands() {}

    /** {@code mesh status [PUSH]}: the fleet, or one push. */
    @Command(name = "status",
            description = {"Without PUSH: the fleet (GET /v1/fleet), one line per host and module: agent, its version, revision, outcome, open window, held containers, age of the last report; then the image each container runs (Docker's image id and the registry digest); then the open windows, the freezes in force and the pushes not yet done.",
                    "With PUSH: that push on each host and module: pending, applied, deferred (with the window), failed (with the error) or superseded (by the newer push named); then each container's action and image."},
            exitCodeList = {"0:shown", "2:unknown push", "4:the coordinator cannot be reached"})
    public static final class Status extends Lookup {
        @Parameters(index = "0", arity = "0..1", paramLabel = "PUSH", description = "A push id such as push-0000000002.")
        String push;

        @Mixin
        JsonOption json;

        @Override
        String path() { return push == null ? "/v1/fleet" : "/v1/pushes/" + push; }

        @Override
        void print(JsonNode v, PrintWriter out) {
            if (push == null) {
                fleetTable(v, out);
                return;
            }
            out.println(v.path("push").asText() + "  revision " + v.path("revision").asText() + "  modules " + joinText(v.path("modules"))
                    + "  received " + text(v.path("receivedAt")) + "  state " + v.path("state").asText());
            JsonNode c = v.path("cancelled");
            if (c.isObject()) out.println("cancelled at " + text(c.path("at")) + " by " + text(c.path("by")) + " (hosts " + joinText(c.path("hosts")) + ")");
            Table.of(v.path("targets"), Status::addTarget, "HOST", "MODULE", "STATE", "REVISION", "PUSH", "FINISHED", "DETAIL")
                    .print(out, "no host targeted yet (a module for \"*\" waits for agents)");
            out.println();
            Table.of(v.path("targets"), Status::addTargetImages, "HOST", "CONTAINER", "ACTION", "IMAGE ID", "IMAGE DIGEST")
                    .print(out, "no report names a container's image yet");
        }

        /** Adds the image of each container of a target's report: which build runs where (SPEC.md, "Images"). */
        private static void addTargetImages(Table table, JsonNode t) {
            for (JsonNode c : t.path("containers")) {
                if (!c.hasNonNull("imageId")) continue;
                table.add(t.path("host").asText(), c.path("container").asText(), c.path("action").asText(), shortImageId(c.path("imageId")),
                        text(c.path("imageDigest")));
            }
        }

        /** Adds the image of each container of each module of a host of GET /v1/fleet. */
        private static void addHostImages(Table table, JsonNode h) {
            for (JsonNode m : h.path("modules")) {
                for (JsonNode i : m.path("images")) {
                    table.add(h.path("host").asText(), i.path("container").asText(), shortImageId(i.path("imageId")), text(i.path("imageDigest")));
                }
            }
        }

        /** @return an image id as {@code docker ps} shows it: {@code sha256:} and 12 hex digits */
        static String shortImageId(JsonNode id) {
            String s = text(id);
            return s.startsWith("sha256:") && s.length() > 19 ? s.substring(0, 19) : s;
        }

        /** Prints GET /v1/fleet as the operator's table. */
        static void fleetTable(JsonNode fleet, PrintWriter out) {
            Table.of(fleet.path("hosts"), (t, h) -> addHost(t, h, fleet.path("at")), "HOST", "AGENT", "VERSION", "MODULE", "REVISION", "OUTCOME", "WINDOW", "HELD", "AGE", "DETAIL")
                    .print(out, "no host has an agent or a report yet");
            out.println();
            Table.of(fleet.path("hosts"), Status::addHostImages, "HOST", "CONTAINER", "IMAGE ID", "IMAGE DIGEST")
                    .print(out, "no report names a container's image yet");
            JsonNode windows = fleet.path("windows");
            out.println();
            out.println(windows.size() == 0 ? "no window is open" : windows.size() + " open window" + (windows.size() == 1 ? "" : "s") + " (mesh windows)");
            for (JsonNode f : fleet.path("freezes")) {
                // a recurring freeze in force: its span's end, and its rule
                boolean recurs = f.hasNonNull("cron");
                out.println("frozen: " + (f.path("all").asBoolean() ? "every module" : f.path("module").asText()) + " until "
                        + text(recurs ? f.path("spanUntil") : f.path("until"))
                        + (recurs ? " (every '" + f.path("cron").asText() + "'" + (f.hasNonNull("timezone") ? " " + f.path("timezone").asText() : "")
                        + " for " + f.path("for").asText() + ")" : "")
                        + " by " + text(f.path("by")) + ": " + f.path("reason").asText() + " (mesh thaw " + (f.path("all").asBoolean() ? "--all" : f.path("module").asText()) + ")");
            }
            JsonNode pending = fleet.path("pendingPushes");
            if (pending.size() == 0) {
                out.println("no push pending");
            } else {
                for (JsonNode p : pending) {
                    JsonNode c = p.path("counts");
                    out.println("push " + p.path("push").asText() + " (revision " + p.path("revision").asText() + ") " + p.path("state").asText()
                            + ": " + count(c, PushState.PENDING) + " pending, " + count(c, PushState.DEFERRED) + " deferred, " + count(c, PushState.WAITING) + " waiting, "
                            + count(c, PushState.APPLIED) + " applied, " + count(c, PushState.FAILED) + " failed" + superseded(c));
                    for (JsonNode line : p.path("progress")) out.println("  " + line.asText());
                }
            }
        }

        /** Adds a target of GET /v1/pushes/{push}: one host and module. */
        private static void addTarget(Table table, JsonNode t) {
            String state = t.path("state").asText();
            if (WireName.of(PushState.class, state) == PushState.PENDING && t.hasNonNull("push")) {
                // The report there is an earlier push's: what the host runs until this one lands, not this push's result.
                String detail = detail(state, t);
                table.add(t.path("host").asText(), t.path("module").asText(), state, "-", "-", "-",
                        (detail.isEmpty() ? "" : detail + "; ") + "runs " + t.path("push").asText() + " (revision " + text(t.path("revision"))
                                + ") until then");
                return;
            }
            table.add(t.path("host").asText(), t.path("module").asText(), state,
                    text(t.path("revision")), text(t.path("push")), text(t.path("finishedAt")), detail(state, t));
        }

        /**
         * Adds a host of GET /v1/fleet: a row for each of its modules, or one of dashes when it has none; a report's age
         * is the fleet's {@code at} minus its {@code finishedAt}.
         */
        private static void addHost(Table table, JsonNode h, JsonNode at) {
            String agent = h.path("online").asBoolean() ? "online" : "OFFLINE";
            String version = h.path("agent").path("version").asText("-"); // an upgrade's progress (docs/runbook.md)
            if (h.path("modules").isEmpty()) table.add(h.path("host").asText(), agent, version, "-", "-", "-", "-", "-", "-", "");
            for (JsonNode m : h.path("modules")) {
                JsonNode w = m.path("window");
                String rev = text(m.path("revision"));
                String desired = m.path("desiredRevision").asText(null);
                if (desired != null && !desired.equals(m.path("revision").asText(null))) rev = rev + " -> " + desired;
                String detail = WireName.of(PushState.class, m.path("outcome").asText()) == PushState.FAILED && m.hasNonNull("error") ? m.path("error").asText() : "";
                if (m.path("lastKnown").isObject()) detail = lastKnown(m.path("lastKnown")) + (detail.isEmpty() ? "" : "; " + detail);
                table.add(h.path("host").asText(), agent, version, m.path("module").asText(), rev, m.path("outcome").asText(),
                        w.isObject() ? window(w) : "-", joinText(m.path("held")), age(at, m.path("finishedAt")), detail);
            }
        }
    }

    /** {@code mesh windows}: every open window, when it should end, and the push waiting on it; the fleet-wide slots. */
    @Command(name = "windows",
            description = {"Every open window on every host (GET /v1/windows): schedule, id, since, when it ends at the latest (since + the schedule's timeout), the containers it holds, the push deferred by it, and the process running it.",
                    "Then each fleet-wide slot (a schedule's max-concurrent, or a group): the windows that run ('runs'; 'runs, session lost' while a window whose session went still counts) and the queue in order ('waits N'), with how long each waited for its slot.",
                    "A group's slot also lists its hosts down for another cause, each taking a place of its limit: 'down: hold --stop', 'down: drain --stop', or 'down: failed-apply' (an apply that failed and left the container named down)."},
            exitCodeList = {"0:shown (also when no window is open)", "4:the coordinator cannot be reached"})
    public static final class Windows extends Lookup {
        @Mixin
        JsonOption json;

        @Override
        String path() { return "/v1/windows"; }

        /** The open windows, then each fleet-wide slot's running windows and its queue, in order. */
        @Override
        void print(JsonNode answer, PrintWriter out) {
            Table.of(answer.path("windows"), Windows::add, "HOST", "MODULE", "SCHEDULE", "WINDOW", "SINCE", "ENDS BY", "HELD",
                    "WAITING PUSH", "BY").print(out, "no window is open");
            if (!answer.path("gates").isEmpty()) {
                // windows whose schedule's gate is blocked: they wait before their slot and stop nothing (decision 35)
                out.println();
                Table.of(answer.path("gates"), (t, g) -> t.add(g.path("host").asText(), g.path("module").asText(), g.path("schedule").asText(),
                                g.path("window").asText(), text(g.path("since")), text(g.path("startBy")), g.path("said").asText()),
                        "HOST", "MODULE", "SCHEDULE", "WAITS FOR ITS GATE", "SINCE", "SKIPPED AT", "GATE SAID").print(out, "");
            }
            if (answer.path("slots").isEmpty()) return;
            out.println();
            Table.of(answer.path("slots"), Windows::addSlot, "SLOT", "LIMIT", "ROLE", "HOST", "MODULE", "SCHEDULE", "WINDOW", "SINCE",
                    "WAITED").print(out, "");
        }

        private static void add(Table table, JsonNode w) {
            table.add(w.path("host").asText(), w.path("module").asText(), w.path("schedule").asText(), w.path("window").asText(),
                    text(w.path("since")), text(w.path("endsBy")), joinText(w.path("held")),
                    w.hasNonNull("waitingPush") ? w.path("waitingPush").asText() + " (" + w.path("waitingRevision").asText() + ")" : "-",
                    by(w.path("by")));
        }

        /** A slot's rows: {@code runs} (or {@code runs, session lost}) for each running window, {@code waits N} in queue order. */
        private static void addSlot(Table table, JsonNode s) {
            String key = s.path("key").asText(), limit = s.path("limit").asText();
            for (JsonNode w : s.path("running")) {
                JsonNode r = w.path("record");
                table.add(key, limit, w.path("sessionLost").asBoolean() ? "runs, session lost" : "runs", r.path("host").asText(),
                        r.path("module").asText(), r.path("schedule").asText(), r.path("window").asText(), text(r.path("since")),
                        w.path("waited").asLong() + "s");
            }
            int i = 0;
            for (JsonNode w : s.path("queue")) {
                JsonNode r = w.path("record");
                table.add(key, limit, "waits " + (++i), r.path("host").asText(), r.path("module").asText(), r.path("schedule").asText(),
                        r.path("window").asText(), text(r.path("since")), w.path("waited").asLong() + "s");
            }
            // a group's hosts down for another cause take places of its limit too (decision 37)
            for (JsonNode d : s.path("down")) {
                String container = d.path("container").asText();
                boolean failed = "failed-apply".equals(d.path("kind").asText());
                table.add(key, limit, "down: " + d.path("kind").asText() + (failed ? "" : " --stop"), d.path("host").asText(),
                        d.path("module").asText(), "-", container + (failed ? " left down by " : " by ") + d.path("by").asText(),
                        text(d.path("since")), "-");
            }
        }
    }

    /** {@code mesh locks}: who holds and who waits for each module lock. */
    @Command(name = "locks",
            description = {"Who holds each module lock, and who waits for it, on every host (GET /v1/locks, from the lock children's data).",
                    "ROLE is 'holds' for the lowest sequence and 'waits N' for the others, in order; PURPOSE is apply or window:<schedule>."},
            exitCodeList = {"0:shown (also when no lock is held)", "4:the coordinator cannot be reached"})
    public static final class Locks extends Listing {
        @Mixin
        JsonOption json;

        Locks() { super("/v1/locks", "locks", "no module lock is held", "MODULE", "HOST", "ROLE", "PURPOSE", "PROCESS", "PID", "ON HOST", "SINCE"); }

        /** Adds the lock's holder and its waiters, in order. */
        @Override
        void add(Table table, JsonNode l) {
            List<JsonNode> all = new ArrayList<>();
            if (l.path("holder").isObject()) all.add(l.path("holder"));
            l.path("waiters").forEach(all::add);
            for (int i = 0; i < all.size(); i++) {
                JsonNode h = all.get(i);
                table.add(l.path("module").asText(), l.path("host").asText(), i == 0 ? "holds" : "waits " + i,
                        h.path("purpose").asText(), h.path("process").asText(), h.path("pid").asText(), h.path("host").asText(), text(h.path("since")));
            }
        }
    }

}
