package io.mesh.docker;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What a container's secrets give Docker at its create (decision 18): environment variables, whose values reach the
 * container's config and nothing else of mesh's, and host files mounted read-only. {@link #toString()} shows names
 * and paths only, so that no log line or error message carries a value.
 *
 * @param env   by variable name, the values (never logged, never labelled)
 * @param files files to mount read-only
 */
public record SecretDelivery(Map<String, String> env, List<FileMount> files) {
    /** Nothing to deliver. */
    public static final SecretDelivery NONE = new SecretDelivery(Map.of(), List.of());

    /** Copies, env sorted by name. */
    public SecretDelivery {
        env = env == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(env));
        files = files == null ? List.of() : List.copyOf(files);
    }

    /**
     * @param source the host file (resolved, inside the secrets dir)
     * @param target the absolute path in the container
     */
    public record FileMount(Path source, String target) {}

    /** @return true when there is nothing to deliver */
    public boolean isEmpty() {
        return env.isEmpty() && files.isEmpty();
    }

    /** @return names and paths, never values */
    @Override
    public String toString() {
        return "SecretDelivery[env=" + env.keySet() + ", files=" + files + "]";
    }
}
