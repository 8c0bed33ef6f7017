package io.mesh.hooks;

import io.mesh.docker.ContainerRuntime;
import io.mesh.docker.ExecResult;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.HooksSpec;
import io.mesh.secrets.Redaction;
import io.mesh.secrets.SecretsDir;
import io.mesh.zk.SessionGuard;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Runs a container's hook by {@code docker exec} (SPEC.md, "The rest of the operator's stack"; decision 38), through
 * the runtime the caller's section gives (so the exec is a call of its ledger, with its cause, and obeys its lock or
 * fence). A hook never throws at its caller but for a section's refusal ({@link SessionGuard.SessionLostException}):
 * whatever it did (a non-zero exit, a timeout, Docker refusing the exec) is in the {@link HookRun}, and the stop or
 * start it goes with is made all the same. Its output loses the container's secret values ({@link Redaction}, decision
 * 18) before it is kept, as a step's log lines do.
 */
public final class ContainerHooks {
    private static final Logger log = LoggerFactory.getLogger(ContainerHooks.class);
    /** How many of a hook's last output lines are kept. */
    public static final int OUTPUT_LINES = 5;
    /** The longest output line kept, in characters. */
    static final int LINE_CHARS = 300;
    /** The most a hook may run while its process stops (decision 26: a stop takes seconds). */
    public static final Duration STOPPING_TIMEOUT = Duration.ofSeconds(10);

    private final SecretsDir secrets;

    /** @param secrets the host's secrets dir, whose values a hook's output loses; {@code null} for none */
    public ContainerHooks(SecretsDir secrets) {
        this.secrets = secrets;
    }

    /**
     * Runs the container's hook of {@code phase}, if it has one.
     *
     * @param docker     the section's runtime (guarded or fenced)
     * @param phase      which hook
     * @param dockerName the container's Docker name, for the result and the log
     * @param id         the container's id
     * @param spec       the container's desired spec (its {@code hooks} and its secrets); {@code null} runs nothing
     * @param stopping   true when this process stops: the hook gets at most {@link #STOPPING_TIMEOUT}
     * @return how it ended; empty when the container has no such hook
     * @throws SessionGuard.SessionLostException when the section refused the call (its lock lapsed, its fence is gone)
     */
    public Optional<HookRun> run(ContainerRuntime docker, HookPhase phase, String dockerName, String id, ContainerSpec spec,
                                 boolean stopping) {
        HooksSpec hooks = spec == null ? null : spec.hooks();
        List<String> command = phase.command(hooks);
        if (command.isEmpty()) return Optional.empty();
        Duration timeout = hooks.timeoutDuration();
        if (stopping && timeout.compareTo(STOPPING_TIMEOUT) > 0) timeout = STOPPING_TIMEOUT;
        HookRun run;
        try {
            ExecResult r = docker.exec(id, command, timeout, OUTPUT_LINES);
            run = new HookRun(dockerName, phase, r.exitCode(), r.timedOut(), r.killed(), timeout, null, redacted(spec, r.output()));
        } catch (SessionGuard.SessionLostException e) {
            throw e;
        } catch (RuntimeException e) {
            run = new HookRun(dockerName, phase, null, false, false, timeout, redaction(spec).apply(describe(e)), List.of());
        }
        if (run.ok()) log.info("hook {}", run.line());
        else log.warn("hook {}{}", run.line(), run.output().size() < 2 ? "" : "; its last output: " + String.join(" | ", run.output()));
        return Optional.of(run);
    }

    /**
     * @param labels a container's labels
     * @return its spec as it was created ({@link io.mesh.docker.Labels#SPEC}) with the hooks it was created with
     *         ({@link io.mesh.docker.Labels#HOOKS}), for a hook where the desired spec cannot be read; {@code null} when
     *         it has no hooks label
     */
    public static ContainerSpec asCreated(java.util.Map<String, String> labels) {
        String hooks = labels == null ? null : labels.get(io.mesh.docker.Labels.HOOKS);
        if (hooks == null) return null;
        io.mesh.manifest.HooksSpec h = io.mesh.wire.Json.readOrNull(hooks.getBytes(java.nio.charset.StandardCharsets.UTF_8), io.mesh.manifest.HooksSpec.class);
        if (h == null) return null;
        String spec = labels.get(io.mesh.docker.Labels.SPEC);
        ContainerSpec was = spec == null ? null : io.mesh.wire.Json.readOrNull(spec.getBytes(java.nio.charset.StandardCharsets.UTF_8), ContainerSpec.class);
        return (was == null ? ContainerSpec.builder("unknown") : was.toBuilder()).hooks(h).build();
    }

    private List<String> redacted(ContainerSpec spec, List<String> lines) {
        List<String> out = new ArrayList<>();
        Redaction r = redaction(spec);
        for (String l : lines) {
            String s = r.apply(l);
            out.add(s.length() > LINE_CHARS ? s.substring(0, LINE_CHARS) + "..." : s);
        }
        return out;
    }

    private Redaction redaction(ContainerSpec spec) {
        if (secrets == null || spec == null || spec.secrets().isEmpty()) return Redaction.NONE;
        try {
            return secrets.resolve(spec).redaction();
        } catch (RuntimeException e) {
            return Redaction.NONE; // a secret that cannot be read has no value to print either
        }
    }

    /** @return a failure as one line: its message's first line, else its type */
    private static String describe(Throwable e) {
        String m = e.getMessage();
        if (m == null || m.isBlank()) return e.getClass().getSimpleName();
        return m.lines().map(String::strip).filter(x -> !x.isEmpty()).findFirst().orElse(m);
    }
}
