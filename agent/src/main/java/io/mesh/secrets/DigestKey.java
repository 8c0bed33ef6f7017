package io.mesh.secrets;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The host's key for secret digests (decision 18): 32 random bytes in {@code <state-dir>/secret-digest.key}, made
 * (mode 600) the first time a secret is digested and kept from then on. A digest is HMAC-SHA256 under this key, so a
 * label or report that shows it does not let anyone try short passwords against it; deleting the key makes every
 * digest new, and every container with secrets is recreated once, with the reason {@code secret changed: NAME}.
 */
public final class DigestKey {
    /** The key file's name in the agent's state dir. */
    public static final String FILE = "secret-digest.key";
    /** Key length in bytes. */
    static final int BYTES = 32;
    /** Hex digits of a digest shown: 64 bits, plenty to tell a changed file under a key nobody else has. */
    static final int HEX = 16;
    private final Path file;
    private volatile byte[] key;

    /** @param stateDir the agent's {@code --state-dir} */
    public DigestKey(Path stateDir) {
        this.file = stateDir.resolve(FILE);
    }

    /**
     * @param in the secret's bytes (read to the end, not closed)
     * @return {@code hmac-sha256:} and the first 16 hex digits of the HMAC of the bytes
     * @throws IOException when the stream cannot be read
     * @throws UncheckedIOException when the key can be neither read nor made, naming the key file and the fix
     */
    public String digest(InputStream in) throws IOException {
        Mac mac = mac();
        byte[] buf = new byte[8192];
        for (int n; (n = in.read(buf)) > 0; ) mac.update(buf, 0, n);
        return "hmac-sha256:" + HexFormat.of().formatHex(mac.doFinal(), 0, HEX / 2);
    }

    private Mac mac() {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key(), "HmacSHA256"));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Reads the key, or makes it: written aside, then linked into place, so a reader never sees half a key. */
    private byte[] key() {
        byte[] k = key;
        if (k != null) return k;
        synchronized (this) {
            if (key != null) return key;
            try {
                if (!Files.exists(file)) make();
                byte[] read = Files.readAllBytes(file);
                if (read.length != BYTES) {
                    throw new IOException("it holds " + read.length + " bytes, not " + BYTES);
                }
                key = read;
                return read;
            } catch (IOException e) {
                throw new UncheckedIOException("the secret digest key " + file + " cannot be read or made (" + e.getMessage()
                        + "): make --state-dir writable by the agent, or delete a damaged key (every container with secrets"
                        + " is then recreated once)", e);
            }
        }
    }

    private void make() throws IOException {
        Files.createDirectories(file.getParent());
        byte[] fresh = new byte[BYTES];
        new SecureRandom().nextBytes(fresh);
        Path tmp = Files.createTempFile(file.getParent(), FILE, ".tmp",
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.write(tmp, fresh);
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ch.force(true);
            }
            Files.createLink(file, tmp); // fails when another process made it first: theirs is kept
        } catch (FileAlreadyExistsException raced) {
            // another mesh process of this host made it meanwhile
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
