package io.mesh.wire;

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
 */
@JsonPropertyOrder({"cron", "timezone", "while-stopped", "step", "timeout"})
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record ScheduleSpec(String cron, String timezone, @JsonProperty("while-stopped") List<String> whileStopped,
                           StepSpec step, String timeout) {
    /** Default step timeout. */
    public static final String DEFAULT_TIMEOUT = "30m";

    public ScheduleSpec {
        whileStopped = whileStopped == null ? List.of() : List.copyOf(whileStopped);
        timeout = timeout == null ? DEFAULT_TIMEOUT : timeout;
    }

    /** @return the step timeout */
    public Duration timeoutDuration() { return Durations.parse(timeout); }
}
