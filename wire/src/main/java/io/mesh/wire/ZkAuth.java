package io.mesh.wire;

import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * mesh's ZooKeeper identity: digest credentials {@code user:password} that every mesh process (agents,
 * {@code mesh-agent window}, the coordinator) authenticates with, and the ACL they put on every node they create
 * (docs/security.md): {@code digest:<user>:<hash>} may do everything, {@code world:anyone} may only read, so
 * {@code zkCli} inspection keeps working and nobody else can create, change or delete a lock, held, window, desired
 * or report node.
 *
 * <p>The credentials come from a file ({@code --zk-auth-file F}: its first non-blank line that is not a
 * {@code #} comment) or from the environment ({@value #ENV}). The password is never printed: {@link #toString()}
 * shows the user only.
 */
public final class ZkAuth {
    /** Environment variable holding {@code user:password} when no file is given. */
    public static final String ENV = "MESH_ZK_AUTH";
    /** ZooKeeper's digest scheme. */
    public static final String SCHEME = "digest";

    private final String user;
    private final byte[] credentials;
    private final Id id;

    private ZkAuth(String user, String userColonPassword) {
        this.user = user;
        this.credentials = userColonPassword.getBytes(StandardCharsets.UTF_8);
        try {
            this.id = new Id(SCHEME, DigestAuthenticationProvider.generateDigest(userColonPassword));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 missing from the JDK", e);
        }
    }

    /**
     * @param userColonPassword {@code user:password}; surrounding whitespace is removed
     * @return the credentials
     * @throws IllegalArgumentException naming the expected form (never the text given) when it is not one
     */
    public static ZkAuth parse(String userColonPassword) {
        String s = userColonPassword == null ? "" : userColonPassword.strip();
        int colon = s.indexOf(':');
        if (colon <= 0 || colon == s.length() - 1 || s.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw new IllegalArgumentException("ZooKeeper credentials must be user:password (a non-empty user without ':', "
                    + "a non-empty password, no control characters)");
        }
        return new ZkAuth(s.substring(0, colon), s);
    }

    /**
     * @param file a file whose first non-blank, non-{@code #} line is {@code user:password}
     * @return the credentials
     * @throws IOException              when the file cannot be read
     * @throws IllegalArgumentException when it holds no credentials
     */
    public static ZkAuth fromFile(Path file) throws IOException {
        String line = Files.readString(file, StandardCharsets.UTF_8).lines().map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("#")).findFirst().orElse("");
        try {
            return parse(line);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--zk-auth-file " + file + ": " + e.getMessage());
        }
    }

    /**
     * The credentials a mesh process uses: from {@code file} when given, else from {@value #ENV}, else none.
     *
     * @param file {@code --zk-auth-file}, or {@code null}
     * @param env  the environment (normally {@link System#getenv()})
     * @return the credentials, or {@code null} when neither is set (open ACLs: for demos and tests only)
     * @throws IllegalArgumentException when the file cannot be read or either holds no valid credentials
     */
    public static ZkAuth resolve(Path file, Map<String, String> env) {
        if (file != null) {
            try {
                return fromFile(file);
            } catch (IOException e) {
                throw new IllegalArgumentException("--zk-auth-file " + file + " cannot be read: " + e.getMessage());
            }
        }
        String v = env.get(ENV);
        if (v == null || v.isBlank()) return null;
        try {
            return parse(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(ENV + ": " + e.getMessage());
        }
    }

    /** @return the user name (not secret) */
    public String user() { return user; }

    /** @return {@code user:password} as bytes, for Curator's {@code authorization("digest", ...)} */
    byte[] credentials() { return credentials.clone(); }

    /** @return this identity in ACLs: {@code digest:<user>:<base64 sha1 of user:password>} */
    public Id id() { return id; }

    /** @return the ACL of every node mesh creates: this identity may do everything, anyone may read */
    public List<ACL> acl() {
        // A mutable list: ZooKeeper's client asks it contains(null), which List.of refuses with an exception.
        return new ArrayList<>(List.of(new ACL(ZooDefs.Perms.ALL, id), new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE)));
    }

    /** @return the user only; the password is never printed */
    @Override
    public String toString() { return "ZkAuth[digest user=" + user + ", password=***]"; }
}
