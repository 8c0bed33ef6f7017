package io.mesh.client.compose;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one import knows and collects: the compose file's directory (relative host paths resolve against it), the
 * project's declared volumes (with their Docker names) and networks (with those services join), the refusals and notes, and where each manifest
 * field came from in the compose file (so that an error {@code ManifestParser} finds in the manifest is reported at the
 * compose path the operator edits). Not thread-safe; one per import.
 */
final class ImportContext {
    final Path directory;
    /** Top-level volumes by key: their Docker names. */
    final Map<String, String> volumes = new LinkedHashMap<>();
    /** Top-level networks by key, compose's implicit {@code default} with them ({@link ComposeNetworks#declare}). */
    final Map<String, ProjectNetwork> networks = new LinkedHashMap<>();
    /** Keys of the networks some service joins: only these become module networks. */
    final Set<String> networksJoined = new LinkedHashSet<>();
    /** Compose service names by the manifest's container names. */
    final Map<String, String> services = new LinkedHashMap<>();
    final List<ComposeProblem> refusals = new ArrayList<>();
    private final Set<ComposeProblem> notes = new LinkedHashSet<>();
    /** Manifest field paths to the compose paths they came from; a longer path wins. */
    private final Map<String, String> origins = new LinkedHashMap<>();

    ImportContext(Path directory) { this.directory = directory; }

    void refuse(String path, String message) { refusals.add(new ComposeProblem(path, message)); }

    void note(String path, String message) { notes.add(new ComposeProblem(path, message)); }

    List<ComposeProblem> notes() { return List.copyOf(notes); }

    /** Records that manifest field {@code manifestPath} came from compose field {@code composePath}. */
    void origin(String manifestPath, String composePath) { origins.put(manifestPath, composePath); }

    /**
     * @param manifestPath a field path in the manifest, such as {@code containers.web.memory} or
     *                     {@code containers.web.volumes[2]}
     * @return the compose path it came from, such as {@code services.web.mem_limit}, with the rest of the path kept
     */
    String composePath(String manifestPath) {
        String best = null;
        for (String k : origins.keySet()) {
            boolean under = manifestPath.equals(k) || manifestPath.startsWith(k + ".") || manifestPath.startsWith(k + "[");
            if (under && (best == null || k.length() > best.length())) best = k;
        }
        return best == null ? manifestPath : origins.get(best) + manifestPath.substring(best.length());
    }
}
