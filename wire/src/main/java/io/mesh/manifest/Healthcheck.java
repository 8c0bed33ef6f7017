package io.mesh.manifest;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.List;

/**
 * A container's {@code healthcheck}: Docker's HEALTHCHECK, with compose's names (SPEC.md, "Health and readiness").
 * Part of the spec hash: a change recreates the container.
 *
 * @param test        {@code ["CMD", ...]}, {@code ["CMD-SHELL", "..."]} or {@code ["NONE"]} (turns the image's own
 *                    off)
 * @param interval    time between checks, such as {@code 5s}; {@code null} for Docker's default (30s)
 * @param timeout     how long one check may take; {@code null} for Docker's default (30s)
 * @param retries     failures in a row that make the container unhealthy; {@code null} for Docker's default (3)
 * @param startPeriod time after start during which failures do not count; {@code null} for none
 */
@JsonPropertyOrder(alphabetic = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Healthcheck(List<String> test, String interval, String timeout, Integer retries,
                          @JsonProperty("start-period") String startPeriod) {
    public Healthcheck {
        test = test == null ? List.of() : List.copyOf(test);
    }

    /** @return true for {@code ["NONE"]}: the container has no healthcheck, not even its image's */
    public boolean disabled() { return test.size() == 1 && test.get(0).equals("NONE"); }
}
