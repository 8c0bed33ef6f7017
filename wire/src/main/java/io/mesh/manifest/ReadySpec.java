package io.mesh.manifest;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.time.Duration;

/**
 * A container's {@code ready}: when a created or recreated container counts (SPEC.md, "Health and readiness"). Not
 * part of the spec hash: it says how the apply judges the container, not how Docker runs it, so a change of it
 * recreates nothing.
 *
 * @param minHealthy how long the container must be healthy (with a healthcheck) or running without a restart
 *                   (without one), such as {@code 10s}; {@code null} for {@link #DEFAULT_MIN_HEALTHY}; {@code 0s}
 *                   counts it as soon as it runs (or is healthy)
 * @param deadline   not ready this long after its start: the recreate is reverted; {@code null} for
 *                   {@link #DEFAULT_DEADLINE}
 */
@JsonPropertyOrder(alphabetic = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ReadySpec(@JsonProperty("min-healthy") String minHealthy, String deadline) {
    /** SPEC's default {@code min-healthy}. */
    public static final String DEFAULT_MIN_HEALTHY = "2s";
    /** SPEC's default {@code deadline}. */
    public static final String DEFAULT_DEADLINE = "5m";
    /** The readiness of a container without {@code ready}. */
    public static final ReadySpec DEFAULT = new ReadySpec(null, null);

    /** @return {@code min-healthy}, or its default */
    public Duration minHealthyTime() { return Durations.parseZeroAllowed(minHealthy == null ? DEFAULT_MIN_HEALTHY : minHealthy); }

    /** @return {@code deadline}, or its default */
    public Duration deadlineTime() { return Durations.parse(deadline == null ? DEFAULT_DEADLINE : deadline); }
}
