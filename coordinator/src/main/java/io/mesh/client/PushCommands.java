package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.Revision;
import io.mesh.wire.PushState;
import io.mesh.wire.RolloutState;
import io.mesh.manifest.WireName;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static io.mesh.client.ClientText.*;
import static io.mesh.client.CoordinatorCommand.*;
import static io.mesh.client.ExitCodes.*;
import static io.mesh.client.RolloutCommands.*;

/** {@code mesh push}, {@code cancel}, {@code history}, {@code rollback}, {@code delete}: what changes the desired state, and its record (SPEC.md, "Push"; decisions 11, 30). */
final class PushCommands {
    private PushCommands() {}

    /** {@code mesh push FILE|DIR}: sends a manifest, optionally waits for every host. */
    @Command(name = "push",
            description = {"Push a manifest to the coordinator: a FILE, or a DIR whose *.yaml and *.yml files are joined, sorted by name, as YAML documents.",
                    "Prints the push id; with --wait, prints each host's progress as it changes and exits 0 only when every host applied.",
                    "mesh push cancel PUSH drops a push that a host will not apply (no agent there, or a delete for a host gone): its hosts that have not applied it read cancelled, no longer pending.",
                    "A push still pending on a host without an agent 24h after it was taken (mesh-coordinator serve --no-agent-expiry) reads expired there; an agent that starts later still applies each module's newest desired state."},
            subcommands = {PushCommands.PushCancelCmd.class},
            exitCodeList = {"0:accepted (with --wait: applied on every host; with --plan: nothing would fail or be refused)",
                    "1:a host failed, or (with --wait) a newer push superseded it on a host, it was cancelled or expired on a host, a host is drained, or only hosts without an agent are left, for 10s (with --plan: something would fail or be refused, or a host has no agent)",
                    "2:the manifest was refused (each error is printed as 'document N, field: message'), unauthorized or too large",
                    "3:--wait timed out (--plan: a host did not answer in time)", "4:the coordinator cannot be reached"})
    public static final class Push extends CoordinatorCommand {
        // 0..1 so that "mesh push cancel PUSH" parses: picocli checks a parent's required parameters before its subcommand's.
        @Parameters(index = "0", arity = "0..1", paramLabel = "FILE|DIR", description = "A manifest file, or a directory of *.yaml / *.yml files.")
        Path source;

        @Option(names = "--revision", paramLabel = "R", description = "Revision to record, such as a git sha (default: the coordinator's content hash, sha-...).")
        String revision;

        @CommandLine.Mixin
        WaitOptions waiting;

        @Option(names = "--force", description = "Send fields some targeted host's agent does not know (an older version) anyway: "
                + "without it such a push is refused naming the hosts; with it, their applies fail naming the field until they are upgraded.")
        boolean force;

        @Option(names = "--plan", description = {"Push nothing: each targeted host's agent says what an apply would do (created, "
                + "recreated with reasons, removed, held, deferred by an open window, refused by its policy, image missing), "
                + "printed per host and module; waits --timeout (default " + PlanOutput.TIMEOUT + " with --plan) for every host.",
                "Before that, each schedule the push would add, change (naming the fields) or remove against the desired state now.",
                "Exit 0 when nothing would fail or be refused, 1 otherwise (or a host without an agent), 3 when a host did not answer in time."})
        boolean plan;

