package io.mesh.manifest;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.time.Duration;
import java.util.List;

/**
 * A cron-timed step of a module (SPEC.md, "Manifest", {@code schedules}). With {@code while-stopped} it opens a
 * window that holds those containers stopped while the step runs.
 *
 * @param cron         5-field Unix cron, such as {@code 30 3 * * *}
 * @param timezone     IANA zone id such as {@code UTC}; {@code null} for the host's
 * @param whileStopped names of containers of this module held during the step; may be empty
 * @param step         the one-shot container
 * @param timeout      the step is killed after this long, as {@code 30m}; default {@code 30m}
 * @param maxConcurrent hosts running this schedule's window at once, fleet-wide; {@code null} for no limit
 *                      (SPEC.md, "Fleet-wide windows"; docs/decisions/0016-window-slots.md)
 * @param group         windows of every schedule naming this group, in any module, share one limit; {@code null} for none
 * @param jitter        a random delay up to this, per host and fire, as {@code 5m}; {@code null} for none
 * @param startBy       a window not started this long after its cron time is skipped; {@code null} for the timeout
 * @param gate          a Prometheus query asked before the window takes its slot ({@link GateSpec}); {@code null} for none
 * @param silence       an Alertmanager silence of each held container while it is held ({@link SilenceSpec}); {@code null} for none
 */
@JsonPropertyOrder({"cron", "timezone", "while-stopped", "step", "timeout", "max-concurrent", "group", "jitter", "start-by", "gate",
        "silence"})
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record ScheduleSpec(String cron, String timezone, @JsonProperty("while-stopped") List<String> whileStopped,
                           StepSpec step, String timeout, @JsonProperty("max-concurrent") Integer maxConcurrent,
                           String group, String jitter, @JsonProperty("start-by") String startBy, GateSpec gate,
                           SilenceSpec silence) {
    /** Default step timeout. */
    public static final String DEFAULT_TIMEOUT = "30m";
    /** A group's limit when none of its schedules gives {@code max-concurrent} (SPEC.md, "Fleet-wide windows"). */
    public static final int DEFAULT_GROUP_LIMIT = 1;

    public ScheduleSpec {
        whileStopped = whileStopped == null ? List.of() : List.copyOf(whileStopped);
        timeout = timeout == null ? DEFAULT_TIMEOUT : timeout;
    }

    /** A schedule without limits, jitter or start-by: the fields every schedule had before fleet-wide windows. */
    public ScheduleSpec(String cron, String timezone, List<String> whileStopped, StepSpec step, String timeout) {
        this(cron, timezone, whileStopped, step, timeout, null, null, null, null, null, null);
    }

    /** A schedule without a gate or a silence. */
    public ScheduleSpec(String cron, String timezone, List<String> whileStopped, StepSpec step, String timeout, Integer maxConcurrent,
                        String group, String jitter, String startBy) {
        this(cron, timezone, whileStopped, step, timeout, maxConcurrent, group, jitter, startBy, null, null);
    }

    /** @return the step timeout */
    public Duration timeoutDuration() { return Durations.parse(timeout); }

    /** @return the largest random delay before a window of this schedule begins; zero by default */
    public Duration jitterDuration() { return jitter == null ? Duration.ZERO : Durations.parseZeroAllowed(jitter); }

    /** @return how long after its cron time a window may still begin; the step timeout by default */
    public Duration startByDuration() { return startBy == null ? timeoutDuration() : Durations.parse(startBy); }
}
