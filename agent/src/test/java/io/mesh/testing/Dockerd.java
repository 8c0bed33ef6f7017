package io.mesh.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Stops and starts the machine's Docker engine for fault tests, the way an operator or a reboot would: SIGTERM to
 * dockerd (SIGKILL after a bound), then {@code deploy/dev/docker-engine.sh}, which starts
 * {@code dockerd --bridge=none --iptables=false} when no engine answers. Every wait is bounded; tests call
 * {@link #ensureRunning()} in a {@code finally} so that the engine is always up again after them.
 *
 * <p>Restarting dockerd stops every container on the machine for a few seconds: keep the downtime short.
 */
public final class Dockerd {
    private Dockerd() {}

    /** @return dockerd's pid, from {@code /var/run/docker.pid} (checked against {@code /proc/PID/comm}), or -1 */
    public static long pid() {
        try {
            long pid = Long.parseLong(Files.readString(Path.of("/var/run/docker.pid")).strip());
            String comm = Files.readString(Path.of("/proc/" + pid + "/comm")).strip();
            return comm.equals("dockerd") ? pid : -1;
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
    }

    /** @return true when the engine answers a ping */
    public static boolean answers() {
        try {
            TestDocker.engine().client().pingCmd().exec();
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * Stops dockerd: SIGTERM, SIGKILL after {@code within}; waits until the process is gone.
     *
     * @param within how long dockerd may take to stop its containers and exit
     */
    public static void stop(Duration within) {
        long pid = pid();
        if (pid < 0) return;
        ProcessHandle h = ProcessHandle.of(pid).orElse(null);
        if (h == null) return;
        h.destroy();
        try {
            h.onExit().get(within.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            h.destroyForcibly();
            try {
                h.onExit().get(10, TimeUnit.SECONDS);
            } catch (Exception ignored) {
                // reported by start()
            }
        }
    }

    /**
     * Starts dockerd with {@code deploy/dev/docker-engine.sh} (in its own session, so that it outlives the test JVM)
     * and waits until it answers.
     *
     * @throws IllegalStateException when it does not answer within 90 s
     */
    public static void start() {
        if (answers()) return;
        Path script = repo().resolve("deploy/dev/docker-engine.sh");
        try {
            Process p = new ProcessBuilder("setsid", "bash", script.toString()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(90, TimeUnit.SECONDS)) p.destroyForcibly();
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + script + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!answers()) {
            if (System.nanoTime() > end) throw new IllegalStateException("dockerd does not answer after docker-engine.sh; see /var/log/mesh-dockerd.log");
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /**
     * Stops and starts dockerd.
     *
     * @return how long the engine did not answer
     */
    public static Duration restart() {
        long t0 = System.nanoTime();
        stop(Duration.ofSeconds(30));
        start();
        return Duration.ofNanos(System.nanoTime() - t0);
    }

    /** Starts dockerd if it does not answer; for {@code finally} blocks. */
    public static void ensureRunning() {
        if (!answers()) start();
    }

    /** @return the repository root: the first parent of the working directory holding deploy/dev/docker-engine.sh */
    public static Path repo() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("deploy/dev/docker-engine.sh"))) p = p.getParent();
        if (p == null) throw new IllegalStateException("deploy/dev/docker-engine.sh not found above " + Path.of("").toAbsolutePath());
        return p;
    }
}