        /** @return the exit code (see the class's exit codes) */
        @Override
        public Integer call() throws Exception {
            PrintWriter out = out();
            PrintWriter err = err();
            if (source == null) return fail(BAD_INPUT, "give the manifest FILE or DIR to push (or: mesh push cancel PUSH)");
            if (plan && waiting.await) return fail(BAD_INPUT, "--plan pushes nothing, so there is nothing to --wait for: drop one of them");
            Polling polling = polling(plan && !spec.commandLine().getParseResult().hasMatchedOption("--timeout") ? PlanOutput.TIMEOUT : waiting.timeout, waiting.interval);
            if (polling == null) return BAD_INPUT;
            String badRevision = revision == null || revision.isBlank() ? null : Revision.error(revision.strip());
            if (badRevision != null) return fail(BAD_INPUT, "--revision: " + badRevision + "; nothing was sent");
            CoordinatorClient client = client();
            List<Path> files;
            String manifest;
            try {
                files = files(source);
                manifest = join(files);
            } catch (IOException | IllegalArgumentException e) {
                return fail(BAD_INPUT, e.getMessage());
            }
            CoordinatorClient.Response r = plan ? client.plan(manifest, revision) : client.push(manifest, revision, force);
            switch (r.status()) {
                case 202 -> { }
                case 400 -> {
                    warn("the coordinator refused the manifest, nothing was written:");
                    JsonNode errors = r.json() == null ? null : r.json().get("errors");
                    if (errors != null && errors.isArray()) {
                        for (JsonNode e : errors) err.println("  " + formatError(e));
                    } else {
                        err.println("  " + r.error());
                    }
                    if (files.size() > 1) {
                        err.println("  (documents are numbered across the files in this order: "
                                + String.join(", ", files.stream().map(p -> p.getFileName().toString()).toList()) + ")");
                    }
                    err.flush();
                    return BAD_INPUT;
                }
                case 401, 403, 413 -> {
                    return fail(BAD_INPUT, "refused (" + r.status() + "): " + r.error());
                }
                default -> {
                    return fail(r.status() >= 500 ? UNREACHABLE : FAILED, "the coordinator answered " + r.status() + ": " + r.error());
                }
            }
            JsonNode j = r.json();
            if (plan) return PlanOutput.follow(client, j, polling, out, this::warn);
            String push = j.path("push").asText();
            out.println(push + "  revision " + j.path("revision").asText() + "  modules " + joinText(j.path("modules"))
                    + "  hosts " + joinText(j.path("hosts")));
            out.flush();
            j.path("warnings").forEach(w -> warn(w.asText()));
            if (!waiting.await) return OK;
            return follow(client, push, polling, out);
        }

        /** How long --wait goes on once only hosts without an agent are left, in case one is starting. */
        static final Duration NO_AGENT_GRACE = Duration.ofSeconds(10);

        /**
         * Follows the push until it is done, or the timeout; stopped (Ctrl-C), it says that the push goes on and how
         * to follow it ({@link InterruptNotice}).
         *
         * @return the exit code
         */
        int follow(CoordinatorClient client, String push, Polling polling, PrintWriter out) throws InterruptedException {
            try (InterruptNotice ignored = InterruptNotice.during(this::warn, "interrupted: " + push + " goes on without this client (the "
                    + "coordinator has it); follow it with: mesh status " + push + " (or mesh push cancel " + push + " to drop it)")) {
                return following(client, push, polling, out);
            }
        }

