package io.mesh.testing;

import io.mesh.agent.AgentMain;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A separate JVM started by a test from the test classpath (through {@link Orphanless}, so it dies with the test
 * JVM): a mesh process ({@code mesh-agent run} or {@code mesh-agent window}) or a ZooKeeper server. Its output goes
 * to a log file. It can be killed with SIGKILL, paused with SIGSTOP and resumed with SIGCONT; {@link #close()} makes
 * sure it is gone, within bounded time.
 */
public final class ChildJvm implements AutoCloseable {
    private static final List<String> JVM_FLAGS = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k");

    private final String name;
    private final Process process;
    private final Path log;

    private ChildJvm(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /**
     * Starts {@code main} in a new JVM.
     *
     * @param name      a short name for messages and the log file
     * @param dir       where the log file goes
     * @param heap      maximum heap such as {@code 192m}
     * @param mainClass the class whose main runs
     * @param args      its arguments
     * @return the started JVM
     * @throws IOException when it cannot be started
     */
    public static ChildJvm start(String name, Path dir, String heap, String mainClass, List<String> args) throws IOException {
        return start(name, dir, heap, mainClass, args, java.util.Map.of());
    }

    /**
     * As {@link #start(String, Path, String, String, List)}, with variables added to the JVM's environment (such as
     * libfaketime's, for a host whose clock is off).
     *
     * @param env variables to add
     * @return the started JVM
     * @throws IOException when it cannot be started
     */
    public static ChildJvm start(String name, Path dir, String heap, String mainClass, List<String> args, java.util.Map<String, String> env)
            throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx" + heap);
        cmd.addAll(JVM_FLAGS);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Orphanless.class.getName());
        cmd.add(mainClass);
        cmd.addAll(args);
        Files.createDirectories(dir);
        Path log = dir.resolve(name + ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(env);
        Process p = pb.start();
        return new ChildJvm(name, p, log);
    }

    /**
     * Starts {@code mesh-agent} ({@link AgentMain}) with the given arguments, such as
     * {@code run --host h --zk ... --state-dir ...}.
     *
     * @param name a short name
     * @param dir  where the log goes
     * @param args mesh-agent's arguments
     * @return the started process
     * @throws IOException when it cannot be started
     */
    public static ChildJvm agent(String name, Path dir, List<String> args) throws IOException {
        return start(name, dir, "192m", AgentMain.class.getName(), args);
    }

    /** @return the short name */
    public String name() { return name; }

    /** @return the operating-system pid */
    public long pid() { return process.pid(); }

    /** @return true while it runs (a paused process runs) */
    public boolean isAlive() { return process.isAlive(); }

    /** SIGKILL, then waits (bounded) until it is gone. */
    public void kill9() {
        process.destroyForcibly();
        awaitGone(Duration.ofSeconds(20));
    }

    /** SIGSTOP: the process freezes (no heartbeats, no Docker calls) until {@link #resume()}. */
    public void pause() { signal("STOP"); }

    /** SIGCONT. */
    public void resume() { signal("CONT"); }

    /**
     * SIGTERM, as an operator's {@code kill} or systemd sends it; returns at once. Not {@link Process#destroy()}: that
     * also closes the child's standard input, on which {@link Orphanless} halts the JVM before its shutdown hooks run.
     */
    public void sigterm() { signal("TERM"); }

    /**
     * SIGTERM, then SIGKILL when it has not exited within {@code grace}.
     *
     * @param grace how long to wait for a clean exit
     * @return the exit code, or -1 when it had to be killed
     */
    public int terminate(Duration grace) {
        if (!process.isAlive()) return process.exitValue();
        signal("CONT");
        sigterm();
        try {
            if (process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        kill9();
        return -1;
    }

    /**
     * @param within how long to wait
     * @return the exit code
     * @throws AssertionError naming the process and its log when it has not exited in time
     */
    public int awaitExit(Duration within) {
        try {
            if (process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        throw new AssertionError(name + " did not exit within " + within.toSeconds() + "s; its log:\n" + output());
    }

    /** @return everything it printed so far */
    public String output() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** @return the last line of its output that starts with '{' (mesh-agent window prints its result so) */
    public Optional<String> lastJsonLine() {
        return output().lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b);
    }

    private void signal(String sig) {
        if (!process.isAlive()) return;
        try {
            Process k = new ProcessBuilder("kill", "-" + sig, String.valueOf(process.pid())).redirectErrorStream(true).start();
            k.waitFor(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            throw new IllegalStateException("kill -" + sig + " " + process.pid() + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void awaitGone(Duration within) {
        try {
            process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Makes sure the process is gone: SIGCONT (in case it is paused), then SIGKILL; bounded. */
    @Override
    public void close() {
        if (process.isAlive()) {
            signal("CONT");
            kill9();
        }
        try {
            process.getOutputStream().close();
        } catch (IOException ignored) {
            // gone
        }
    }

    @Override
    public String toString() { return name + " (pid " + process.pid() + ")"; }
}
