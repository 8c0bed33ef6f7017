package io.mesh.manifest;

import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.Map;
import java.util.TreeMap;

/**
 * A schedule's {@code silence} (SPEC.md, "The rest of the operator's stack"): an Alertmanager silence of each held
 * container, made before the window's first stop and expired once its containers are ready again. The rule:
 * docs/decisions/0036-window-silences.md.
 *
 * @param alertmanager the Alertmanager server, such as {@code http://127.0.0.1:9093}
 * @param matchers     label equalities every silence matches, such as {@code job: registry}; mesh adds
 *                     {@code mesh_host} and {@code mesh_container}
 */
@JsonPropertyOrder({"alertmanager", "matchers"})
public record SilenceSpec(String alertmanager, Map<String, String> matchers) {
    public SilenceSpec {
        matchers = matchers == null ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(matchers));
    }
}
