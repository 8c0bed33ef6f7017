package io.mesh.manifest;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * A schedule's {@code gate} (SPEC.md, "The rest of the operator's stack"): a Prometheus query asked before a window
 * takes its slot; any series in its answer blocks the window. The rule: docs/decisions/0035-window-gates.md.
 *
 * @param prometheus the server and the query
 * @param onBlocked  what a blocked window does; {@code null} for {@link OnBlocked#WAIT}
 */
@JsonPropertyOrder({"prometheus", "on-blocked"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record GateSpec(Prometheus prometheus, @JsonProperty("on-blocked") OnBlocked onBlocked) {
    /**
     * @param url   the Prometheus server, such as {@code http://127.0.0.1:9090}
     * @param query a PromQL instant query, such as {@code ALERTS{alertstate="firing",severity="critical"}}
     */
    @JsonPropertyOrder({"url", "query"})
    public record Prometheus(String url, String query) {}

    /** What a window whose gate is blocked does. */
    public enum OnBlocked implements WireName {
        /** It asks again until the gate opens, or until its start-by passes, when it is skipped. */
        WAIT,
        /** It is skipped at once. */
        SKIP;

        @Override
        public String toString() { return wire(); }
    }

    /** @return {@code on-blocked}, or its default {@link OnBlocked#WAIT} */
    public OnBlocked onBlockedOrDefault() { return onBlocked == null ? OnBlocked.WAIT : onBlocked; }
}
