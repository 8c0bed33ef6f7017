package io.mesh.client;

import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * One run of the {@code mesh} client in this JVM: its exit code and what it printed. The one way the client's tests
 * run it.
 *
 * @param code its exit code
 * @param out  what it printed on stdout
 * @param err  what it printed on stderr
 */
record ClientRun(int code, String out, String err) {
    /**
     * Runs the client with {@code --coordinator=coordinators} added, unless the arguments give one or ask for
     * {@code --help}.
     *
     * @param coordinators one URL or several, comma-separated
     */
    static ClientRun of(String coordinators, String... args) {
        return of(coordinators, new StringWriter(), args);
    }

    /** Runs the client with exactly these arguments, for a command that needs no coordinator ({@code import-compose}). */
    static ClientRun local(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = MeshCli.commandLine(args);
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(args);
        return new ClientRun(code, out.toString(), err.toString());
    }

    /** As {@link #of(String, String...)}, printing into {@code out}, which another thread may read meanwhile. */
    static ClientRun of(String coordinators, StringWriter out, String... args) {
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(List.of(args));
        if (all.stream().noneMatch(a -> a.startsWith("--coordinator")) && !all.contains("--help")) all.add("--coordinator=" + coordinators);
        String[] argv = all.toArray(String[]::new);
        CommandLine cl = MeshCli.commandLine(argv);  // as main builds it: only the command run
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int code = cl.execute(argv);
        return new ClientRun(code, out.toString(), err.toString());
    }
}
