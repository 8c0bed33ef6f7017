package io.mesh.coordinator;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;

/**
 * The shared secret of signed pushes: the body's HMAC-SHA256 in the header {@value #HEADER} as
 * {@code sha256=<hex>}, the form Git forges send with their webhooks (GitHub, Gitea, Forgejo). A CI job signs a
 * manifest with {@code openssl dgst -sha256 -hmac "$SECRET"}. Comparison is constant-time
 * ({@link MessageDigest#isEqual}); {@link #toString()} never shows the secret.
 */
public final class WebhookSecret {
    /** The signature header. */
    public static final String HEADER = "X-Hub-Signature-256";
    /** The prefix of its value. */
    public static final String PREFIX = "sha256=";

    private final SecretKeySpec key;

    private WebhookSecret(byte[] secret) { this.key = new SecretKeySpec(secret, "HmacSHA256"); }

    /**
     * @param secret the shared secret; surrounding whitespace is removed
     * @return the secret
     * @throws IllegalArgumentException when it is empty
     */
    public static WebhookSecret of(String secret) {
        if (secret == null || secret.strip().isEmpty()) throw new IllegalArgumentException("the webhook secret is empty");
        return new WebhookSecret(secret.strip().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * @param file a file holding the secret (first line; a trailing newline is fine)
     * @return the secret
     * @throws IOException              when the file cannot be read
     * @throws IllegalArgumentException when it holds no secret
     */
    public static WebhookSecret fromFile(Path file) throws IOException {
        String first = Files.readString(file, StandardCharsets.UTF_8).strip().lines().findFirst().orElse("");
        if (first.isBlank()) throw new IllegalArgumentException("webhook secret file " + file + " is empty");
        return of(first);
    }

    /**
     * @param body the request body, as received
     * @return {@code sha256=<hex of HMAC-SHA256(secret, body)>}: what a sender puts in {@value #HEADER}
     */
    public String sign(byte[] body) { return PREFIX + HexFormat.of().formatHex(mac(body)); }

    /**
     * @param header the request's {@value #HEADER} value, or {@code null}
     * @param body   the request body, as received
     * @return true when the header is {@code sha256=<hex>} of this secret's HMAC of {@code body}
     */
    public boolean verify(String header, byte[] body) {
        if (header == null || !header.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) return false;
        byte[] given;
        try {
            given = HexFormat.of().parseHex(header.substring(PREFIX.length()).strip());
        } catch (IllegalArgumentException e) {
            return false;
        }
        return MessageDigest.isEqual(mac(body), given);
    }

    private byte[] mac(byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            return mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 missing from the JDK", e);
        }
    }

    /** @return a placeholder: the secret is never printed */
    @Override
    public String toString() { return "WebhookSecret[***]"; }
}
