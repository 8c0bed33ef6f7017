package io.mesh.coordinator;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The shared secret that {@code POST /v1/pushes} requires as {@code Authorization: Bearer <token>}. Only its SHA-256
 * is kept; comparison is constant-time ({@link MessageDigest#isEqual}) over digests, so neither content nor length
 * leaks. {@link #toString()} never shows it.
 */
public final class BearerToken {
    /** Environment variable holding the token when no token file is given. */
    public static final String ENV = "MESH_TOKEN";

    private final byte[] digest;

    private BearerToken(String token) { this.digest = sha256(token); }

    /**
     * @param token the secret; surrounding whitespace is removed
     * @return the token
     * @throws IllegalArgumentException when it is empty
     */
    public static BearerToken of(String token) {
        if (token == null || token.strip().isEmpty()) throw new IllegalArgumentException("the token is empty");
        return new BearerToken(token.strip());
    }

    /**
     * @param file a file holding the token (first line; a trailing newline is fine)
     * @return the token
     * @throws IOException              when the file cannot be read
     * @throws IllegalArgumentException when it holds no token
     */
    public static BearerToken fromFile(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        String first = text.strip().lines().findFirst().orElse("");
        if (first.isBlank()) throw new IllegalArgumentException("token file " + file + " is empty");
        return of(first);
    }

    /**
     * @param authorization the request's {@code Authorization} header, or {@code null}
     * @return true when it is {@code Bearer <this token>}
     */
    public boolean matches(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) return false;
        return MessageDigest.isEqual(digest, sha256(authorization.substring(7).strip()));
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }

    /** @return a placeholder: the token is never printed */
    @Override
    public String toString() { return "BearerToken[***]"; }
}
