package io.mesh.client;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;
import java.util.List;

import static io.mesh.client.PushCommands.*;
import static io.mesh.client.StatusCommands.*;
import static io.mesh.client.HoldCommands.*;
import static io.mesh.client.WindowCommands.*;
import static io.mesh.client.RolloutCommands.*;
import static io.mesh.client.FreezeCommands.*;
import static io.mesh.client.AuditCommands.*;
import static io.mesh.client.CoordinatorCommand.missingCommand;
import static io.mesh.client.ExitCodes.*;

/**
 * {@code mesh}: the operator's client of the coordinator's HTTP API ({@code push}, {@code status}, {@code held},
 * {@code windows}, {@code locks}, {@code window run}, {@code history}, {@code rollback}, {@code delete}, {@code rollout},
 * {@code freeze}, {@code thaw}, {@code freezes}, {@code hold}, {@code release}, {@code drain}, {@code undrain},
 * {@code audit}, {@code why}), and
 * {@code import-compose}, which needs
 * no coordinator.
 * Run it as {@code deploy/bin/mesh} or {@code java -cp coordinator/target/mesh-coordinator.jar io.mesh.client.MeshCli}.
 * This class holds the command list; the commands live by concern beside it ({@link PushCommands},
 * {@link StatusCommands}, {@link HoldCommands}, {@link DrainCommands}, {@link WindowCommands}, {@link RolloutCommands},
 * {@link FreezeCommands}, {@link AuditCommands}), on what they share: {@link CoordinatorCommand} (the options and the base of every command
 * that talks to the coordinator), {@link ExitCodes} and {@link ClientText}. The arrows go from this class to the
 * commands and from them to what they share, never back.
 *
 * <p>Exit codes: {@value ExitCodes#OK} success (for {@code push --wait}: every host applied), {@value ExitCodes#FAILED} a host failed
 * or an unexpected error (for {@code window run}: the window or its step failed), {@value ExitCodes#BAD_INPUT} bad input (the
 * coordinator answered 400, 401, 404, 409 or 413; or a usage error), {@value ExitCodes#TIMEOUT} {@code --wait} or
 * {@code window run} timed out, or {@code hold} recorded but not confirmed by its host ({@code audit}: its own codes,
 * SPEC.md "Audit": 0 clean, 1 violations, 3 only gaps or hosts that did not answer, 2 bad usage), {@value ExitCodes#UNREACHABLE} the
 * coordinator cannot be reached or is unavailable (5xx).
 */
@Command(name = "mesh", mixinStandardHelpOptions = true, version = "mesh " + io.mesh.wire.MeshVersion.CURRENT,
        description = "The operator's client of the mesh coordinator: push manifests, follow them, see what is held.",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:success (push --wait: every host applied; window run: the step succeeded)",
                "1:a host failed (push --wait: or a newer push superseded it on a host), a window or its step failed, or an unexpected error",
                "2:bad input (invalid manifest, unauthorized, unknown push, module, schedule or host, no agent on the host, too large, usage error)",
                "3:push --wait or window run timed out; hold recorded but not yet confirmed by its host; audit: only gaps or hosts that did not answer", "4:the coordinator cannot be reached or is unavailable"})
public final class MeshCli implements Runnable {
    /**
     * The commands, in the order {@code mesh --help} lists them. Here rather than in {@code @Command(subcommands)}, which
     * picocli would build all of, by reflection, before every run: {@link #commandLine(String...)} builds only the one
     * a run names (docs/benchmark-notes.md, B9).
     */
    static final List<Class<?>> COMMANDS = List.of(Push.class, Status.class, Held.class, Hold.class, Release.class, Windows.class, Locks.class,
            WindowCmd.class, History.class, Rollback.class, Delete.class, RolloutCmd.class, Freeze.class, Thaw.class, Freezes.class,
            DrainCommands.Drain.class, DrainCommands.Undrain.class,
            Audit.class, Why.class, ImportCompose.class, BackupCommands.Backup.class, BackupCommands.Restore.class,
            CommandLine.HelpCommand.class);

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
     *         ({@value ExitCodes#UNREACHABLE} when the coordinator cannot be reached, else {@value ExitCodes#FAILED}); set its out and
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
                // A TLS refusal names its own fix; "is it running?" is for a coordinator that did not answer at all.
                boolean tls = false;
                for (Throwable t = ex; t != null && !tls; t = t.getCause()) tls = t instanceof javax.net.ssl.SSLException;
                err.println("mesh: " + ex.getMessage() + (tls ? "" : " (is mesh-coordinator serve running? set --coordinator or "
                        + CoordinatorCommand.Connection.ENV_COORDINATOR + ")"));
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

}
