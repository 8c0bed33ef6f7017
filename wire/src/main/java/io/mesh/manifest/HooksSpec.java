package io.mesh.manifest;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.time.Duration;
import java.util.List;

/**
 * A container's {@code hooks} (SPEC.md, "The rest of the operator's stack"): commands mesh runs in the container by
 * {@code docker exec} around every stop and start it makes. Not part of the spec hash: they are mesh's behaviour, not
 * Docker's config, so a change of them recreates nothing. The rule: docs/decisions/0038-container-hooks.md.
 *
 * @param preStop   the command run before each stop, as an argv list (no shell); empty for none. Exiting
 *                  {@link #SKIP_WINDOW} skips a window.
 * @param postStart the command run once a started container is ready, as an argv list; empty for none
 * @param timeout   how long each hook may run before it is abandoned (and killed where the agent can), such as
 *                  {@code 30s}; {@code null} for {@link #DEFAULT_TIMEOUT}, at most {@link #MAX_TIMEOUT}
 */
@JsonPropertyOrder({"pre-stop", "post-start", "timeout"})
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public record HooksSpec(@JsonProperty("pre-stop") List<String> preStop, @JsonProperty("post-start") List<String> postStart,
                        String timeout) {
    /** SPEC's default {@code timeout}. */
    public static final String DEFAULT_TIMEOUT = "30s";
    /** The longest {@code timeout} the parser takes: a hook must stay short beside a window and an agent's stop budget. */
    public static final Duration MAX_TIMEOUT = Duration.ofMinutes(5);
    /** {@code EX_TEMPFAIL}: a window's {@code pre-stop} exiting so says "not now", and the window is skipped (SPEC.md). */
    public static final int SKIP_WINDOW = 75;

    public HooksSpec {
        preStop = preStop == null ? List.of() : List.copyOf(preStop);
        postStart = postStart == null ? List.of() : List.copyOf(postStart);
    }

    /** @return {@code timeout}, or its default */
    public Duration timeoutDuration() { return Durations.parse(timeout == null ? DEFAULT_TIMEOUT : timeout); }
}
