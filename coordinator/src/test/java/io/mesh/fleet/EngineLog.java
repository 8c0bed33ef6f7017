package io.mesh.fleet;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What a fleet engine's own log ({@code /run/mesh-fleet/logs/fleet-N-dockerd.log}, fleet.sh) says that its events do
 * not: evidence from dockerd, not from mesh.
 */
final class EngineLog {
    /** dockerd 20.10 refusing a start because containerd keeps a task of the container (moby/moby#36145). */
    private static final Pattern REFUSED = Pattern.compile(
            "Handler for POST /[^ ]*containers/([0-9a-f]{64})/start returned error: (?:task|container) [0-9a-f]{64}: already exists");

    private EngineLog() {}

    /**
     * @param hosts the fleet's hosts, such as {@code fleet-1}
     * @return per host, the ids of the containers whose start its dockerd refused for good at least once
     */
    static Map<String, Set<String>> refusedStarts(Collection<String> hosts) {
        Map<String, Set<String>> out = new LinkedHashMap<>();
        for (String h : hosts) out.put(h, refusedStarts(Fleet.RUN.resolve("logs").resolve(h + "-dockerd.log")));
        return out;
    }

    static Set<String> refusedStarts(Path log) {
        Set<String> ids = new LinkedHashSet<>();
        if (!Files.exists(log)) return ids;
        try (Stream<String> lines = Files.lines(log, StandardCharsets.UTF_8)) {
            lines.forEach(l -> {
                Matcher m = REFUSED.matcher(l);
                if (m.find()) ids.add(m.group(1));
            });
        } catch (IOException | UncheckedIOException e) {
            throw new IllegalStateException("cannot read the engine's log " + log + ": " + e.getMessage(), e);
        }
        return ids;
    }
}
