package io.mesh.coordinator;

import io.mesh.manifest.WireName;

/** How a webhook's body is shaped ({@code format} of a notify config; SPEC.md, "The rest of the operator's stack"). */
public enum NotifyFormat implements WireName {
    /** The event itself, as JSON ({@code io.mesh.wire.MeshEvent} with its id). */
    JSON,
    /** {@code {"text": "..."}}: a Slack (or Mattermost) incoming webhook's message, the event in one line. */
    SLACK;

    @Override
    public String toString() { return wire(); }
}
