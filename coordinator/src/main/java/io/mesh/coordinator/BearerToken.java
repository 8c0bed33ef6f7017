package io.mesh.coordinator;

import io.mesh.wire.HistoryRecord;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The bearer tokens that {@code POST /v1/pushes} (and every other write) takes as {@code Authorization: Bearer <token>},
 * each with a name that becomes the push's {@code by} (SPEC.md, "History and rollback": {@code --token-file} holds
 * {@code name:token} lines). A file of one line that is not {@code name:token} is the older single token, named
 * {@value HistoryRecord#BY_TOKEN}. Only the tokens' SHA-256 digests are kept; a request's token is compared with every
 * one of them ({@link MessageDigest#isEqual}, constant-time, no early exit), so neither content, length nor which
 * token matched leaks through timing. {@link #toString()} shows the names only.
 *
 * <p>Some names may be an admin's ({@link #withAdmins}, the coordinator's {@code --admin NAME}): their tokens may also
 * do what only an admin may ({@code mesh release --stale}); every other token may not.
 */
public final class BearerToken {
    /** Environment variable holding a single token when no token file is given. */
    public static final String ENV = "MESH_TOKEN";
    /** A token's name: what {@code by} shows. */
    private static final Pattern NAMED = Pattern.compile("([a-z0-9][a-z0-9._@-]{0,63}):(.+)");

    private final Map<String, byte[]> digests;
    private final Set<String> admins;

    private BearerToken(Map<String, byte[]> digests) { this(digests, Set.of()); }

    private BearerToken(Map<String, byte[]> digests, Set<String> admins) {
        this.digests = digests;
        this.admins = admins;
    }

    /**
     * @param names token names ({@code --admin NAME}, repeatable) whose tokens are an admin's
     * @return these tokens, those names' an admin's (and no other's)
     * @throws IllegalArgumentException naming the name and the file's names when one names no token
     */
    public BearerToken withAdmins(Collection<String> names) {
        for (String n : names) {
            if (!digests.containsKey(n)) {
                throw new IllegalArgumentException("--admin " + n + ": no token is named " + n + " (the names: " + digests.keySet()
                        + "; a --token-file of name:token lines names them, a file of one token or MESH_TOKEN names it "
                        + HistoryRecord.BY_TOKEN + ")");
            }
        }
        return new BearerToken(digests, Set.copyOf(names));
    }

    /**
     * @param name a token's name, as {@link #nameOf} gives it
     * @return true when it is an admin's ({@link #withAdmins})
     */
    public boolean isAdmin(String name) { return name != null && admins.contains(name); }

    /** @return the names of the admins' tokens, sorted */
    public List<String> admins() { return admins.stream().sorted().toList(); }

    /**
     * @param token the secret; surrounding whitespace is removed
     * @return a single token, named {@value HistoryRecord#BY_TOKEN}
     * @throws IllegalArgumentException when it is empty
     */
    public static BearerToken of(String token) {
        if (token == null || token.strip().isEmpty()) throw new IllegalArgumentException("the token is empty");
        return new BearerToken(Map.of(HistoryRecord.BY_TOKEN, sha256(token.strip())));
    }

    /**
     * @param file a file of {@code name:token} lines ({@code #} comments and blank lines skipped), or of one token
     * @return the tokens
     * @throws IOException              when the file cannot be read
     * @throws IllegalArgumentException naming the line (never its text) when it holds no token, a line is not
     *                                  {@code name:token}, or a name or token repeats
     */
    public static BearerToken fromFile(Path file) throws IOException {
        List<String> lines = Files.readString(file, StandardCharsets.UTF_8).lines().map(String::strip).toList();
        Map<String, byte[]> out = new LinkedHashMap<>();
        List<String> tokens = new ArrayList<>();
        int count = (int) lines.stream().filter(l -> !l.isEmpty() && !l.startsWith("#")).count();
        if (count == 0) throw new IllegalArgumentException("token file " + file + " is empty");
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            if (l.isEmpty() || l.startsWith("#")) continue;
            Matcher m = NAMED.matcher(l);
            if (!m.matches()) {
                if (count == 1) return of(l); // the older form: one token, no name
                throw new IllegalArgumentException("token file " + file + " line " + (i + 1) + ": write name:token, the name of "
                        + "[a-z0-9][a-z0-9._@-]{0,63} (it becomes the push's by), the token after the first ':'");
            }
            String token = m.group(2).strip();
            if (token.isEmpty() || out.containsKey(m.group(1)) || tokens.contains(token)) {
                throw new IllegalArgumentException("token file " + file + " line " + (i + 1) + ": " + (token.isEmpty() ? "the token is empty"
                        : out.containsKey(m.group(1)) ? "the name " + m.group(1) + " is given twice" : "the same token as an earlier line: give each name its own"));
            }
            tokens.add(token);
            out.put(m.group(1), sha256(token));
        }
        return new BearerToken(Collections.unmodifiableMap(out));
    }

    /**
     * @param authorization the request's {@code Authorization} header, or {@code null}
     * @return true when it is {@code Bearer <one of these tokens>}
     */
    public boolean matches(String authorization) { return nameOf(authorization).isPresent(); }

    /**
     * @param authorization the request's {@code Authorization} header, or {@code null}
     * @return the name of the token it carries; empty when it carries none of these
     */
    public Optional<String> nameOf(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) return Optional.empty();
        byte[] given = sha256(authorization.substring(7).strip());
        String found = null;
        for (Map.Entry<String, byte[]> e : digests.entrySet()) {
            if (MessageDigest.isEqual(e.getValue(), given) && found == null) found = e.getKey();
        }
        return Optional.ofNullable(found);
    }

    /** @return the tokens' names, in the file's order */
    public List<String> names() { return List.copyOf(digests.keySet()); }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }

    /** @return the names only: a token is never printed */
    @Override
    public String toString() { return "BearerToken" + digests.keySet() + (admins.isEmpty() ? "" : " admins " + admins()) + "[***]"; }
}
