package io.mesh.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.coordinator.PrintingCommand;
import io.mesh.coordinator.Revision;
import io.mesh.manifest.Durations;
import io.mesh.manifest.WireName;
import io.mesh.wire.Json;
import io.mesh.wire.LockHolder;
import io.mesh.wire.PushState;
import io.mesh.wire.RolloutState;
import io.mesh.wire.WindowOutcome;
import io.mesh.wire.WindowRequestState;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.stream.Stream;

/**
 * {@code mesh}: the operator's client of the coordinator's HTTP API ({@code push}, {@code status}, {@code held},
 * {@code windows}, {@code locks}, {@code window run}, {@code history}, {@code rollback}, {@code delete}, {@code rollout},
 * {@code freeze}, {@code thaw}, {@code freezes}, {@code hold}, {@code release}, {@code audit}, {@code why}), and
 * {@code import-compose}, which needs
 * no coordinator.
 * Run it as {@code deploy/bin/mesh} or {@code java -cp coordinator/target/mesh-coordinator.jar io.mesh.client.MeshCli}.
 *
 * <p>Exit codes: {@value #OK} success (for {@code push --wait}: every host applied), {@value #FAILED} a host failed
 * or an unexpected error (for {@code window run}: the window or its step failed), {@value #BAD_INPUT} bad input (the
 * coordinator answered 400, 401, 404, 409 or 413; or a usage error), {@value #TIMEOUT} {@code --wait} or
 * {@code window run} timed out, or {@code hold} recorded but not confirmed by its host ({@code audit}: its own codes,
 * SPEC.md "Audit": 0 clean, 1 violations, 3 only gaps or hosts that did not answer, 2 bad usage), {@value #UNREACHABLE} the
 * coordinator cannot be reached or is unavailable (5xx).
 */
@Command(name = "mesh", mixinStandardHelpOptions = true, version = "mesh 0.1.0",
        description = "The operator's client of the mesh coordinator: push manifests, follow them, see what is held.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success (push --wait: every host applied; window run: the step succeeded)",
                "1:a host failed (push --wait: or a newer push superseded it on a host), a window or its step failed, or an unexpected error",
                "2:bad input (invalid manifest, unauthorized, unknown push, module, schedule or host, no agent on the host, too large, usage error)",
                "3:push --wait or window run timed out; hold recorded but not yet confirmed by its host; audit: only gaps or hosts that did not answer", "4:the coordinator cannot be reached or is unavailable"})
public final class MeshCli implements Runnable {
    /** Success. */
    public static final int OK = 0;
    /** A host failed the push, or an unexpected error. */
    public static final int FAILED = 1;
    /** Bad input: invalid manifest or arguments, unauthorized, unknown push, too large. */
    public static final int BAD_INPUT = 2;
    /** {@code push --wait} timed out before every host was done; {@code hold}: recorded, not yet confirmed by its host. */
    public static final int TIMEOUT = 3;
    /** The coordinator cannot be reached or answers 5xx. */
    public static final int UNREACHABLE = 4;

    /** Environment variable naming the coordinator URL, or several, comma-separated. */
    public static final String ENV_COORDINATOR = "MESH_COORDINATOR";
    /** Environment variable holding the bearer token when no {@code --token-file} is given. */
    public static final String ENV_TOKEN = "MESH_TOKEN";

    /**
     * The commands, in the order {@code mesh --help} lists them. Here rather than in {@code @Command(subcommands)}, which
     * picocli would build all of, by reflection, before every run: {@link #commandLine(String...)} builds only the one
     * a run names (docs/benchmark-notes.md, B9).
     */
    static final List<Class<?>> COMMANDS = List.of(Push.class, Status.class, Held.class, Hold.class, Release.class, Windows.class, Locks.class,
            WindowCmd.class, History.class, Rollback.class, Delete.class, RolloutCmd.class, Freeze.class, Thaw.class, Freezes.class,
            Audit.class, Why.class, ImportCompose.class, CommandLine.HelpCommand.class);

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /**
     * Runs the client and exits the JVM with its exit code.
     *
     * @param args such as {@code push manifests/ --wait}
     */
    public static void main(String[] args) {
        System.exit(commandLine(args).execute(args));
    }

    /**
     * @return the client's command line with every command, with the handler that turns exceptions into exit codes
     *         ({@value #UNREACHABLE} when the coordinator cannot be reached, else {@value #FAILED}); set its out and
     *         err writers to capture output
     */
    public static CommandLine commandLine() {
        return withCommands(COMMANDS);
    }

