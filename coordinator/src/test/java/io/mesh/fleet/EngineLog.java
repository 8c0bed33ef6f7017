package io.mesh.fleet;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What a fleet engine's own log ({@code /run/mesh-fleet/logs/fleet-N-dockerd.log}, fleet.sh; appended across runs)
 * says that its events do not: evidence from dockerd, not from mesh.
 */
final class EngineLog {
    /**
     * dockerd 20.10 refusing a start because containerd keeps a task (or container) of that same id (moby/moby#36145),
     * in either of its words ("task ID: already exists", "id already in use"): the words {@code StaleTaskException}
     * takes as a refusal for good.
     */
    private static final Pattern REFUSED = Pattern.compile("^time=\"([^\"]+)\".*Handler for POST /[^ ]*containers/([0-9a-f]{64})/start "
            + "returned error: (?:(?:task|container) \\\\?\"?\\2\\\\?\"?: already exists|id already in use)");

    /**
     * dockerd 20.10 failing a removal because the container's root filesystem is still mounted somewhere ("device or
     * resource busy"): the container stays "Removal In Progress" and no client can remove it or free its name (failure
     * model rows 69 and 70).
     */
    private static final Pattern UNREMOVABLE = Pattern.compile("Handler for DELETE /[^ ]*containers/([0-9a-f]{64})[^ ]* returned error: "
            + ".*device or resource busy");

    /**
     * One start dockerd refused for good.
     *
     * @param id    the container's id
     * @param nanos when, epoch nanoseconds (dockerd's clock, the same as its events')
     */
    record Refusal(String id, long nanos) {}

    private EngineLog() {}

    /**
     * @param hosts the fleet's hosts, such as {@code fleet-1}
     * @return per host, the starts its dockerd refused for good, in the log's order
     */
    static Map<String, List<Refusal>> refusedStarts(Collection<String> hosts) {
        Map<String, List<Refusal>> out = new LinkedHashMap<>();
        for (String h : hosts) out.put(h, refusedStarts(Fleet.RUN.resolve("logs").resolve(h + "-dockerd.log")));
        return out;
    }

    /**
     * @param host a fleet host, such as {@code fleet-1}
     * @return the containers whose removal its dockerd failed with "device or resource busy" (its own log)
     */
    static Set<String> unremovable(String host) {
        return unremovable(Fleet.RUN.resolve("logs").resolve(host + "-dockerd.log"));
    }

    /** @return the containers whose removal the engine's log shows failing with "device or resource busy" */
    static Set<String> unremovable(Path log) {
        Set<String> out = new LinkedHashSet<>();
        matches(log, UNREMOVABLE, (m, l) -> out.add(m.group(1)));
        return out;
    }

    /** @return the starts the engine's log shows refused for good; none when there is no log */
    static List<Refusal> refusedStarts(Path log) {
        List<Refusal> out = new ArrayList<>();
        matches(log, REFUSED, (m, l) -> {
            try {
                out.add(new Refusal(m.group(2), EngineEvents.nanos(Instant.parse(m.group(1)))));
            } catch (DateTimeParseException e) {
                throw new IllegalStateException("dockerd's log " + log + " has a time mesh's checker cannot read: " + l, e);
            }
        });
        return out;
    }

    /** Gives each line of the engine's log that {@code pattern} finds in to {@code each}; nothing when there is no log. */
    private static void matches(Path log, Pattern pattern, BiConsumer<Matcher, String> each) {
        if (!Files.exists(log)) return;
        // Latin-1: a byte that is not UTF-8 in a container's output must not end the check; the patterns are ASCII
        try (Stream<String> lines = Files.lines(log, StandardCharsets.ISO_8859_1)) {
            lines.forEach(l -> {
                Matcher m = pattern.matcher(l);
                if (m.find()) each.accept(m, l);
            });
        } catch (IOException | UncheckedIOException e) {
            throw new IllegalStateException("cannot read the engine's log " + log + ": " + e.getMessage(), e);
        }
    }
}
