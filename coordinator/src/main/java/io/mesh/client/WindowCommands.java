package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.wire.LockHolder;
import io.mesh.manifest.WireName;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowRequestState;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static io.mesh.client.ClientText.*;
import static io.mesh.client.CoordinatorCommand.*;
import static io.mesh.client.ExitCodes.*;
import static io.mesh.client.StatusCommands.*;

/** {@code mesh window run}: a window on demand (SPEC.md, "Windows on demand"). */
final class WindowCommands {
    private WindowCommands() {}

    /** {@code mesh window}: the parent of {@code mesh window run}. */
    @Command(name = "window", mixinStandardHelpOptions = true, description = "Windows on demand: mesh window run MODULE/SCHEDULE --host H.",
            subcommands = {WindowCommands.WindowRun.class})
    public static final class WindowCmd implements Runnable {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        /** Prints the usage. */
        @Override
        public void run() { throw missingCommand(spec); }
    }

    /** {@code mesh window run MODULE/SCHEDULE --host H}: asks that host's agent to run a window now and prints the outcome. */
    @Command(name = "run",
            description = {"Ask the agent of HOST to run one window of MODULE/SCHEDULE now, and print its outcome.",
                    "The request is the znode /mesh/requests/<host>/window-<seq> (zkcli get shows it): the agent claims it, runs the window under the module lock like a cron window, and writes the result into it; this command then deletes it.",
                    "Prints the request, each change of its state, then the outcome, the held containers, the step's exit code and its last log lines."},
            exitCodeList = {"0:the window ran and its step succeeded", "1:the window or its step failed, or the agent refused it",
                    "2:bad input: unknown module, schedule or host, the host has no running agent, unauthorized",
                    "3:timed out (the request stays; the agent still runs it, or expires it after its --request-ttl)",
                    "4:the coordinator cannot be reached"})
    public static final class WindowRun extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "MODULE/SCHEDULE", description = "Such as store/garbage-collect.")
        String target;

        @Option(names = "--host", required = true, paramLabel = "HOST", description = "The host whose agent runs the window.")
        String host;

        @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "45m",
                description = "How long to wait for the outcome (the module lock, then the step's own timeout), such as 90s or 1h (default: ${DEFAULT-VALUE}).")
        String timeout;

        @Mixin
        IntervalOption asking;

        @Option(names = "--json", description = "Print the finished request's JSON (with the window's result) instead of text.")
        boolean json;

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            PrintWriter out = out();
            int slash = target.indexOf('/');
            if (slash <= 0 || slash == target.length() - 1 || target.indexOf('/', slash + 1) >= 0) {
                return fail(BAD_INPUT, "give MODULE/SCHEDULE, such as store/garbage-collect; got '" + target + "'");
            }
            String module = target.substring(0, slash), schedule = target.substring(slash + 1);
            Polling polling = polling(timeout, asking.interval);
            if (polling == null) return BAD_INPUT;
            CoordinatorClient client = client();
            String hostPath = "/v1/hosts/" + URLEncoder.encode(host, StandardCharsets.UTF_8) + "/windows";
            CoordinatorClient.Response r = client.postJson(hostPath, Map.of("module", module, "schedule", schedule));
            Integer bad = failure(r, 202);
            if (bad != null) return bad;
            String request = r.json().path("request").asText();
            out.println(request + "  asked host " + host + " to run " + module + "/" + schedule + "  (" + r.json().path("path").asText() + ")");
            out.flush();
            String path = hostPath + "/" + request;
            long deadline = polling.deadline();
            String shown = WindowRequestState.REQUESTED.wire();
            while (true) {
                JsonNode req = null;
                try {
                    CoordinatorClient.Response g = client.get(path);
                    if (g.status() == 404) return fail(FAILED, request + " is gone before it was done (deleted by someone else?)");
                    if (g.status() == 200) req = g.json();
                } catch (IOException e) {
                    // retried until the deadline
                }
                if (req != null) {
                    String text = req.path("state").asText();
                    WindowRequestState state = WireName.of(WindowRequestState.class, text);
                    if (!text.equals(shown)) {
                        shown = text;
                        if (state == WindowRequestState.RUNNING) {
                            JsonNode runner = req.path("runner");
                            out.println(request + "  running (agent pid " + runner.path("pid").asText() + ", " + runner.path("process").asText() + ")");
                            out.flush();
                        }
                    }
                    if (state == WindowRequestState.RUNNING) {
                        String waits = waitingBehind(client, host, module, schedule);
                        if (waits != null && !waits.equals(saidWaiting)) {
                            saidWaiting = waits;
                            out.println(request + "  " + waits);
                            out.flush();
                        }
                    }
                    if (state == WindowRequestState.DONE) {
                        try {
                            client.delete(path);
                        } catch (IOException e) {
                            warn(request + " not deleted (" + e.getMessage() + "); the agent deletes it after its TTL");
                        }
                        if (json) out.println(pretty(req));
                        else outcome(req, out);
                        out.flush();
                        JsonNode result = req.path("result");
                        return !req.hasNonNull("error") && result.isObject() && WireName.of(WindowOutcome.class, result.path("outcome").asText()) == WindowOutcome.SUCCEEDED ? OK : FAILED;
                    }
                }
                if (!polling.pause(deadline)) {
                    return fail(TIMEOUT, "timed out after " + timeout + " with " + request + " " + shown
                            + "; follow it with: zkcli get /mesh/requests/" + host + "/" + request);
                }
            }
        }

        /** What the window waited behind, last said (each new wait is said once). */
        private String saidWaiting;

        /**
         * What a requested window waits behind, from the coordinator's views: its fleet-wide slot's queue
         * ({@code /v1/windows}) or the module lock's waiters ({@code /v1/locks}); {@code null} when it waits for
         * neither (or the coordinator does not answer: asked again at the next poll).
         */
        static String waitingBehind(CoordinatorClient client, String host, String module, String schedule) throws InterruptedException {
            try {
                CoordinatorClient.Response w = client.get("/v1/windows");
                if (w.status() == 200) {
                    for (JsonNode g : w.json().path("gates")) { // its gate is blocked (decision 35)
                        if (host.equals(g.path("host").asText()) && module.equals(g.path("module").asText())
                                && schedule.equals(g.path("schedule").asText())) {
                            return "waits for its gate until " + text(g.path("startBy")) + " (then skipped): " + g.path("said").asText();
                        }
                    }
                    for (JsonNode slot : w.json().path("slots")) {
                        int i = 0;
                        for (JsonNode q : slot.path("queue")) {
                            i++;
                            JsonNode r = q.path("record");
                            if (!host.equals(r.path("host").asText()) || !module.equals(r.path("module").asText())
                                    || !schedule.equals(r.path("schedule").asText())) continue;
                            List<String> running = new ArrayList<>();
                            for (JsonNode x : slot.path("running")) {
                                JsonNode xr = x.path("record");
                                running.add(xr.path("module").asText() + "/" + xr.path("schedule").asText() + " on " + xr.path("host").asText());
                            }
                            return "waits for slot " + slot.path("key").asText() + " (limit " + slot.path("limit").asText() + "), "
                                    + (i == 1 ? "first" : "number " + i) + " in its queue" + (running.isEmpty() ? "" : ", behind " + String.join(", ", running));
                        }
                    }
                }
                CoordinatorClient.Response l = client.get("/v1/locks");
                if (l.status() != 200) return null;
                for (JsonNode lock : l.json().path("locks")) {
                    if (!host.equals(lock.path("host").asText()) || !module.equals(lock.path("module").asText())) continue;
                    JsonNode holder = lock.path("holder");
                    boolean waiting = false;
                    for (JsonNode x : lock.path("waiters")) waiting |= LockHolder.windowPurpose(schedule).equals(x.path("purpose").asText());
                    if (!waiting || !holder.isObject()) return null;
                    return "waits for the module lock of " + module + " on " + host + ", behind " + holder.path("purpose").asText()
                            + " (pid " + holder.path("pid").asText() + ", since " + text(holder.path("since")) + "); mesh locks shows it";
                }
                return null;
            } catch (IOException | RuntimeException e) {
                return null;
            }
        }

        private static void outcome(JsonNode req, PrintWriter out) {
            JsonNode w = req.path("result");
            if (!w.isObject()) {
                out.println("outcome: failed, no result from the agent: " + req.path("error").asText());
                return;
            }
            String secs = "";
            if (w.hasNonNull("startedAt") && w.hasNonNull("finishedAt")) {
                Duration d = Duration.between(Instant.parse(w.path("startedAt").asText()), Instant.parse(w.path("finishedAt").asText()));
                secs = String.format(Locale.ROOT, " in %.1fs", d.toMillis() / 1000.0);
            }
            out.println("outcome: " + w.path("outcome").asText() + "  window " + w.path("window").asText() + secs
                    + "  held " + joinText(w.path("held"), "nothing")
                    + "  step exit " + (w.hasNonNull("exitCode") ? w.path("exitCode").asText() : "-"));
            if (w.hasNonNull("error")) out.println("error: " + w.path("error").asText());
            if (req.hasNonNull("error")) out.println("error: " + req.path("error").asText());
            if (w.path("logTail").size() > 0) {
                out.println("step log (last lines):");
                w.path("logTail").forEach(l -> out.println("  " + l.asText()));
            }
        }
    }
}