    /**
     * The client's command line for one run: when {@code args} start with a command's name, only that command is
     * built (a quarter of a second less for a command that lives half a second); else, for {@code --help}, {@code help},
     * no command or an unknown one, every command, as {@link #commandLine()}. A command parses, prints and exits the
     * same either way: its usage, errors and suggestions are its own, and {@code mesh} has no option of its own that
     * could come before it.
     *
     * @param args the arguments the command line will execute
     * @return as {@link #commandLine()}
     */
    public static CommandLine commandLine(String... args) {
        if (args.length > 0) {
            for (Class<?> command : COMMANDS) {
                if (command != CommandLine.HelpCommand.class && command.getAnnotation(Command.class).name().equals(args[0])) {
                    return withCommands(List.of(command));
                }
            }
        }
        return commandLine();
    }

    private static CommandLine withCommands(List<Class<?>> commands) {
        CommandLine cl = new CommandLine(new MeshCli());
        for (Class<?> command : commands) cl.addSubcommand(command);
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            PrintWriter err = commandLine.getErr();
            if (ex instanceof CoordinatorClient.UnreachableException) {
                err.println("mesh: " + ex.getMessage() + " (is mesh-coordinator serve running? set --coordinator or " + ENV_COORDINATOR + ")");
                err.flush();
                return UNREACHABLE;
            }
            err.println("mesh: " + ex);
            err.flush();
            return FAILED;
        });
        return cl;
    }

    /** Without a subcommand: prints the usage. */
    @Override
    public void run() { throw missingCommand(spec); }

    /**
     * @return the usage error of a command run without a subcommand: picocli prints it and the usage on stderr, and
     *         the exit code is {@value #BAD_INPUT} (README, "Exit codes")
     */
    static CommandLine.ParameterException missingCommand(CommandLine.Model.CommandSpec spec) {
        return new CommandLine.ParameterException(spec.commandLine(), "give a command: " + spec.qualifiedName() + " "
                + String.join("|", spec.subcommands().keySet().stream().filter(n -> !n.equals("help")).toList()) + " ...");
    }

    /** Options every command shares: where the coordinators are and the token. */
    public static final class Connection {
        @Option(names = "--coordinator", paramLabel = "URL[,URL...]", defaultValue = "${env:MESH_COORDINATOR:-http://127.0.0.1:7070}",
                description = {"Coordinator URL, or several, comma-separated: a request goes to the next when one does not answer "
                        + "(connection refused or timed out; an HTTP error answer is final). A push or window request goes on only when it "
                        + "could not be sent, never twice (default: $MESH_COORDINATOR, else http://127.0.0.1:7070)."})
        String url;

        @Option(names = "--token-file", paramLabel = "FILE",
                description = "File holding the bearer token for pushes (default: $MESH_TOKEN).")
        Path tokenFile;

        /**
         * @return a client of the configured coordinators, telling the command's error stream when it moves on to the next
         * @throws CommandLine.ParameterException via picocli when a URL or the token file is unusable
         */
        CoordinatorClient client(CommandLine cl) {
            List<URI> uris = new ArrayList<>();
            for (String one : url.split(",", -1)) {
                String u = one.strip();
                if (u.isEmpty() && url.contains(",")) continue;  // "a,b," or "a,,b": a stray comma
                try {
                    URI uri = URI.create(u);
                    if (uri.getScheme() == null || !(uri.getScheme().equals("http") || uri.getScheme().equals("https")) || uri.getHost() == null) {
                        throw new IllegalArgumentException("not an http URL");
                    }
                    uris.add(uri);
                } catch (IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(cl, "--coordinator must be a URL such as http://127.0.0.1:7070, or several "
                            + "separated by commas; got '" + u + "'" + (u.equals(url) ? "" : " in '" + url + "'"));
                }
            }
            if (uris.isEmpty()) throw new CommandLine.ParameterException(cl, "--coordinator names no URL: '" + url + "'");
            String token = null;
            if (tokenFile != null) {
                try {
                    token = Files.readString(tokenFile, StandardCharsets.UTF_8).strip().lines().findFirst().orElse("");
                } catch (IOException e) {
                    throw new CommandLine.ParameterException(cl, "--token-file " + tokenFile + " cannot be read: " + e.getMessage());
                }
                if (token.isBlank()) throw new CommandLine.ParameterException(cl, "--token-file " + tokenFile + " is empty");
            } else {
                String env = System.getenv(ENV_TOKEN);
                if (env != null && !env.isBlank()) token = env.strip();
            }
            PrintWriter err = cl.getErr();
            return new CoordinatorClient(uris, token).onFailover(m -> {
                err.println("mesh: " + m);
                err.flush();
            });
        }
    }

    /**
     * What every command that talks to the coordinator has: {@code -h} and {@code -V}, its exit codes under one heading
     * (picocli takes these {@code @Command} attributes from the superclass), the {@link Connection} options, and its
     * own command line for output and for errors, which start with the command's name ({@code mesh push: ...}).
     */
    @Command(mixinStandardHelpOptions = true, exitCodeListHeading = "%nExit codes:%n")
    abstract static class CoordinatorCommand extends PrintingCommand {
        @Mixin
        Connection connection;

        /** @return a client of {@code --coordinator} ({@link Connection#client}) */
        CoordinatorClient client() { return connection.client(spec.commandLine()); }

        /** Prints {@code mesh <command>: <message>} on the error stream. */
        void warn(String message) {
            PrintWriter err = err();
            err.println(spec.qualifiedName() + ": " + message);
            err.flush();
        }

        /**
         * {@link #warn}s {@code message}.
         *
         * @return {@code code}
         */
        int fail(int code, String message) {
            warn(message);
            return code;
        }

        /**
         * @param timeout the command's {@code --timeout}
         * @param interval the command's {@code --interval}
         * @return how the command follows the coordinator; {@code null}, after saying what is wrong, when either is not a
         *         duration (the command then exits {@value #BAD_INPUT})
         */
        Polling polling(String timeout, String interval) {
            try {
                return Polling.parse(timeout, interval);
            } catch (IllegalArgumentException e) {
                warn(e.getMessage());
                return null;
            }
        }

        /**
         * @param expected the status of success, such as 200
         * @return {@code null} when the answer has that status and a JSON body; else, after saying what the coordinator
         *         answered, {@value #UNREACHABLE} for 5xx, {@value #BAD_INPUT} for 4xx, {@value #FAILED} for another
         */
        Integer failure(CoordinatorClient.Response r, int expected) {
            if (r.status() == expected && r.json() != null) return null;
            return fail(r.status() >= 500 ? UNREACHABLE : r.status() >= 400 ? BAD_INPUT : FAILED,
                    "the coordinator answered " + r.status() + ": " + r.error());
        }
    }

    /**
     * The shape of {@code mesh status}, {@code held}, {@code windows} and {@code locks}: GET {@link #path()} from the
     * coordinator, then print its JSON ({@code --json}) or {@link #print} it as text.
     */
    abstract static class Lookup extends CoordinatorCommand {
        /** @return the API path to GET, such as {@code /v1/held} */
        abstract String path();

        /** Prints the coordinator's answer (status 200) as text. */
        abstract void print(JsonNode answer, PrintWriter out);

        /**
         * @return whether {@code --json} was given. Each lookup declares that option, as {@link JsonOption} or in its
         *         own words where its JSON wants them (held), so it is read here by name.
         */
        boolean json() { return spec.commandLine().getParseResult().hasMatchedOption("--json"); }

        /** @return 0 when shown; see {@link #failure} otherwise */
        @Override
        public Integer call() throws Exception {
            CoordinatorClient.Response r = client().get(path());
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            PrintWriter out = out();
            if (json()) out.println(pretty(r.json()));
            else print(r.json(), out);
            out.flush();
            return OK;
        }
    }

    /** The {@code --json} option of a {@link Lookup}, in the words of those whose JSON needs no more. */
    static final class JsonOption {
        /** Read by {@link Lookup#json()}, by name. */
        @Option(names = "--json", description = "Print the coordinator's JSON instead of a table.")
        boolean on;
    }

    /**
     * A {@link Lookup} whose text is one {@link Table}: the rows {@link #add} makes of each element of the answer's
     * array, or a line saying there is none. A listing says only its path, array, columns, rows and that line.
     */
    abstract static class Listing extends Lookup {
        private final String path;
        private final String array;
        private final String none;
        private final String[] columns;

        /**
         * @param path the API path, such as {@code /v1/held}
         * @param array the answer's field that holds the list, such as {@code held}
         * @param none the line printed when the list is empty, such as {@code no container is held}
         * @param columns the table's header
         */
        Listing(String path, String array, String none, String... columns) {
            this.path = path;
            this.array = array;
            this.none = none;
            this.columns = columns;
        }

        /** Adds the row, or rows, of one element of the list. */
        abstract void add(Table table, JsonNode element);

        @Override
        final String path() { return path; }

        @Override
        final void print(JsonNode answer, PrintWriter out) { Table.of(answer.path(array), this::add, columns).print(out, none); }
    }

    /** {@code --interval} of every command that follows the coordinator ({@link Polling}). */
    static class IntervalOption {
        @Option(names = "--interval", paramLabel = "DURATION", defaultValue = "1s",
                description = "How often to ask the coordinator, such as 500ms or 2s (default: ${DEFAULT-VALUE}).")
        String interval;
    }

    /** {@code --wait}, {@code --timeout} and {@code --interval} of the commands that push ({@code push}, {@code rollback}, {@code delete}). */
    static final class WaitOptions extends IntervalOption {
        @Option(names = "--wait", description = "Follow the push until every host is done, or --timeout. Ctrl-C stops following only: the push goes on (mesh status PUSH follows it again).")
        boolean await;

        @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "10m",
                description = "How long --wait waits, such as 90s, 10m, 1h (default: ${DEFAULT-VALUE}).")
        String timeout;
    }

    /** How a command that follows the coordinator waits: {@code --timeout} in all, asking every {@code --interval}. */
    record Polling(Duration timeout, Duration every) {
        /**
         * @param timeout such as {@code 10m}
         * @param interval such as {@code 1s} or {@code 500ms}
         * @throws IllegalArgumentException naming what is wrong with either
         */
        static Polling parse(String timeout, String interval) {
            return new Polling(Durations.parse(timeout), parseInterval(interval));
        }

        static Duration parseInterval(String s) {
            if (s != null && s.matches("\\d{1,6}ms")) {
                long ms = Long.parseLong(s.substring(0, s.length() - 2));
                if (ms > 0) return Duration.ofMillis(ms);
            }
            return Durations.parse(s);
        }

        /** @return the {@link System#nanoTime()} at which the timeout, started now, runs out */
        long deadline() { return System.nanoTime() + timeout.toNanos(); }

        /**
         * Sleeps until the next ask: {@code every}, or less when the deadline comes first.
         *
         * @return false, at once, when the deadline has passed
         * @throws InterruptedException when interrupted
         */
        boolean pause(long deadline) throws InterruptedException {
            long left = deadline - System.nanoTime();
            if (left <= 0) return false;
            Thread.sleep(Math.max(1, Math.min(every.toMillis(), left / 1_000_000)));
            return true;
        }
    }

    /** {@code mesh push FILE|DIR}: sends a manifest, optionally waits for every host. */
    @Command(name = "push",
            description = {"Push a manifest to the coordinator: a FILE, or a DIR whose *.yaml and *.yml files are joined, sorted by name, as YAML documents.",
                    "Prints the push id; with --wait, prints each host's progress as it changes and exits 0 only when every host applied.",
                    "mesh push cancel PUSH drops a push that a host will not apply (no agent there, or a delete for a host gone): its hosts that have not applied it read cancelled, no longer pending.",
                    "A push still pending on a host without an agent 24h after it was taken (mesh-coordinator serve --no-agent-expiry) reads expired there; an agent that starts later still applies each module's newest desired state."},
            subcommands = {MeshCli.PushCancelCmd.class},
            exitCodeList = {"0:accepted (with --wait: applied on every host; with --plan: nothing would fail or be refused)",
                    "1:a host failed, or (with --wait) a newer push superseded it on a host, it was cancelled or expired on a host, or only hosts without an agent are left, for 10s (with --plan: something would fail or be refused, or a host has no agent)",
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
            CoordinatorClient.Response r = plan ? client.plan(manifest, revision) : client.push(manifest, revision);
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
                        boolean dropped = !cancelled.isEmpty() || !expired.isEmpty();
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
                            + " deferred, " + count(counts, PushState.FAILED) + " failed, " + count(counts, PushState.APPLIED) + " applied"
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

    /** {@code mesh status [PUSH]}: the fleet, or one push. */
    @Command(name = "status",
            description = {"Without PUSH: the fleet (GET /v1/fleet), one line per host and module: agent, revision, outcome, open window, held containers, age of the last report; then the image each container runs (Docker's image id and the registry digest); then the open windows, the freezes in force and the pushes not yet done.",
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
            Table.of(fleet.path("hosts"), (t, h) -> addHost(t, h, fleet.path("at")), "HOST", "AGENT", "MODULE", "REVISION", "OUTCOME", "WINDOW", "HELD", "AGE", "DETAIL")
                    .print(out, "no host has an agent or a report yet");
            out.println();
            Table.of(fleet.path("hosts"), Status::addHostImages, "HOST", "CONTAINER", "IMAGE ID", "IMAGE DIGEST")
                    .print(out, "no report names a container's image yet");
            JsonNode windows = fleet.path("windows");
            out.println();
            out.println(windows.size() == 0 ? "no window is open" : windows.size() + " open window" + (windows.size() == 1 ? "" : "s") + " (mesh windows)");
            for (JsonNode f : fleet.path("freezes")) {
                out.println("frozen: " + (f.path("all").asBoolean() ? "every module" : f.path("module").asText()) + " until " + text(f.path("until"))
                        + " by " + text(f.path("by")) + ": " + f.path("reason").asText() + " (mesh thaw " + (f.path("all").asBoolean() ? "--all" : f.path("module").asText()) + ")");
            }
            JsonNode pending = fleet.path("pendingPushes");
            if (pending.size() == 0) {
                out.println("no push pending");
            } else {
                for (JsonNode p : pending) {
                    JsonNode c = p.path("counts");
                    out.println("push " + p.path("push").asText() + " (revision " + p.path("revision").asText() + ") " + p.path("state").asText()
                            + ": " + count(c, PushState.PENDING) + " pending, " + count(c, PushState.DEFERRED) + " deferred, "
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
            if (h.path("modules").isEmpty()) table.add(h.path("host").asText(), agent, "-", "-", "-", "-", "-", "-", "");
            for (JsonNode m : h.path("modules")) {
                JsonNode w = m.path("window");
                String rev = text(m.path("revision"));
                String desired = m.path("desiredRevision").asText(null);
                if (desired != null && !desired.equals(m.path("revision").asText(null))) rev = rev + " -> " + desired;
                String detail = WireName.of(PushState.class, m.path("outcome").asText()) == PushState.FAILED && m.hasNonNull("error") ? m.path("error").asText() : "";
                if (m.path("lastKnown").isObject()) detail = lastKnown(m.path("lastKnown")) + (detail.isEmpty() ? "" : "; " + detail);
                table.add(h.path("host").asText(), agent, m.path("module").asText(), rev, m.path("outcome").asText(),
                        w.isObject() ? window(w) : "-", joinText(m.path("held")), age(at, m.path("finishedAt")), detail);
            }
        }
    }

    /** {@code mesh windows}: every open window, when it should end, and the push waiting on it; the fleet-wide slots. */
    @Command(name = "windows",
            description = {"Every open window on every host (GET /v1/windows): schedule, id, since, when it ends at the latest (since + the schedule's timeout), the containers it holds, the push deferred by it, and the process running it.",
                    "Then each fleet-wide slot (a schedule's max-concurrent, or a group): the windows that run ('runs'; 'runs, session lost' while a window whose session went still counts) and the queue in order ('waits N'), with how long each waited for its slot."},
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

    /** {@code mesh window}: the parent of {@code mesh window run}. */
    @Command(name = "window", mixinStandardHelpOptions = true, description = "Windows on demand: mesh window run MODULE/SCHEDULE --host H.",
            subcommands = {MeshCli.WindowRun.class})
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

    /** Rows under a header, printed in columns as wide as their widest cell, two spaces apart. */
    static final class Table {
        private final List<String[]> rows = new ArrayList<>();

        Table(String... header) { rows.add(header); }

        /** @return a table of the rows {@code add} makes of each element of {@code array}, under {@code header} */
        static Table of(JsonNode array, BiConsumer<Table, JsonNode> add, String... header) {
            Table table = new Table(header);
            for (JsonNode element : array) add.accept(table, element);
            return table;
        }

        /** Adds a row of as many cells as the header has. */
        void add(String... row) { rows.add(row); }

        /** Prints the table, or the line {@code none} when no row was added. */
        void print(PrintWriter out, String none) {
            if (rows.size() == 1) {
                out.println(none);
                return;
            }
            int cols = rows.get(0).length;
            int[] w = new int[cols];
            for (String[] row : rows) for (int i = 0; i < cols; i++) w[i] = Math.max(w[i], row[i].length());
            for (String[] row : rows) {
                StringBuilder b = new StringBuilder();
                for (int i = 0; i < cols; i++) {
                    b.append(i == cols - 1 ? row[i] : pad(row[i], w[i])).append(i == cols - 1 ? "" : "  ");
                }
                out.println(b.toString().stripTrailing());
            }
        }
    }

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

    /** @return {@code , N superseded}, {@code , N cancelled}, {@code , N expired} for those a push's {@code counts} has, else nothing */
    private static String superseded(JsonNode counts) {
        StringBuilder b = new StringBuilder();
        for (PushState s : List.of(PushState.SUPERSEDED, PushState.CANCELLED, PushState.EXPIRED)) {
            int n = count(counts, s);
            if (n > 0) b.append(", ").append(n).append(' ').append(s.wire());
        }
        return b.toString();
    }

    private static String detailSuffix(String state, JsonNode t) {
        String d = detail(state, t);
        if (d.isEmpty()) return "";
        return WireName.of(PushState.class, state) == PushState.FAILED ? ": " + d : " (" + d + ")";
    }

    /** @return the number of targets in {@code state}, from a push's {@code counts} */
    private static int count(JsonNode counts, PushState state) {
        return counts.path(state.wire()).asInt();
    }

    private static String detail(String state, JsonNode t) {
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
    private static String window(JsonNode w) {
        return w.path("schedule").asText() + " " + w.path("window").asText() + " since " + w.path("since").asText();
    }

    private static String by(JsonNode by) {
        if (by == null || by.isMissingNode() || by.isNull()) return "-";
        return by.path("pid").asText() + (by.hasNonNull("process") ? " (" + by.path("process").asText() + ")" : "");
    }

    /** @return the time from {@code since} to {@code at} (both ISO-8601), short: {@code 42s}, {@code 5m}; {@code -} without both */
    private static String age(JsonNode at, JsonNode since) {
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

    private static String text(JsonNode n) { return n == null || n.isMissingNode() || n.isNull() ? "-" : n.asText(); }

    private static String joinText(JsonNode array) { return joinText(array, "-"); }

    /** @return the array's texts joined with commas; {@code none} when it has none */
    private static String joinText(JsonNode array, String none) {
        List<String> s = new ArrayList<>();
        array.forEach(n -> s.add(n.asText()));
        return s.isEmpty() ? none : String.join(",", s);
    }

    private static String pretty(JsonNode json) throws JsonProcessingException {
        return CoordinatorClient.TREES.writerWithDefaultPrettyPrinter().writeValueAsString(json);
    }

    private static String pad(String s, int width) { return s.length() >= width ? s : s + " ".repeat(width - s.length()); }

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

    /** {@code mesh rollout status|resume|abort MODULE}: a module's rollout (decision 13). */
    @Command(name = "rollout", mixinStandardHelpOptions = true,
            description = {"A module's rollout (/mesh/rollouts/MODULE): its status, resume and abort.",
                    "mesh rollout status MODULE shows which hosts are done, applying, waiting and failed;",
                    "resume MODULE lets a paused rollout go on (the hosts that failed keep the previous revision); abort MODULE stops it for good",
                    "(hosts that have not applied it keep the previous revision)."},
            subcommands = {MeshCli.RolloutStatus.class, MeshCli.RolloutResume.class, MeshCli.RolloutAbort.class})
    public static final class RolloutCmd implements Runnable {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        /** Prints the usage. */
        @Override
        public void run() { throw missingCommand(spec); }

        /** @return one line: state, then the hosts done (of all), applying, waiting, failed and the canaries */
        static String summary(JsonNode r) {
            Set<String> hosts = new HashSet<>();
            for (String f : List.of("hosts", "done", "applying", "waiting", "failed")) r.path(f).forEach(h -> hosts.add(h.asText()));
            int all = hosts.size();
            String s = r.path("state").asText() + "  done " + r.path("done").size() + "/" + all;
            if (!r.path("applying").isEmpty()) s += "  applying " + joinText(r.path("applying"));
            if (!r.path("waiting").isEmpty()) s += "  waiting " + joinText(r.path("waiting"));
            if (!r.path("failed").isEmpty()) s += "  failed " + joinText(r.path("failed"));
            if (!r.path("canary").isEmpty()) s += "  canary " + joinText(r.path("canary"));
            if (r.hasNonNull("maxParallel")) s += "  max-parallel " + r.path("maxParallel").asInt();
            return s;
        }
    }

    /** The shape of the rollout commands: one request about MODULE's rollout, the record printed. */
    abstract static class RolloutCommand extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "MODULE", description = "The module, such as store.")
        String module;

        @Option(names = "--json", description = "Print the rollout node's JSON.")
        boolean json;

        /** Sends the request. */
        abstract CoordinatorClient.Response send(CoordinatorClient client, String path) throws IOException, InterruptedException;

        /**
         * Resumes or aborts the rollout of the push the module's rollout node names now, read just before: a newer push
         * that replaced it in between is not resumed or aborted by mistake (409).
         */
        static CoordinatorClient.Response move(CoordinatorClient client, String path, String move) throws IOException, InterruptedException {
            CoordinatorClient.Response now = client.get(path);
            if (now.status() != 200 || now.json() == null) return now;
            return client.postJson(path + "/" + move, Map.of("push", now.json().path("push").asText()));
        }

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            CoordinatorClient.Response r = send(client(), "/v1/rollouts/" + URLEncoder.encode(module, StandardCharsets.UTF_8));
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            JsonNode j = r.json();
            PrintWriter out = out();
            if (json) {
                out.println(pretty(j));
            } else {
                out.println("rollout of " + module + ": " + j.path("push").asText() + " revision " + j.path("revision").asText()
                        + "  since " + text(j.path("since")) + "  on-failure " + j.path("onFailure").asText());
                out.println(RolloutCmd.summary(j));
                if (j.hasNonNull("note")) out.println(j.path("note").asText());
            }
            out.flush();
            return OK;
        }
    }

    /** {@code mesh rollout status MODULE}. */
    @Command(name = "status", description = "Show MODULE's rollout: its push, state, and the hosts done, applying, waiting and failed (GET /v1/rollouts/MODULE).",
            exitCodeList = {"0:shown", "2:the module has no rollout, or a bad name", "4:the coordinator cannot be reached"})
    public static final class RolloutStatus extends RolloutCommand {
        @Override
        CoordinatorClient.Response send(CoordinatorClient client, String path) throws IOException, InterruptedException {
            return client.get(path);
        }
    }

    /** {@code mesh rollout resume MODULE}. */
    @Command(name = "resume", description = "Let MODULE's paused rollout go on (POST /v1/rollouts/MODULE/resume): the hosts that failed keep the previous revision.",
            exitCodeList = {"0:resumed", "2:no rollout, not paused, unauthorized", "4:the coordinator cannot be reached"})
    public static final class RolloutResume extends RolloutCommand {
        @Override
        CoordinatorClient.Response send(CoordinatorClient client, String path) throws IOException, InterruptedException {
            return move(client, path, "resume");
        }
    }

    /** {@code mesh rollout abort MODULE}. */
    @Command(name = "abort", description = "Stop MODULE's rollout for good (POST /v1/rollouts/MODULE/abort): hosts that have not applied it keep the previous revision.",
            exitCodeList = {"0:aborted", "2:no rollout, ended already, unauthorized", "4:the coordinator cannot be reached"})
    public static final class RolloutAbort extends RolloutCommand {
        @Override
        CoordinatorClient.Response send(CoordinatorClient client, String path) throws IOException, InterruptedException {
            return move(client, path, "abort");
        }
    }

    /** {@code mesh freeze MODULE|--all (--for DURATION|--until TIME) --reason TEXT} (docs/decisions/0014-freezes.md). */
    @Command(name = "freeze",
            description = {"Freeze MODULE, or every module with --all (POST /v1/freezes): pushes are still accepted and recorded, but agents apply none of them.",
                    "No Docker call is made on the module until the freeze ends, at --for/--until by itself or at mesh thaw; then the newest",
                    "revision lands with no new push. Reports read deferred with the freeze. Windows still run. Freezing again replaces the freeze.",
                    "An apply already in progress (it holds the module lock) still lands the container changes it has begun, and begins no other: mesh freeze names each one."},
            exitCodeList = {"0:frozen", "2:bad input (MODULE and --all, --for and --until, no --reason, a bad duration or time), unauthorized",
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

        /**
         * The request's body, checked here as the coordinator checks it (it checks again), so that a typo is named before
         * anything is sent.
         *
         * @return {@code {"module"|"all", "for"|"until", "reason"}}
         * @throws IllegalArgumentException naming the option and the fix
         */
        static Map<String, Object> body(String module, boolean all, String forDuration, String until, String reason) {
            if ((module == null) == !all) {
                throw new IllegalArgumentException(all ? "give MODULE or --all, not both" : "give the MODULE to freeze, or --all for every module");
            }
            if ((forDuration == null) == (until == null)) {
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
            if (forDuration != null) body.put("for", forDuration);
            else body.put("until", until);
            body.put("reason", reason);
            return body;
        }

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            Map<String, Object> body;
            try {
                body = body(module, all, forDuration, until, reason);
            } catch (IllegalArgumentException e) {
                return fail(BAD_INPUT, e.getMessage());
            }
            CoordinatorClient.Response r = client().postJson("/v1/freezes", body);
            Integer bad = failure(r, 201);
            if (bad != null) return bad;
            JsonNode j = r.json();
            PrintWriter out = out();
            out.println((all ? "every module" : module) + " frozen until " + text(j.path("until")) + " by " + text(j.path("by"))
                    + ": " + j.path("reason").asText() + " (mesh thaw " + (all ? "--all" : module) + " ends it sooner)");
            JsonNode was = j.path("replaced");
            if (was.isObject()) {
                out.println("  replaces the freeze until " + text(was.path("until")) + " by " + text(was.path("by")) + ": "
                        + was.path("reason").asText());
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
            out().println((all ? "every module" : module) + " thawed: the newest revision lands now");
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

        Freezes() { super("/v1/freezes", "freezes", "nothing is frozen", "MODULE", "UNTIL", "BY", "SINCE", "REASON"); }

        @Override
        void add(Table table, JsonNode f) {
            String until = text(f.path("until")) + (f.path("active").asBoolean(true) ? "" : " (ended)");
            table.add(f.path("all").asBoolean() ? "(all)" : f.path("module").asText(), until, text(f.path("by")), text(f.path("since")),
                    f.path("reason").asText());
        }
    }

    /**
     * {@code mesh audit [--since DURATION|TIME] [--until TIME] [--host H] [--module M] [--json]} (SPEC.md "Audit";
     * decision 28): each host's ledger over the span, judged by the one checker in the coordinator.
     */
    @Command(name = "audit",
            description = {"Show, from each host's ledger (Docker's own events and mesh's calls), every window, hold, freeze and apply in the span",
                    "and whether mesh kept its promise (GET /v1/audit): touched-while-held, outside-mesh, left-stopped, changed-while-frozen, gap,",
                    "each with the Docker event that shows it. The coordinator waits up to 10s for the hosts' agents to answer."},
            exitCodeList = {"0:clean", "1:violations", "2:bad usage (a bad --since or --until, an unknown host or module)",
                    "3:only gaps, or hosts that did not answer", "4:the coordinator cannot be reached, or runs 4 audits already (ask again)"})
    public static final class Audit extends CoordinatorCommand {
        /** The exit code of an audit with gaps only, or hosts that did not answer (SPEC.md, "Audit"). */
        public static final int GAPS = 3;

        @Option(names = "--since", paramLabel = "DURATION|TIME", defaultValue = "24h",
                description = "The span's start: a duration back from now, such as 1h or 24h, or an ISO-8601 UTC time (default: ${DEFAULT-VALUE}).")
        String since;

        @Option(names = "--until", paramLabel = "TIME", description = "The span's end, an ISO-8601 UTC time (default: now).")
        String until;

        @Option(names = "--host", paramLabel = "HOST", description = "Only this host (repeatable; default: every host).")
        List<String> hosts = new ArrayList<>();

        @Option(names = "--module", paramLabel = "MODULE", description = "Only this module (repeatable; default: every module).")
        List<String> modules = new ArrayList<>();

        @Option(names = "--timeout", paramLabel = "DURATION",
                description = "How long the coordinator waits for the hosts' agents, such as 5s (default: 10s; at most 25s).")
        String timeout;

        @Option(names = "--json", description = "Print the coordinator's JSON instead of text (the exit code is the same).")
        boolean json;

        /** @return the API path with the query these options make */
        String path() {
            StringBuilder q = new StringBuilder("/v1/audit?since=").append(URLEncoder.encode(since, StandardCharsets.UTF_8));
            if (until != null) q.append("&until=").append(URLEncoder.encode(until, StandardCharsets.UTF_8));
            for (String h : hosts) q.append("&host=").append(URLEncoder.encode(h, StandardCharsets.UTF_8));
            for (String m : modules) q.append("&module=").append(URLEncoder.encode(m, StandardCharsets.UTF_8));
            if (timeout != null) q.append("&timeout=").append(URLEncoder.encode(timeout, StandardCharsets.UTF_8));
            return q.toString();
        }

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            CoordinatorClient.Response r = client().get(path());
            if (r.status() == 400 && r.json() != null && r.json().path("errors").isArray()) {
                for (JsonNode e : r.json().path("errors")) warn("--" + e.path("field").asText() + ": " + e.path("message").asText());
                return BAD_INPUT;
            }
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            PrintWriter out = out();
            if (json) out.println(pretty(r.json()));
            else AuditOutput.print(r.json(), out);
            out.flush();
            int exit = r.json().path("exit").asInt(FAILED);
            return exit == 0 || exit == 1 || exit == GAPS ? exit : FAILED;
        }
    }

    /** {@code mesh why HOST CONTAINER}: why the container is in its state now, as a chain of reasons (SPEC.md "Audit"). */
    @Command(name = "why",
            description = {"Why CONTAINER (its Docker name, <module>-<name>) on HOST is in its state now (GET /v1/why/HOST/CONTAINER): held by a window",
                    "or an operator, pushes deferred behind it, its rollout's wave, a freeze, the slot queue, the last apply's outcome and reasons,",
                    "and today's audit violations on it (asked of the host's ledger)."},
            exitCodeList = {"0:shown", "2:unknown host or container", "4:the coordinator cannot be reached, or runs 4 audits already (ask again)"})
    public static final class Why extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "HOST", description = "The host, such as host-a.")
        String host;

        @Parameters(index = "1", paramLabel = "CONTAINER", description = "The container's Docker name, such as store-registry.")
        String container;

        @Option(names = "--json", description = "Print the coordinator's JSON instead of text.")
        boolean json;

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            CoordinatorClient.Response r = client().get("/v1/why/" + URLEncoder.encode(host, StandardCharsets.UTF_8) + "/"
                    + URLEncoder.encode(container, StandardCharsets.UTF_8));
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            PrintWriter out = out();
            if (json) out.println(pretty(r.json()));
            else AuditOutput.printWhy(r.json(), out);
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
