package io.mesh.manifest;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A module's {@code rollout} (SPEC.md, "Rollouts"): how a change of the module moves across the fleet. Without it,
 * every host applies at once. The rules: docs/decisions/0013-rollouts.md.
 *
 * @param maxParallel hosts applying the change at once, fleet-wide: a number such as {@code 2} or a percentage of
 *                    the targeted hosts such as {@code 25%}; {@code null} for every host at once
 * @param canary      hosts that go first (the first ones of the targeted hosts, by name); the rest wait until every
 *                    canary is ready; {@code null} for none
 * @param onFailure   what a host's failure does to the rollout; {@code null} for {@link OnFailure#PAUSE}
 * @param promote     whether the hosts after the canaries wait for an operator's {@code mesh rollout promote};
 *                    {@code null} for {@link Promote#AUTO}
 * @param maxFailed   how many hosts may fail before {@code on-failure} applies: a number such as {@code 1} or a
 *                    percentage of the targeted hosts such as {@code 10%}; {@code null} for 0
 * @param soak        how long the hosts last done stay ready before the next hosts begin, such as {@code 5m};
 *                    {@code null} for no wait
 * @param gate        a Prometheus query asked before each host begins ({@link GateSpec}, {@code on-blocked: wait}
 *                    only); {@code null} for none
 * @param silence     Alertmanager silences of the containers each host's apply stops and starts again (a recreate), made
 *                    before its stop and expired once the apply ends ({@link SilenceSpec}); {@code null} for none
 */
@JsonPropertyOrder(alphabetic = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RolloutSpec(@JsonProperty("max-parallel") String maxParallel, Integer canary,
                          @JsonProperty("on-failure") OnFailure onFailure, Promote promote,
                          @JsonProperty("max-failed") String maxFailed, String soak, GateSpec gate,
                          @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL) SilenceSpec silence) {
    /** {@code max-parallel}'s two forms: {@code 3} or {@code 25%}. */
    public static final Pattern MAX_PARALLEL = Pattern.compile("([1-9]\\d{0,5})(%?)");
    /** {@code max-failed}'s two forms: {@code 0}, {@code 3} or {@code 10%}. */
    public static final Pattern MAX_FAILED = Pattern.compile("(0|[1-9]\\d{0,5})(%?)");

    /** A rollout without {@code promote} or {@code max-failed}. */
    public RolloutSpec(String maxParallel, Integer canary, OnFailure onFailure) {
        this(maxParallel, canary, onFailure, null, null, null, null, null);
    }

    /** A rollout without {@code silence}. */
    public RolloutSpec(String maxParallel, Integer canary, OnFailure onFailure, Promote promote, String maxFailed, String soak, GateSpec gate) {
        this(maxParallel, canary, onFailure, promote, maxFailed, soak, gate, null);
    }

    /** A rollout without {@code soak}. */
    public RolloutSpec(String maxParallel, Integer canary, OnFailure onFailure, Promote promote, String maxFailed) {
        this(maxParallel, canary, onFailure, promote, maxFailed, null, null);
    }

    /** A rollout without a gate. */
    public RolloutSpec(String maxParallel, Integer canary, OnFailure onFailure, Promote promote, String maxFailed, String soak) {
        this(maxParallel, canary, onFailure, promote, maxFailed, soak, null);
    }

    /** Who lets the hosts after the canaries go. */
    public enum Promote implements WireName {
        /** They go once every canary is ready. */
        AUTO,
        /** They wait, once the canaries are ready, for an operator's {@code mesh rollout promote MODULE}. */
        MANUAL;

        @Override
        public String toString() { return wire(); }
    }

    /** @return {@code promote}, or its default {@link Promote#AUTO} */
    public Promote promoteOrDefault() { return promote == null ? Promote.AUTO : promote; }

    /**
     * @param hosts how many hosts the push targets
     * @return how many may fail before {@code on-failure} applies: the number, or the percentage of {@code hosts}
     *         rounded down; 0 without {@code max-failed}
     * @throws IllegalArgumentException when {@code max-failed} has neither form (the parser refuses it first)
     */
    public int resolveMaxFailed(int hosts) {
        if (maxFailed == null) return 0;
        Matcher m = MAX_FAILED.matcher(maxFailed);
        if (!m.matches()) throw new IllegalArgumentException("max-failed '" + maxFailed + "' is neither a number nor a percentage");
        int n = Integer.parseInt(m.group(1));
        if (m.group(2).isEmpty()) return n;
        if (n > 100) throw new IllegalArgumentException("max-failed '" + maxFailed + "' is over 100%");
        return (int) Math.floor(hosts * n / 100.0);
    }

    /** What a host's failure does to its rollout. */
    public enum OnFailure implements WireName {
        /** The rollout stops; hosts that have not started keep the previous revision until {@code mesh rollout resume}. */
        PAUSE,
        /** Every host goes back to the previous revision. */
        REVERT,
        /** The failed host keeps the previous revision; the others go on. */
        CONTINUE;

        @Override
        public String toString() { return wire(); }
    }

    /** @return {@code on-failure}, or its default {@link OnFailure#PAUSE} */
    public OnFailure onFailureOrDefault() { return onFailure == null ? OnFailure.PAUSE : onFailure; }

    /** @return {@code canary}, or 0 */
    public int canaryOrNone() { return canary == null ? 0 : canary; }

    /**
     * @param hosts how many hosts the push targets
     * @return how many may apply at once: the number, or the percentage of {@code hosts} rounded up (at least 1);
     *         {@code null} for every host at once
     * @throws IllegalArgumentException when {@code max-parallel} has neither form (the parser refuses it first)
     */
    public Integer resolveMaxParallel(int hosts) {
        if (maxParallel == null) return null;
        Matcher m = MAX_PARALLEL.matcher(maxParallel);
        if (!m.matches()) throw new IllegalArgumentException("max-parallel '" + maxParallel + "' is neither a number nor a percentage");
        int n = Integer.parseInt(m.group(1));
        if (m.group(2).isEmpty()) return n;
        if (n > 100) throw new IllegalArgumentException("max-parallel '" + maxParallel + "' is over 100%");
        return Math.max(1, (int) Math.ceil(hosts * n / 100.0));
    }
}
