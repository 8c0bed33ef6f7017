package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.manifest.Durations;
import io.mesh.coordinator.PrintingCommand;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.mesh.client.ClientText.pretty;
import static io.mesh.client.ExitCodes.*;

/**
 * What every command that talks to the coordinator has: {@code -h} and {@code -V}, its exit codes under one heading
 * (picocli takes these {@code @Command} attributes from the superclass), the {@link Connection} options, and its
 * own command line for output and for errors, which start with the command's name ({@code mesh push: ...}). With it,
 * what the commands share: the options ({@link Connection}, {@link JsonOption}, {@link IntervalOption},
 * {@link WaitOptions}), the shapes of a lookup ({@link Lookup}, {@link Listing}), how a command follows the coordinator
 * ({@link Polling}) and the usage error of a command run without its subcommand. {@link MeshCli} lists the commands;
 * nothing here needs that list.
 */
@Command(mixinStandardHelpOptions = true, exitCodeListHeading = "%nExit codes:%n")
abstract class CoordinatorCommand extends PrintingCommand {
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
     *         duration (the command then exits {@value ExitCodes#BAD_INPUT})
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
     *         answered, {@value ExitCodes#UNREACHABLE} for 5xx, {@value ExitCodes#BAD_INPUT} for 4xx, {@value ExitCodes#FAILED} for another
     */
    Integer failure(CoordinatorClient.Response r, int expected) {
        if (r.status() == expected && r.json() != null) return null;
        return fail(r.status() >= 500 ? UNREACHABLE : r.status() >= 400 ? BAD_INPUT : FAILED,
                "the coordinator answered " + r.status() + ": " + r.error());
    }

    /** Options every command shares: where the coordinators are and the token. */
    public static final class Connection {
        /** Environment variable naming the coordinator URL, or several, comma-separated. */
        public static final String ENV_COORDINATOR = "MESH_COORDINATOR";
        /** Environment variable holding the bearer token when no {@code --token-file} is given. */
        public static final String ENV_TOKEN = "MESH_TOKEN";

        @Option(names = "--coordinator", paramLabel = "URL[,URL...]", defaultValue = "${env:MESH_COORDINATOR:-http://127.0.0.1:7070}",
                description = {"Coordinator URL, or several, comma-separated: a request goes to the next when one does not answer "
                        + "(connection refused or timed out; an HTTP error answer is final). A push or window request goes on only when it "
                        + "could not be sent, never twice (default: $MESH_COORDINATOR, else http://127.0.0.1:7070)."})
        String url;

        @Option(names = "--token-file", paramLabel = "FILE",
                description = "File holding the bearer token for pushes (default: $MESH_TOKEN).")
        Path tokenFile;

        @Option(names = "--ca", paramLabel = "FILE", defaultValue = "${env:" + ClientTls.ENV_CA + "}",
                description = "PEM certificates of the CAs that sign https:// coordinators' certificates, trusted instead of the "
                        + "system's (old and new CA together while one is replaced) (default: $" + ClientTls.ENV_CA + ", else the "
                        + "system's CAs). The URL's host must be a name of the coordinator's certificate.")
        Path ca;

        @Option(names = "--cert", paramLabel = "FILE", defaultValue = "${env:" + ClientTls.ENV_CERT + "}",
                description = "PEM client certificate, for a coordinator that asks for one (serve --tls-client-ca) (default: $"
                        + ClientTls.ENV_CERT + "). With --key.")
        Path cert;

        @Option(names = "--key", paramLabel = "FILE", defaultValue = "${env:" + ClientTls.ENV_KEY + "}",
                description = "PEM private key of --cert: unencrypted PKCS#8 (BEGIN PRIVATE KEY), RSA or EC; openssl pkey -in KEY "
                        + "-out KEY.pkcs8 converts another (default: $" + ClientTls.ENV_KEY + ").")
        Path key;

        /**
         * @return a client of the configured coordinators, telling the command's error stream when it moves on to the next
         * @throws CommandLine.ParameterException via picocli when a URL, the token file or a TLS file is unusable
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
            ClientTls tls = null;
            if (ca != null || cert != null || key != null) {
                try {
                    tls = ClientTls.of(ca, cert, key);
                } catch (IllegalArgumentException e) {
                    throw new CommandLine.ParameterException(cl, e.getMessage());
                }
            }
            return new CoordinatorClient(uris, token, tls).onFailover(m -> {
                err.println("mesh: " + m);
                err.flush();
            });
        }
    }

    /**
     * @return the usage error of a command run without a subcommand: picocli prints it and the usage on stderr, and
     *         the exit code is {@value ExitCodes#BAD_INPUT} (README, "Exit codes")
     */
    static CommandLine.ParameterException missingCommand(CommandLine.Model.CommandSpec spec) {
        return new CommandLine.ParameterException(spec.commandLine(), "give a command: " + spec.qualifiedName() + " "
                + String.join("|", spec.subcommands().keySet().stream().filter(n -> !n.equals("help")).toList()) + " ...");
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
}
