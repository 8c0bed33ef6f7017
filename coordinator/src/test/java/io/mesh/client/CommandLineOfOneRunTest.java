package io.mesh.client;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link MeshCli#commandLine(String...)}, which builds only the command a run names, against
 * {@link MeshCli#commandLine()}, which builds every one: the same exit code, stdout and stderr for each command's
 * {@code --help}, a usage error in it, and for what names no command.
 */
class CommandLineOfOneRunTest {
    /** @return code, stdout and stderr of one run of {@code cl} */
    private static List<Object> run(CommandLine cl, String... args) {
        StringWriter out = new StringWriter(), err = new StringWriter();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return List.of(code, out.toString(), err.toString());
    }

    @Test
    void eachCommandPrintsAndExitsAsWithEveryCommandBuilt() {
        List<String[]> runs = new ArrayList<>();
        for (Class<?> command : MeshCli.COMMANDS) {
            String name = command.getAnnotation(CommandLine.Command.class).name();
            runs.add(new String[]{name, "--help"});
            runs.add(new String[]{name, "--no-such-option", "--coordinator=http://127.0.0.1:1"});
            runs.add(new String[]{name, "--jsno", "--coordinator=http://127.0.0.1:1"});  // picocli suggests --json
        }
        runs.add(new String[]{"rollout", "status", "--help"});
        runs.add(new String[]{"window"});
        runs.add(new String[]{"stauts"});  // no such command: picocli suggests status
        runs.add(new String[]{"--help"});
        runs.add(new String[]{"help", "status"});
        runs.add(new String[0]);
        for (String[] args : runs) {
            List<Object> one = run(MeshCli.commandLine(args), args);
            assertThat(one).as(String.join(" ", args)).isEqualTo(run(MeshCli.commandLine(), args));
            assertThat((String) one.get(1) + one.get(2)).as(String.join(" ", args)).isNotBlank();
        }
    }

    @Test
    void onlyTheNamedCommandIsBuilt() {
        assertThat(MeshCli.commandLine("held", "--json").getSubcommands()).containsOnlyKeys("held");
        assertThat(MeshCli.commandLine("--help").getSubcommands()).hasSize(MeshCli.COMMANDS.size());
        assertThat(MeshCli.commandLine("help", "held").getSubcommands()).hasSize(MeshCli.COMMANDS.size());
    }
}
