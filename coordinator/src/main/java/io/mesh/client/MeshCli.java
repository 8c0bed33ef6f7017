package io.mesh.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.manifest.Durations;
import io.mesh.coordinator.PrintingCommand;
import io.mesh.wire.PushState;
import io.mesh.manifest.WireName;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static io.mesh.client.PushCommands.*;
import static io.mesh.client.StatusCommands.*;
import static io.mesh.client.HoldCommands.*;
import static io.mesh.client.WindowCommands.*;
import static io.mesh.client.RolloutCommands.*;
import static io.mesh.client.FreezeCommands.*;
import static io.mesh.client.AuditCommands.*;

/**
 * {@code mesh}: the operator's client of the coordinator's HTTP API ({@code push}, {@code status}, {@code held},
 * {@code windows}, {@code locks}, {@code window run}, {@code history}, {@code rollback}, {@code delete}, {@code rollout},
 * {@code freeze}, {@code thaw}, {@code freezes}, {@code hold}, {@code release}, {@code audit}, {@code why}), and
 * {@code import-compose}, which needs
 * no coordinator.
 * Run it as {@code deploy/bin/mesh} or {@code java -cp coordinator/target/mesh-coordinator.jar io.mesh.client.MeshCli}.
 * This class holds the command list, the options every command shares and the exit codes; the commands live by
 * concern beside it ({@link PushCommands}, {@link StatusCommands}, {@link HoldCommands}, {@link WindowCommands},
 * {@link RolloutCommands}, {@link FreezeCommands}, {@link AuditCommands}).
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
    static String superseded(JsonNode counts) {
        StringBuilder b = new StringBuilder();
        for (PushState s : List.of(PushState.SUPERSEDED, PushState.CANCELLED, PushState.EXPIRED)) {
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
