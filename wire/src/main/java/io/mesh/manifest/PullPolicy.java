package io.mesh.manifest;

/**
 * A container's {@code pull}: when the agent pulls its image (SPEC.md, "Images"; docs/decisions/0020-images-and-registries.md).
 * Serialised as SPEC's names ({@link WireName}). No constant for names this version does not know: the manifest parser
 * refuses any other value before it is written, so none reaches an agent.
 */
public enum PullPolicy implements WireName {
    /** Pull only when the image is not on the host (the default, Docker's own behaviour). */
    MISSING,
    /**
     * Pull at every apply that checks the container (a push, a drift repair; not the reconcile that finds nothing
     * changed), before anything is created or stopped; a container whose image the pull changed is recreated.
     */
    ALWAYS,
    /** Never pull: a missing image fails the container, naming the image and how to load it. */
    NEVER;

    /** The policy of a container without {@code pull}. */
    public static final PullPolicy DEFAULT = MISSING;

    @Override
    public String toString() { return wire(); }
}
