package io.mesh.hooks;

import io.mesh.manifest.HooksSpec;

import java.time.Duration;
import java.util.List;

/**
 * How one hook ended (decision 38).
 *
 * @param container the container's Docker name
 * @param phase     which hook
 * @param exitCode  its exit code; {@code null} when it timed out or was not run
 * @param timedOut  true when it was abandoned at {@code timeout}
 * @param killed    for one that timed out: true when its process was killed
 * @param timeout   the bound it ran under
 * @param notRun    why Docker did not run it (the container not running, Docker's answer), else {@code null}
 * @param output    its last output lines, secret values taken out
 */
public record HookRun(String container, HookPhase phase, Integer exitCode, boolean timedOut, boolean killed, Duration timeout,
                      String notRun, List<String> output) {
    public HookRun {
        output = output == null ? List.of() : List.copyOf(output);
    }

    /** @return true when it ran and exited 0 */
    public boolean ok() { return exitCode != null && exitCode == 0; }

    /** @return true when a window's {@code pre-stop} said "not now": exit {@link HooksSpec#SKIP_WINDOW} (SPEC.md) */
    public boolean skipsWindow() { return phase == HookPhase.PRE_STOP && exitCode != null && exitCode == HooksSpec.SKIP_WINDOW; }

    /**
     * @return one line, such as {@code pre-stop of store-registry exited 0}, {@code post-start of store-registry exited
     *         3: <its last output line>}, {@code pre-stop of store-registry timed out after 2s (hooks.timeout), killed}
     */
    public String line() {
        String who = phase + " of " + container;
        if (notRun != null) return who + " not run: " + notRun;
        if (timedOut) {
            return who + " timed out after " + seconds(timeout) + " (hooks.timeout), " + (killed ? "killed"
                    : "not killed (its process is not visible to the agent): it may still run in the container");
        }
        String last = output.isEmpty() ? "" : output.get(output.size() - 1).strip();
        return who + " exited " + exitCode + (ok() || last.isEmpty() ? "" : ": " + last);
    }

    private static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
    }
}
