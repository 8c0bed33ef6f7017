package io.mesh.wire;

import io.mesh.manifest.Printable;

import java.util.ArrayList;
import java.util.List;

/**
 * mesh's version, as every process reports it ({@code /mesh/agents/<host>}, a backup's {@code mesh}), and the order of
 * two versions: dot-separated numbers, compared number by number, a missing number being 0; anything after the numbers
 * (such as {@code -SNAPSHOT}) is not compared.
 */
public final class MeshVersion {
    /** This build's version: the Maven project's, without {@code -SNAPSHOT} ({@code MeshVersionTest} holds them equal). */
    public static final String CURRENT = "0.2.0";

    private MeshVersion() {}

    /**
     * @param a a version such as {@code 0.1.0}
     * @param b another
     * @return negative, zero or positive as {@code a} is older than, the same as, or newer than {@code b}
     * @throws IllegalArgumentException when either does not begin with a number
     */
    public static int compare(String a, String b) {
        List<Long> x = numbers(a), y = numbers(b);
        for (int i = 0; i < Math.max(x.size(), y.size()); i++) {
            long p = i < x.size() ? x.get(i) : 0, q = i < y.size() ? y.get(i) : 0;
            if (p != q) return Long.compare(p, q);
        }
        return 0;
    }

    /** @return the leading dot-separated numbers of {@code v} */
    private static List<Long> numbers(String v) {
        List<Long> out = new ArrayList<>();
        if (v != null) {
            for (String part : v.split("\\.", -1)) {
                int end = 0;
                while (end < part.length() && end < 9 && Character.isDigit(part.charAt(end))) end++;
                if (end == 0) break;
                out.add(Long.parseLong(part.substring(0, end)));
                if (end < part.length()) break;
            }
        }
        if (out.isEmpty()) throw new IllegalArgumentException("'" + Printable.cut(String.valueOf(v)) + "' is not a version such as " + CURRENT);
        return out;
    }

    /**
     * @param agent an agent's version, as {@code /mesh/agents/<host>} publishes it
     * @param used  the fields a push uses ({@link io.mesh.manifest.ManifestFields#used})
     * @return those the agent's version does not know, with the version each came in. A node with no version, or one
     *         that is no version, is taken as the first release's ({@link io.mesh.manifest.ManifestFields#FIRST}): every
     *         agent has published its version since then, so such a node is no newer agent's
     */
    public static java.util.Map<String, String> unknownTo(String agent, java.util.Set<String> used) {
        String version = agent;
        try {
            compare(version, io.mesh.manifest.ManifestFields.FIRST);
        } catch (IllegalArgumentException e) {
            version = io.mesh.manifest.ManifestFields.FIRST;
        }
        java.util.Map<String, String> out = new java.util.TreeMap<>();
        for (String f : used) {
            String since = io.mesh.manifest.ManifestFields.since(f);
            if (compare(version, since) < 0) out.put(f, since);
        }
        return out;
    }
}
