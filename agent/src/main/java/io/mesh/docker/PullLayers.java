package io.mesh.docker;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The layers of one image pull as dockerd's progress items name them (docker-java's {@code PullResponseItem}: an
 * {@code id} and a {@code status}), counted for the apply's progress (docs/decisions/0032-apply-progress.md): each id
 * dockerd reports a layer status for is a layer; {@code Pull complete} and {@code Already exists} end it. The first
 * item ({@code Pulling from REPO}, its id the tag) and the summary lines are no layer.
 */
public final class PullLayers {
    /** By layer id, true once it is done. */
    private final Map<String, Boolean> layers = new LinkedHashMap<>();

    /**
     * @param id     the item's id (a layer's short digest), or {@code null}
     * @param status the item's status, such as {@code Downloading}
     * @return true when the counts changed (a new layer, or one done)
     */
    public synchronized boolean seen(String id, String status) {
        if (id == null || id.isBlank() || status == null || status.startsWith("Pulling from") || status.startsWith("Digest:")
                || status.startsWith("Status:")) {
            return false;
        }
        boolean done = status.equals("Pull complete") || status.equals("Already exists");
        Boolean was = layers.get(id);
        if (was != null && (was || !done)) return false;
        layers.put(id, done);
        return true;
    }

    /** @return the layers seen so far */
    public synchronized int total() { return layers.size(); }

    /** @return the layers pulled or already here */
    public synchronized int done() { return (int) layers.values().stream().filter(Boolean::booleanValue).count(); }
}
