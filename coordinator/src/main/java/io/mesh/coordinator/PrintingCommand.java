package io.mesh.coordinator;

import io.mesh.cli.ProcessOptions;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/**
 * A picocli command that prints to its command line's streams, not to {@code System.out}/{@code err}, so that a test
 * running it through {@code CommandLine} reads what it printed; it answers its exit code. Here, in the wire, beside
 * {@link ProcessOptions}, because the coordinator's and the client's commands share it.
 */
public abstract class PrintingCommand implements Callable<Integer> {
    /** The command as picocli built it: its name, options and command line. */
    @Spec
    protected CommandSpec spec;

    /** @return the command line's standard output */
    protected PrintWriter out() { return spec.commandLine().getOut(); }

    /** @return the command line's error output */
    protected PrintWriter err() { return spec.commandLine().getErr(); }

    /** Prints from now on as {@code other} does (its name and streams): for a command that runs another's steps. */
    public void printAs(PrintingCommand other) { spec = other.spec; }
}