        private int following(CoordinatorClient client, String push, Polling polling, PrintWriter out) throws InterruptedException {
            long deadline = polling.deadline();
            Map<String, String> shown = new HashMap<>();
            Following following = new Following(client, "/v1/pushes/" + push, push, this::warn);
            long onlyNoAgentSince = -1;
            while (true) {
                JsonNode view = following.ask();
                if (following.gone()) return FAILED;
                if (view != null) {
                    List<JsonNode> targets = new ArrayList<>();
                    view.path("targets").forEach(targets::add);
                    int hw = targets.stream().mapToInt(t -> t.path("host").asText().length()).max().orElse(4);
                    int mw = targets.stream().mapToInt(t -> t.path("module").asText().length()).max().orElse(6);
                    for (JsonNode t : targets) {
                        String key = t.path("host").asText() + "\0" + t.path("module").asText();
                        String desc = describe(t);
                        if (!desc.equals(shown.get(key))) {
                            shown.put(key, desc);
                            out.println(pad(t.path("host").asText(), hw) + "  " + pad(t.path("module").asText(), mw) + "  " + desc);
                        }
                    }
                    // The waves: each rollout of this push, as it moves (decision 13).
                    for (Map.Entry<String, JsonNode> e : view.path("rollouts").properties()) {
                        String wave = RolloutCmd.summary(e.getValue());
                        if (!wave.equals(shown.get("rollout\0" + e.getKey()))) {
                            shown.put("rollout\0" + e.getKey(), wave);
                            out.println("rollout " + e.getKey() + ": " + wave);
                        }
                    }
                    out.flush();
                    if (view.path("done").asBoolean()) {
                        boolean failed = view.path("failed").asBoolean();
                        // Superseded: a newer push replaced this one there, so it did not land as itself (exit 1).
                        List<String> superseded = targets.stream().filter(t -> WireName.of(PushState.class, t.path("state").asText()) == PushState.SUPERSEDED)
                                .map(t -> t.path("host").asText()).distinct().sorted().toList();
                        int failedTargets = count(view.path("counts"), PushState.FAILED);
                        if (failed && failedTargets > 0) out.println(push + " failed on " + failedTargets + " of " + targets.size() + " host-modules");
                        for (Map.Entry<String, JsonNode> e : view.path("rollouts").properties()) {
                            RolloutState rs = WireName.of(RolloutState.class, e.getValue().path("state").asText());
                            if (rs.stopped()) {
                                String note = e.getValue().path("note").asText("");
                                out.println("the rollout of " + e.getKey() + " is " + rs + (note.isEmpty() ? "" : " (" + note + ")")
                                        + (rs == RolloutState.PAUSED ? ": mesh rollout resume " + e.getKey() + " goes on, mesh rollout abort " + e.getKey() + " stops it" : ""));
                            }
                        }
                        if (!superseded.isEmpty()) {
                            List<String> by = targets.stream().filter(t -> WireName.of(PushState.class, t.path("state").asText()) == PushState.SUPERSEDED)
                                    .map(t -> t.path("supersededBy").asText("")).filter(b -> !b.isEmpty()).distinct().sorted().toList();
                            out.println(push + " not applied as itself on " + String.join(", ", superseded) + ": superseded"
                                    + (by.isEmpty() ? "" : " by " + String.join(", ", by)));
                        }
                        // Cancelled or expired: dropped there, not applied (docs/decisions/0030-cancel-and-expire-pushes.md).
                        List<String> cancelled = hostsIn(targets, PushState.CANCELLED), expired = hostsIn(targets, PushState.EXPIRED);
                        if (!cancelled.isEmpty()) out.println(push + " not applied on " + String.join(", ", cancelled) + ": cancelled (mesh push cancel)");
                        if (!expired.isEmpty()) {
                            out.println(push + " not applied on " + String.join(", ", expired) + ": expired, no agent runs there (it lands when "
                                    + "one starts with that --host; check the names in hosts)");
                        }
                        // Drained: passed over, or its containers held by the drain; it lands at the undrain (decision 37).
                        List<String> drained = hostsIn(targets, PushState.DRAINED);
                        if (!drained.isEmpty()) {
                            out.println(push + " not applied on " + String.join(", ", drained) + " yet: drained (it lands at mesh undrain "
                                    + String.join(", ", drained) + ")");
                        }
                        boolean dropped = !cancelled.isEmpty() || !expired.isEmpty() || !drained.isEmpty();
                        if (!failed && superseded.isEmpty() && !dropped) out.println(push + " applied on every host");
                        out.flush();
                        return failed || !superseded.isEmpty() || dropped ? FAILED : OK;
                    }
                    List<String> noAgent = targets.stream().filter(t -> WireName.of(PushState.class, t.path("state").asText()) == PushState.PENDING
                            && t.has("agent") && !t.path("agent").asBoolean()).map(t -> t.path("host").asText()).distinct().sorted().toList();
                    boolean othersDone = targets.stream().allMatch(t -> noAgent.contains(t.path("host").asText())
                            || Set.of(PushState.APPLIED, PushState.FAILED, PushState.SUPERSEDED).contains(WireName.of(PushState.class, t.path("state").asText())));
                    if (noAgent.isEmpty() || !othersDone) {
                        onlyNoAgentSince = -1;
                    } else if (onlyNoAgentSince < 0) {
                        onlyNoAgentSince = System.nanoTime();
                    } else if (System.nanoTime() - onlyNoAgentSince >= NO_AGENT_GRACE.toNanos()) {
                        out.println(push + " not applied on " + String.join(", ", noAgent) + ": no agent runs there (it lands when "
                                + "one starts with that --host; check the names in hosts)");
                        out.flush();
                        return FAILED;
                    }
                }
                if (!polling.pause(deadline)) {
                    if (view == null && following.unreachable()) return UNREACHABLE;
                    JsonNode counts = view == null ? null : view.path("counts");
                    warn("timed out after " + polling.timeout().toString().substring(2).toLowerCase(Locale.ROOT) + " waiting for " + push
                            + (counts == null ? "" : ": " + count(counts, PushState.PENDING) + " pending, " + count(counts, PushState.DEFERRED)
                            + " deferred, " + count(counts, PushState.WAITING) + " waiting, " + count(counts, PushState.FAILED) + " failed, "
                            + count(counts, PushState.APPLIED) + " applied"
                            + superseded(counts)));
                    return view != null && view.path("failed").asBoolean() ? FAILED : TIMEOUT;
                }
            }
        }

        /** @return the hosts of the targets in {@code state}, sorted, once each */
        private static List<String> hostsIn(List<JsonNode> targets, PushState state) {
            return targets.stream().filter(t -> WireName.of(PushState.class, t.path("state").asText()) == state)
                    .map(t -> t.path("host").asText()).distinct().sorted().toList();
        }

