package io.mesh.secrets;

import io.mesh.docker.SecretDelivery;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.SecretRef;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The agent's secrets dir ({@code --secrets-dir}, SPEC.md "Secrets"; decision 18): reads the files a container's
 * {@code secrets} name, checks each is a regular file inside the dir after links are followed, and digests it with the
 * host's {@link DigestKey}. Every problem names the secret and its file relative to the dir, never what the file holds.
 * The files are read again at every apply and reconcile (no watch): a changed file changes the digest, and so the
 * container's spec hash.
 */
public final class SecretsDir {
    /** SPEC's default {@code --secrets-dir}. */
    public static final Path DEFAULT = Path.of("/etc/mesh/secrets");
    /** The largest value an environment variable is given from a file; a larger secret is for a mounted file. */
    static final int MAX_ENV_BYTES = 64 * 1024;
    private final Path dir;
    private final DigestKey key;

    /**
     * @param dir the secrets dir ({@code --secrets-dir})
     * @param key the host's digest key
     */
    public SecretsDir(Path dir, DigestKey key) {
        this.dir = dir;
        this.key = key;
    }

    /**
     * A container's secrets as this host has them now.
     *
     * @param digests  by secret name, the digest of each file that could be read
     * @param delivery what the container's create gives Docker
     * @param problems  one line per secret that cannot be had (naming it and its file, and the fix); empty when all can
     * @param redaction takes the values out of what the container prints, before it goes into a report
     */
    public record Resolved(Map<String, String> digests, SecretDelivery delivery, List<String> problems, Redaction redaction) {
        /** A container without secrets. */
        public static final Resolved NONE = new Resolved(Map.of(), SecretDelivery.NONE, List.of(), Redaction.NONE);

        /** Copies. */
        public Resolved {
            digests = Map.copyOf(digests);
            problems = List.copyOf(problems);
        }

        /** @return true when every secret was read */
        public boolean complete() { return problems.isEmpty(); }
    }

    /**
     * Reads every secret of a container.
     *
     * @param spec the container's spec
     * @return digests, delivery and problems (a digest key that can be neither read nor made is one, naming the key
     *         file); {@link Resolved#NONE} without secrets
     */
    public Resolved resolve(ContainerSpec spec) {
        if (spec == null || spec.secrets().isEmpty()) return Resolved.NONE;
        Map<String, String> digests = new LinkedHashMap<>();
        Map<String, String> env = new LinkedHashMap<>();
        List<SecretDelivery.FileMount> files = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        Map<String, String> texts = new LinkedHashMap<>(); // for the redaction of what the container prints
        for (Map.Entry<String, SecretRef> e : spec.secrets().entrySet()) {
            String name = e.getKey();
            SecretRef ref = e.getValue();
            String where = "secret " + name + ": file " + ref.file();
            try {
                Path real = locate(ref.file(), where);
                if (ref.deliveredAsFile() && Files.size(real) > MAX_ENV_BYTES) {
                    try (InputStream in = Files.newInputStream(real)) { // large: digested as it streams, never held
                        digests.put(name, key.digest(in));
                    }
                    files.add(new SecretDelivery.FileMount(real, ref.target()));
                } else if (ref.deliveredAsFile()) {
                    byte[] bytes = Files.readAllBytes(real);
                    digests.put(name, key.digest(new ByteArrayInputStream(bytes)));
                    files.add(new SecretDelivery.FileMount(real, ref.target()));
                    String text = utf8(bytes, bytes.length);
                    if (text != null) texts.put(name, text);
                    Arrays.fill(bytes, (byte) 0);
                } else {
                    byte[] bytes = envBytes(real, where);
                    digests.put(name, key.digest(new ByteArrayInputStream(bytes)));
                    String value = envValue(bytes, where);
                    env.put(name, value);
                    texts.put(name, value);
                    Arrays.fill(bytes, (byte) 0);
                }
            } catch (Refused r) {
                problems.add(r.getMessage());
            } catch (UncheckedIOException k) {
                problems.add("secret " + name + ": " + k.getMessage()); // the digest key: DigestKey names it and the fix
            } catch (IOException x) {
                // The exception's own message is a path at most; its kind says what went wrong.
                problems.add(where + " cannot be read (" + x.getClass().getSimpleName() + "): make it readable by the agent");
            }
        }
        return new Resolved(digests, problems.isEmpty() ? new SecretDelivery(env, files) : SecretDelivery.NONE, problems,
                Redaction.of(texts));
    }

    /** @return the file's real path, checked to be a regular file inside the secrets dir */
    private Path locate(String file, String where) throws IOException {
        if (!Files.isDirectory(dir)) {
            throw new Refused(where + ": the secrets dir " + dir + " (--secrets-dir) does not exist on this host: create it,"
                    + " readable by the agent only, and put " + file + " in it");
        }
        Path realDir = dir.toRealPath();
        Path p = dir.resolve(file);
        if (!Files.exists(p)) {
            throw new Refused(where + " is missing from the secrets dir " + dir + " (--secrets-dir): put it there, readable by the agent");
        }
        Path real = p.toRealPath();
        if (!real.startsWith(realDir)) {
            throw new Refused(where + " leads outside the secrets dir " + dir + " (--secrets-dir) through a symbolic link:"
                    + " a secret must be a file inside it");
        }
        if (!Files.isRegularFile(real)) {
            throw new Refused(where + " is not a regular file in the secrets dir " + dir + ": give the path of a file");
        }
        return real;
    }

    private static byte[] envBytes(Path real, String where) throws IOException {
        if (Files.size(real) > MAX_ENV_BYTES) {
            throw new Refused(where + " is larger than " + MAX_ENV_BYTES / 1024 + " KiB, too large for an environment variable:"
                    + " give it a target to mount it as a file");
        }
        return Files.readAllBytes(real);
    }

    /**
     * The variable's value: the file's text without one trailing line end (files written by {@code echo} or an editor
     * have one; the digest is of the bytes as they are).
     */
    private static String envValue(byte[] bytes, String where) {
        int n = bytes.length;
        if (n > 0 && bytes[n - 1] == '\n') n--;
        if (n > 0 && bytes[n - 1] == '\r') n--;
        for (int i = 0; i < n; i++) {
            if (bytes[i] == 0) {
                throw new Refused(where + " holds a NUL byte, which an environment variable cannot: give it a target to mount it as a file");
            }
        }
        String text = utf8(bytes, n);
        if (text == null) {
            throw new Refused(where + " is not UTF-8 text, which an environment variable needs: give it a target to mount it as a file");
        }
        return text;
    }

    /** @return the first {@code n} bytes as UTF-8 text, or {@code null} when they are not */
    private static String utf8(byte[] bytes, int n) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes, 0, n)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    /** A secret this host cannot deliver; its message is the report's line. */
    private static final class Refused extends RuntimeException {
        Refused(String message) {
            super(message, null, false, false);
        }
    }

    /** @return the secrets dir, as given */
    public Path dir() {
        return dir;
    }
}
