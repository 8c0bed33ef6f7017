package io.mesh.docker;

/**
 * A container as Docker reports it, reduced to what an apply needs.
 *
 * @param id         Docker container id
 * @param dockerName Docker name without the leading slash
 * @param name       value of the {@code mesh.container} label (the name in the spec), or {@code null}
 * @param specHash   value of the {@code mesh.spec-hash} label, or {@code null}
 * @param specJson   value of the {@code mesh.spec} label, or {@code null}
 * @param revision   value of the {@code mesh.revision} label, or {@code null}
 * @param running    true when Docker's state is {@code running}
 * @param state      Docker's state, with the exit code when it has one: {@code running}, {@code exited (137)},
 *                   {@code created}, {@code restarting} ...
 * @param health     {@code healthy}, {@code unhealthy}, {@code starting}, or {@code none} without a healthcheck
 *                   (from Docker's list status, such as {@code Up 5 minutes (healthy)}); {@code null} when not known
 * @param imageId    the image it runs ({@code sha256:...}), or {@code null}
 */
public record ObservedContainer(String id, String dockerName, String name, String specHash, String specJson,
                                String revision, boolean running, String state, String health, String imageId) {
    /** A container whose health and image are not known. */
    public ObservedContainer(String id, String dockerName, String name, String specHash, String specJson, String revision,
                             boolean running, String state) {
        this(id, dockerName, name, specHash, specJson, revision, running, state, null, null);
    }

    /**
     * @return true when Docker marked the container for removal: {@code dead} (a removal that failed, or that an
     *         engine restart cut) or {@code removing} (how Docker's list shows a failed removal). Docker refuses to
     *         update, start or rename-and-start such a container; it can only be removed (failure model row 29).
     */
    public boolean markedForRemoval() {
        return state != null && (state.startsWith("dead") || state.startsWith("removing"));
    }
}
