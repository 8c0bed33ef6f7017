package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.manifest.Printable;
import io.mesh.wire.Json;
import io.mesh.wire.MeshVersion;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * A backup of the tree the coordinators write and the operators own, as {@code mesh backup} writes it and
 * {@code mesh restore} reads it (SPEC.md "Running it for real"; the format, what it holds and the checks are
 * docs/decisions/0039-backups-and-an-empty-ensemble.md items 1 to 3).
 *
 * @param format  always {@link #FORMAT}
 * @param version the document's format version ({@link #VERSION})
 * @param mesh    the version of the coordinator that took it ({@link MeshVersion})
 * @param root    the {@code --zk-root} it was taken under, for the reader (a restore writes under its own)
 * @param takenAt when it was taken
 * @param nodes   the nodes, parents before children
 * @param sha256  {@link #sum} of the nodes, hex
 */
public record BackupDocument(String format, int version, String mesh, String root, Instant takenAt, List<Node> nodes,
                             String sha256) {
    /** The {@code format} of every backup. */
    public static final String FORMAT = "mesh-backup";
    /** The format version this coordinator writes and the newest it reads. */
    public static final int VERSION = 1;
    /** The subtrees a backup holds, relative to the root (decision 39 item 1). */
    public static final List<String> SUBTREES = List.of("/pushes", "/history", "/rollouts", "/freezes", "/drains", "/held", "/desired");

    /**
     * One node.
     *
     * @param path its path relative to the root, such as {@code /desired/store}
     * @param data its data, the node's UTF-8 bytes as a string
     */
    public record Node(String path, String data) {}

    /** @return a document of these nodes, summed */
    public static BackupDocument of(String root, Instant takenAt, List<Node> nodes) {
        return new BackupDocument(FORMAT, VERSION, MeshVersion.CURRENT, root, takenAt, List.copyOf(nodes), sum(nodes));
    }

    /**
     * @return the hex SHA-256 of each node's path, a newline, its data and a newline, in order
     */
    public static String sum(List<Node> nodes) {
        MessageDigest d;
        try {
            d = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
        for (Node n : nodes) {
            d.update(String.valueOf(n.path()).getBytes(StandardCharsets.UTF_8));
            d.update((byte) '\n');
            d.update(String.valueOf(n.data()).getBytes(StandardCharsets.UTF_8));
            d.update((byte) '\n');
        }
        return HexFormat.of().formatHex(d.digest());
    }

    /**
     * Reads and checks a backup: its shape, its format version, the mesh that wrote it, its sum, and each node's path.
     *
     * @param body the file's bytes
     * @return the document
     * @throws Refusal (400) naming what is wrong and the fix; nothing is written before this returns
     */
    public static BackupDocument parse(byte[] body) {
        JsonNode tree;
        try {
            tree = Json.MAPPER.readTree(body);
        } catch (IOException e) {
            String m = e.getMessage() == null ? "" : e.getMessage().lines().findFirst().orElse("");
            throw Refusal.badRequest("backup", "the backup is not whole JSON (" + Printable.cut(m) + "): a file cut short or "
                    + "not a backup; restore the file as mesh backup wrote it, or take the backup again");
        }
        if (tree == null || !tree.isObject() || !FORMAT.equals(tree.path("format").asText(null))) {
            throw Refusal.badRequest("format", "this is not a mesh backup (its format is not \"" + FORMAT + "\"): give a file "
                    + "that mesh backup wrote");
        }
        int version = tree.path("version").asInt(-1);
        String mesh = tree.path("mesh").asText(null);
        if (version < 1) throw Refusal.badRequest("version", "the backup has no format version: give a file that mesh backup wrote");
        if (version > VERSION) {
            throw Refusal.badRequest("version", "the backup's format is version " + version + " (written by mesh " + mesh
                    + "); this coordinator (mesh " + MeshVersion.CURRENT + ") reads up to version " + VERSION
                    + ": restore it with a coordinator of mesh " + mesh + " or newer");
        }
        try {
            if (mesh == null || MeshVersion.compare(mesh, MeshVersion.CURRENT) > 0) {
                throw Refusal.badRequest("mesh", "the backup was written by mesh " + mesh + ", newer than this coordinator (mesh "
                        + MeshVersion.CURRENT + "): its nodes may hold fields this version does not know; restore it with a "
                        + "coordinator of mesh " + mesh + " or newer");
            }
        } catch (IllegalArgumentException e) {
            throw Refusal.badRequest("mesh", "the backup's mesh version: " + e.getMessage());
        }
        BackupDocument doc;
        try {
            doc = Json.MAPPER.treeToValue(tree, BackupDocument.class);
        } catch (IOException | RuntimeException e) {
            throw Refusal.badRequest("nodes", "the backup's nodes are not [{path, data}]: " + Printable.cut(String.valueOf(e.getMessage()))
                    + "; restore the file as mesh backup wrote it");
        }
        if (doc.nodes() == null || doc.sha256() == null) {
            throw Refusal.badRequest("nodes", "the backup has no nodes or no sha256: restore the file as mesh backup wrote it");
        }
        if (!sum(doc.nodes()).equals(doc.sha256())) {
            throw Refusal.badRequest("sha256", "the backup's nodes do not match its sha256: the file was edited or damaged after "
                    + "mesh backup wrote it; restore an unedited copy (or take the backup again)");
        }
        Set<String> seen = new java.util.HashSet<>(SUBTREES);
        List<String> problems = new ArrayList<>();
        for (Node n : doc.nodes()) {
            String why = pathProblem(n.path());
            if (why == null && n.data() == null) why = "has no data";
            if (why == null && n.data().getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_NODE_BYTES) {
                why = "holds more than " + MAX_NODE_BYTES + " bytes (ZooKeeper's limit of a node)";
            }
            if (why == null && !SUBTREES.contains(n.path()) && !seen.contains(n.path().substring(0, n.path().lastIndexOf('/')))) {
                why = "comes before its parent (a backup lists parents first)";
            }
            if (why == null && sequence(n.path()) > MAX_SEQUENCE) why = "has a sequence number above " + MAX_SEQUENCE;
            if (why == null && !SUBTREES.contains(n.path()) && !seen.add(n.path())) why = "is there twice";
            if (why == null) why = contentProblem(n);
            if (why != null) problems.add(Printable.cut(String.valueOf(n.path())) + " " + why);
            if (problems.size() >= 5) break;
        }
        if (!problems.isEmpty()) {
            throw Refusal.badRequest("nodes", "the backup holds nodes a restore does not write: " + String.join("; ", problems)
                    + " (a backup holds only " + SUBTREES + " and what is under them)");
        }
        return doc;
    }

    /**
     * What agents act on is read as they read it before it is written (a sum anyone can compute again proves no
     * content): a module's desired node is a desired record of that module, with a spec or a delete's tombstone; a
     * hold is a held record of its host and container.
     *
     * @return why the node's data would not be read as its place asks, or {@code null}
     */
    private static String contentProblem(Node n) {
        String[] parts = n.path().substring(1).split("/");
        byte[] data = n.data().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        try {
            if (parts.length == 2 && parts[0].equals("desired")) {
                io.mesh.wire.DesiredRecord d = io.mesh.wire.Json.read(data, io.mesh.wire.DesiredRecord.class);
                if (d == null || !parts[1].equals(d.module()) || !d.complete()) {
                    return "is not a desired record of module " + parts[1] + " with a spec or a delete";
                }
            } else if (parts.length == 3 && parts[0].equals("held")) {
                io.mesh.wire.HeldRecord h = io.mesh.wire.Json.read(data, io.mesh.wire.HeldRecord.class);
                if (h == null || !parts[1].equals(h.host()) || !parts[2].equals(h.container())) {
                    return "is not a held record of host " + parts[1] + " and container " + parts[2];
                }
            }
        } catch (RuntimeException e) {
            return "is not what mesh writes there (" + Printable.cut(String.valueOf(e.getMessage())) + ")";
        }
        return null;
    }

    /** The most bytes of a node's data a restore writes: ZooKeeper refuses a request over about 1 MB. */
    static final int MAX_NODE_BYTES = 1_000_000;
    /**
     * The highest push or history number a restore takes: it moves each parent's sequence past it with two writes per
     * number not yet used (decision 39 item 4), about 15 s per 200,000 here; a fleet's real numbers stay far below.
     */
    static final long MAX_SEQUENCE = 10_000_000;

    /** @return the push or history number a path names, or -1 */
    static long sequence(String path) {
        String name = path.substring(path.lastIndexOf('/') + 1);
        if (path.startsWith("/pushes/") && path.indexOf('/', "/pushes/".length()) < 0) return io.mesh.wire.ZkPaths.pushSeq(name);
        if (path.startsWith("/history/") && path.chars().filter(c -> c == '/').count() == 3) return io.mesh.wire.ZkPaths.historySeq(name);
        return -1;
    }

    /** @return why a backup's path is not one a restore writes, or {@code null} when it is */
    static String pathProblem(String path) {
        if (path == null || !path.startsWith("/") || path.endsWith("/") || path.contains("//")) return "is not a path such as /desired/store";
        for (String part : path.substring(1).split("/")) {
            if (part.equals(".") || part.equals("..") || part.chars().anyMatch(c -> c < 0x21 || c == 0x7f)) return "is not a path such as /desired/store";
        }
        try {
            org.apache.zookeeper.common.PathUtils.validatePath(path);
        } catch (IllegalArgumentException e) {
            return "is not a path ZooKeeper takes (" + Printable.cut(String.valueOf(e.getMessage())) + ")";
        }
        for (String s : SUBTREES) if (path.equals(s) || path.startsWith(s + "/")) return null;
        return "is outside what a backup holds";
    }
}
