package io.mesh.docker;

/**
 * The Docker labels mesh puts on containers (SPEC.md, "Apply").
 *
 * <p>Managed containers carry {@link #MODULE}, {@link #CONTAINER}, {@link #SPEC_HASH}, {@link #REVISION} (and
 * {@link #SPEC}, the spec itself, so that an apply can say what changed). Step containers carry {@link #WINDOW}
 * and {@link #MODULE}, and are never adopted, started or removed by an apply.
 */
public final class Labels {
    /** mesh's namespace: only mesh sets labels starting so; an image carrying one is refused ({@link ImageInfo#meshLabel}). */
    public static final String PREFIX = "mesh.";
    public static final String MODULE = "mesh.module";
    public static final String CONTAINER = "mesh.container";
    public static final String SPEC_HASH = "mesh.spec-hash";
    public static final String REVISION = "mesh.revision";
    /** Canonical JSON of the container's spec when it was created. */
    public static final String SPEC = "mesh.spec";
    /**
     * The container's {@code ready} (JSON) when its spec has one: not part of the spec (and its hash), so that a
     * window, which never reads ZooKeeper while it gives containers back, judges their readiness as the apply did.
     */
    public static final String READY = "mesh.ready";
    /**
     * The container's {@code hooks} (JSON) when its spec has some, as it was created: not part of the spec (a hook's
     * change recreates nothing), read where the desired spec cannot be (a removal's pre-stop, a recovery's post-start
     * without ZooKeeper; docs/decisions/0038-container-hooks.md).
     */
    public static final String HOOKS = "mesh.hooks";
    public static final String WINDOW = "mesh.window";
    /** On a step container: its window's journal entry (JSON), so that Docker itself tells any mesh process on the
     * host which containers the window holds, whose process runs it, and what to put back. */
    public static final String JOURNAL = "mesh.journal";
    /** On a network a module owns: its key in the module's {@code networks} (decision 31). */
    public static final String NETWORK = "mesh.network";
    /** The schedule a step container runs for. */
    public static final String SCHEDULE = "mesh.schedule";

    private Labels() {}
}
