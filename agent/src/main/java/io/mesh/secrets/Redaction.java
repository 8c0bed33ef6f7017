package io.mesh.secrets;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Takes a container's secret values out of text mesh copies from the container into a report: its last log lines
 * and its healthcheck's output (decision 18). A container may print its own secret; the report must not carry it.
 * Each value (an env secret's, and a text file secret's whole text and each of its lines) is replaced by
 * {@code <secret NAME>}; values shorter than {@link #MIN_LENGTH} characters are left, since replacing them would
 * garble every line. {@link #toString()} shows names only.
 */
public final class Redaction {
    /** Shorter values are not replaced. */
    public static final int MIN_LENGTH = 4;
    /** Nothing to take out. */
    public static final Redaction NONE = new Redaction(Map.of());
    /** By value, the secret's name; longest first, so a line of a value is replaced after the value itself. */
    private final Map<String, String> names;

    private Redaction(Map<String, String> names) {
        this.names = names;
    }

    /**
     * @param values by secret name, its text (an env value, or a text file's content)
     * @return the redaction of those values and of each of their lines
     */
    static Redaction of(Map<String, String> values) {
        List<Map.Entry<String, String>> all = new ArrayList<>();
        values.forEach((name, text) -> {
            all.add(Map.entry(text.strip(), name));
            text.lines().map(String::strip).forEach(line -> all.add(Map.entry(line, name)));
        });
        all.sort(Comparator.comparingInt((Map.Entry<String, String> e) -> e.getKey().length()).reversed());
        Map<String, String> names = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : all) {
            if (e.getKey().length() >= MIN_LENGTH) names.putIfAbsent(e.getKey(), e.getValue());
        }
        return names.isEmpty() ? NONE : new Redaction(names);
    }

    /**
     * @param line a line from the container (a log line, a healthcheck's output)
     * @return it, every secret value in it replaced by {@code <secret NAME>}
     */
    public String apply(String line) {
        if (line == null) return null;
        String out = line;
        for (Map.Entry<String, String> e : names.entrySet()) {
            if (out.contains(e.getKey())) out = out.replace(e.getKey(), "<secret " + e.getValue() + ">");
        }
        return out;
    }

    /** @return each line through {@link #apply(String)} */
    public List<String> apply(List<String> lines) {
        if (names.isEmpty()) return lines;
        return lines.stream().map(this::apply).toList();
    }

    /**
     * @param other another container's redaction
     * @return one that takes out the values of both, longest first
     */
    public Redaction plus(Redaction other) {
        if (other.names.isEmpty()) return this;
        if (names.isEmpty()) return other;
        List<Map.Entry<String, String>> all = new ArrayList<>(names.entrySet());
        all.addAll(other.names.entrySet());
        all.sort(Comparator.comparingInt((Map.Entry<String, String> e) -> e.getKey().length()).reversed());
        Map<String, String> merged = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : all) merged.putIfAbsent(e.getKey(), e.getValue());
        return new Redaction(merged);
    }

    /** @return the names of the secrets taken out, never a value */
    @Override
    public String toString() {
        return "Redaction" + new java.util.TreeSet<>(names.values());
    }
}
