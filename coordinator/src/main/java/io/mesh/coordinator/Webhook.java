package io.mesh.coordinator;

import io.mesh.wire.EventType;
import io.mesh.wire.Json;
import io.mesh.wire.MeshEvent;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;

/**
 * One webhook of {@code --notify-config} (SPEC.md, "The rest of the operator's stack").
 *
 * @param name   its name, {@code [a-z0-9][a-z0-9-]{0,39}}: its delivery state is {@code /mesh/notify/<name>}
 * @param url    where events are POSTed ({@code http} or {@code https})
 * @param secret the secret of {@value #SIGNATURE}, or {@code null} to send unsigned
 * @param events the event types it wants
 * @param format how its body is shaped
 */
public record Webhook(String name, URI url, WebhookSecret secret, Set<EventType> events, NotifyFormat format) {
    /** The signature header: {@code sha256=<hex HMAC-SHA256 of the body>}, as {@link WebhookSecret#sign} makes it. */
    public static final String SIGNATURE = "X-Mesh-Signature";

    /** @return true when this webhook wants events of that type */
    public boolean wants(EventType type) { return events.contains(type); }

    /**
     * @param event an event with its id
     * @return the body to POST: the event as JSON, or {@code {"text": ...}} for {@link NotifyFormat#SLACK}
     */
    public byte[] body(MeshEvent event) {
        if (format == NotifyFormat.SLACK) return Json.text(Map.of("text", event.text())).getBytes(StandardCharsets.UTF_8);
        return Json.bytes(event);
    }

    /** @return the {@value #SIGNATURE} value of that body; {@code null} without a secret */
    public String signature(byte[] body) { return secret == null ? null : secret.sign(body); }
}