        /** @return the files a push reads: the file itself, or the directory's *.yaml and *.yml files sorted by name */
        static List<Path> files(Path source) throws IOException {
            if (Files.isDirectory(source)) {
                List<Path> files;
                try (Stream<Path> s = Files.list(source)) {
                    files = s.filter(p -> Files.isRegularFile(p))
                            .filter(p -> { String n = p.getFileName().toString(); return n.endsWith(".yaml") || n.endsWith(".yml"); })
                            .sorted().toList();
                }
                if (files.isEmpty()) throw new IllegalArgumentException("directory " + source + " holds no *.yaml or *.yml file");
                return files;
            }
            if (!Files.isRegularFile(source)) throw new IllegalArgumentException(source + " is neither a file nor a directory");
            return List.of(source);
        }

        /** @return the files' texts joined as YAML documents (a {@code ---} line between files that do not start with one) */
        static String join(List<Path> files) throws IOException {
            StringBuilder b = new StringBuilder();
            for (Path f : files) {
                String text;
                try {
                    text = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(Files.readAllBytes(f))).toString();
                } catch (CharacterCodingException e) {
                    throw new IllegalArgumentException(f + " is not UTF-8: save it as UTF-8");
                }
                if (text.startsWith("\uFEFF")) text = text.substring(1);
                if (b.length() > 0) {
                    if (b.charAt(b.length() - 1) != '\n') b.append('\n');
                    if (!text.startsWith("---")) b.append("---\n");
                }
                b.append(text);
            }
            return b.toString();
        }
    }

    /**
     * {@code mesh push cancel PUSH}: drops a push nobody will apply ({@code POST /v1/pushes/{push}/cancel};
     * docs/decisions/0030-cancel-and-expire-pushes.md).
     */
    @Command(name = "cancel",
            description = {"Drop PUSH: each host that has not applied it (pending, deferred or waiting: such as a host with no agent, or a delete for a host that is gone) reads cancelled from now on, and no longer counts as pending.",
                    "The desired state is not changed: an agent that starts later still applies each module's newest desired state, and a host that applies PUSH after all reads applied."},
            exitCodeList = {"0:cancelled (or cancelled before)", "2:unknown push, nothing left to cancel (every host settled), unauthorized",
                    "4:the coordinator cannot be reached"})
    public static final class PushCancelCmd extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "PUSH", description = "A push id such as push-0000000002.")
        String push;

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            if (!io.mesh.wire.ZkPaths.PUSH_NAME.matcher(push).matches()) {
                return fail(BAD_INPUT, "PUSH: '" + push + "' is not a push id: give one such as push-0000000002 (mesh status lists the pushes not done)");
            }
            CoordinatorClient.Response r = client().postJson("/v1/pushes/" + push + "/cancel", Map.of());
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            JsonNode c = r.json().path("cancelled");
            PrintWriter out = out();
            if (r.json().path("already").asBoolean()) {
                out.println(push + " was cancelled already, at " + text(c.path("at")) + " by " + text(c.path("by")) + " (hosts " + joinText(c.path("hosts")) + ")");
            } else {
                out.println(push + " cancelled on " + joinText(c.path("hosts")) + ": no longer pending there (mesh status " + push
                        + " shows it); an agent that starts there later still applies each module's newest desired state");
            }
            out.flush();
            return OK;
        }
    }

    /**
     * What {@code mesh rollback} and {@code mesh delete} share: they are pushes. Prints the accepted push (or why it
     * was refused) and, with {@code --wait}, follows it exactly as {@code mesh push --wait} does.
     */
    abstract static class ModulePush extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "MODULE", description = "The module, such as store.")
        String module;

        @CommandLine.Mixin
        WaitOptions waiting;

        /** Sends the request. */
        abstract CoordinatorClient.Response send(CoordinatorClient client, String path) throws IOException, InterruptedException;

        /** @return the line that says what the accepted push does, after its id */
        abstract String accepted(JsonNode answer);

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            Polling polling = polling(waiting.timeout, waiting.interval);
            if (polling == null) return BAD_INPUT;
            CoordinatorClient client = client();
            CoordinatorClient.Response r = send(client, "/v1/modules/" + URLEncoder.encode(module, StandardCharsets.UTF_8));
            if (r.status() == 400 && r.json() != null && r.json().path("errors").isArray()) {
                warn("the coordinator refused it, nothing was written:");
                PrintWriter err = err();
                for (JsonNode e : r.json().path("errors")) err.println("  " + formatError(e));
                err.flush();
                return BAD_INPUT;
            }
            Integer bad = failure(r, 202);
            if (bad != null) return bad;
            JsonNode j = r.json();
            String push = j.path("push").asText();
            PrintWriter out = out();
            out.println(push + "  " + accepted(j) + "  revision " + j.path("revision").asText() + "  hosts " + joinText(j.path("hosts")));
            out.flush();
            j.path("warnings").forEach(w -> warn(w.asText()));
            if (!waiting.await) return OK;
            Push follower = new Push(); // push --wait's follow, its messages under this command's name
            follower.printAs(this);
            return follower.follow(client, push, polling, out);
        }
    }

    /** {@code mesh history MODULE}: the module's pushes, newest first. */
    @Command(name = "history",
            description = {"The pushes of MODULE, newest first (GET /v1/modules/MODULE/history, from /mesh/history/MODULE; the newest 50 are kept).",
                    "Each line: push id, revision, action (push, rollback of PUSH, delete), when, who (by) and from where (source, the X-Mesh-Source header).",
                    "The first line is the module's current state; mesh rollback MODULE --to PUSH pushes one of these again."},
            exitCodeList = {"0:shown", "2:unknown module (never pushed) or a bad name", "4:the coordinator cannot be reached"})
    public static final class History extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "MODULE", description = "The module, such as store.")
        String module;

        @Option(names = "--json", description = "Print the coordinator's JSON (with each push's spec) instead of a table.")
        boolean json;

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            CoordinatorClient.Response r = client().get("/v1/modules/" + URLEncoder.encode(module, StandardCharsets.UTF_8) + "/history");
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            PrintWriter out = out();
            if (json) {
                out.println(pretty(r.json()));
            } else {
                Table table = new Table("PUSH", "REVISION", "ACTION", "PUSHED AT", "BY", "SOURCE", "HOSTS");
                for (JsonNode h : r.json().path("history")) {
                    String action = h.path("action").asText("push");
                    if (h.hasNonNull("rollbackOf")) action = action + " of " + h.path("rollbackOf").asText();
                    JsonNode spec = h.path("spec");
                    table.add(h.path("push").asText(), text(h.path("revision")), action, text(h.path("pushedAt")), text(h.path("by")),
                            text(h.path("source")), spec.isObject() ? joinText(spec.path("hosts")) : "-");
                }
                table.print(out, "module " + module + " has no history");
            }
            out.flush();
            return OK;
        }
    }

    /** {@code mesh rollback MODULE [--to PUSH]}: pushes an earlier spec of the module again. */
    @Command(name = "rollback",
            description = {"Push again the spec MODULE had at an earlier push (POST /v1/modules/MODULE/rollback).",
                    "By default the revision before the current one (after mesh delete: the spec the module had before it), else --to PUSH, one of mesh history MODULE.",
                    "It is an ordinary push whose record carries rollbackOf: a host where a window holds the module reads deferred, and it lands when the window ends.",
                    "Prints the push id; with --wait, prints each host's progress as it changes and exits 0 only when every host applied."},
            exitCodeList = {"0:accepted (with --wait: applied on every host)", "1:a host failed (with --wait)",
                    "2:refused, nothing written: unknown module, a --to not in its history, nothing to roll back to, a spec no longer valid, unauthorized",
                    "3:--wait timed out", "4:the coordinator cannot be reached"})
    public static final class Rollback extends ModulePush {
        @Option(names = "--to", paramLabel = "PUSH", description = "The push to roll back to, such as push-0000000002 (default: the revision before the current one).")
        String to;

        @Override
        CoordinatorClient.Response send(CoordinatorClient client, String path) throws IOException, InterruptedException {
            Map<String, Object> body = new HashMap<>();
            if (to != null) body.put("to", to);
            return client.postJson(path + "/rollback", body);
        }

        @Override
        String accepted(JsonNode answer) {
            return "rollback of " + module + " to " + answer.path("rollbackOf").asText();
        }
    }

    /** {@code mesh delete MODULE}: removes the module from every host. */
    @Command(name = "delete",
            description = {"Remove MODULE from every host (DELETE /v1/modules/MODULE).",
                    "Each agent removes its containers under the module lock and reports them removed; a container held by a window is left alone until the window ends (deferred). Named volumes stay. Recorded like a push (mesh history MODULE);",
                    "mesh rollback MODULE brings the module back. Prints the push id; with --wait, follows it as mesh push --wait does."},
            exitCodeList = {"0:accepted (with --wait: removed on every host)", "1:a host failed (with --wait)",
                    "2:refused, nothing written: unknown module, deleted already, unauthorized",
                    "3:--wait timed out", "4:the coordinator cannot be reached"})
    public static final class Delete extends ModulePush {
        @Override
        CoordinatorClient.Response send(CoordinatorClient client, String path) throws IOException, InterruptedException {
            return client.delete(path);
        }

        @Override
        String accepted(JsonNode answer) { return "deletes module " + module; }
    }
}
