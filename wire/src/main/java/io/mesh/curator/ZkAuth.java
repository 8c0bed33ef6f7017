package io.mesh.curator;

import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.AuthInfo;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * A mesh process's ZooKeeper identity: digest credentials {@code user:password}, and the kind of identity the user
 * name says (docs/decisions/0019-host-identities.md):
 *
 * <ul>
 *   <li>{@code host-<id>}: one host's agent ({@code mesh-agent run} and {@code window} of that host). Its file carries
 *       a second line, the fleet identity {@value #FLEET_USER}{@code :<password>}, which gives every host the shared
 *       parents (lock modules, slots, {@code /mesh/agents}) and nothing else. Made by {@code mesh-coordinator
 *       credentials HOST}.</li>
 *   <li>any other user (such as {@code mesh}): the admin identity of coordinators; also accepted from agents, which then
 *       share it as before per-host identities existed (dev fleets). An admin process also authenticates as the fleet,
 *       whose password it derives from its own ({@link #fleetFor}), so that the fleet's ACL entries cover it too.</li>
 * </ul>
 *
 * <p>The credentials come from a file ({@code --zk-auth-file F}: its non-blank lines that are not {@code #} comments,
 * one identity a line) or from the environment ({@value #ENV}, the same lines; the fleet's may follow a space).
 * Passwords are never printed: {@link #toString()} shows the user only. Which ACL each node gets is {@link MeshAcls}.
 */
public final class ZkAuth {
    /** Environment variable holding {@code user:password} (and, for a host, the fleet line) when no file is given. */
    public static final String ENV = "MESH_ZK_AUTH";
    /** ZooKeeper's digest scheme. */
    public static final String SCHEME = "digest";
    /** User name prefix of a host's identity: {@code host-<host id>}. */
    public static final String HOST_PREFIX = "host-";
    /** User name of the fleet identity every host shares for the shared parents. */
    public static final String FLEET_USER = "mesh-fleet";

    private final String user;
    private final String host;
    private final byte[] credentials;
    private final Id id;
    private final byte[] fleetCredentials;
    private final Id fleetId;

    private ZkAuth(String user, String userColonPassword, String fleetColonPassword) {
        this.user = user;
        this.host = user.startsWith(HOST_PREFIX) ? user.substring(HOST_PREFIX.length()) : null;
        this.credentials = userColonPassword.getBytes(StandardCharsets.UTF_8);
        this.id = digestId(userColonPassword);
        this.fleetCredentials = fleetColonPassword == null ? null : fleetColonPassword.getBytes(StandardCharsets.UTF_8);
        this.fleetId = fleetColonPassword == null ? null : digestId(fleetColonPassword);
    }

    /**
     * @param userColonPassword {@code user:password}; surrounding whitespace is removed
     * @return the credentials: a host's ({@code host-<id>}, which then lacks the fleet line: see {@link #parseLines}),
     *         or an admin identity
     * @throws IllegalArgumentException naming the expected form (never the text given) when it is not one
     */
    public static ZkAuth parse(String userColonPassword) {
        String s = checked(userColonPassword);
        String u = s.substring(0, s.indexOf(':'));
        if (u.equals(FLEET_USER)) throw new IllegalArgumentException("the first credentials line is the process's own identity, not " + FLEET_USER);
        if (u.startsWith(HOST_PREFIX)) {
            ZkPaths.checkHost(u.substring(HOST_PREFIX.length()));
            return new ZkAuth(u, s, null);
        }
        return new ZkAuth(u, s, fleetFor(s));
    }

    /**
     * Reads the lines of a credentials file or of {@value #ENV}: blank lines and {@code #} comments are skipped; the
     * first line is the process's identity; a host's ({@code host-<id>}) needs a second, {@value #FLEET_USER}{@code
     * :<password>}; an admin's has no second.
     *
     * @param text the lines
     * @return the credentials
     * @throws IllegalArgumentException naming what is wrong and how to fix it (never a password)
     */
    public static ZkAuth parseLines(String text) {
        List<String> lines = (text == null ? "" : text).lines().map(String::strip)
                .filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        if (lines.isEmpty()) parse("");
        ZkAuth first = parse(lines.get(0));
        if (first.host == null) {
            if (lines.size() > 1) throw new IllegalArgumentException("an admin identity (" + first.user + ") is one user:password line; "
                    + "a second line is only for a host's identity (host-<id>), whose file mesh-coordinator credentials writes");
            return first;
        }
        if (lines.size() != 2 || !lines.get(1).startsWith(FLEET_USER + ":")) {
            throw new IllegalArgumentException("the identity of host " + first.host + " needs a second line " + FLEET_USER
                    + ":<password> and nothing else: use the file mesh-coordinator credentials " + first.host + " writes");
        }
        return new ZkAuth(first.user, new String(first.credentials, StandardCharsets.UTF_8), checked(lines.get(1)));
    }

    private static String checked(String userColonPassword) {
        String s = userColonPassword == null ? "" : userColonPassword.strip();
        int colon = s.indexOf(':');
        if (colon <= 0 || colon == s.length() - 1 || s.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw new IllegalArgumentException("ZooKeeper credentials must be user:password (a non-empty user without ':', "
                    + "a non-empty password, no control characters)");
        }
        return s;
    }

    /**
     * @param file a file of credentials lines ({@link #parseLines})
     * @return the credentials
     * @throws IOException              when the file cannot be read
     * @throws IllegalArgumentException when it holds no valid credentials
     */
    public static ZkAuth fromFile(Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        try {
            return parseLines(text);
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
            // A host's two identities may be given on one line, the fleet's after a space.
            return parseLines(v.strip().replaceAll("\\s+(?=" + FLEET_USER + ":)", "\n"));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(ENV + ": " + e.getMessage());
        }
    }

    /**
     * A new host identity with a random password (256 bits) and the fleet identity of {@code admin}.
     *
     * @param host  the host id ({@link ZkPaths#checkHost})
     * @param admin the admin identity issuing it
     * @return the host's credentials
     * @throws IllegalArgumentException when {@code admin} is not an admin identity or the host id is invalid
     */
    public static ZkAuth newHost(String host, ZkAuth admin) {
        if (!admin.admin()) throw new IllegalArgumentException("host credentials are issued with the admin identity, not " + admin.user);
        ZkPaths.checkHost(host);
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        String pw = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
        return new ZkAuth(HOST_PREFIX + host, HOST_PREFIX + host + ":" + pw, new String(admin.fleetCredentials, StandardCharsets.UTF_8));
    }

    /**
     * The fleet identity of an admin: its password is HMAC-SHA256 of the admin's {@code user:password}, so that every
     * coordinator with the admin file knows it and no host can work back to the admin's password.
     *
     * @param adminColonPassword the admin's {@code user:password}
     * @return {@value #FLEET_USER}{@code :<derived password>}
     */
    static String fleetFor(String adminColonPassword) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(adminColonPassword.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            byte[] d = mac.doFinal("mesh fleet identity v1".getBytes(StandardCharsets.UTF_8));
            return FLEET_USER + ":" + Base64.getUrlEncoder().withoutPadding().encodeToString(d);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 missing from the JDK", e);
        }
    }

    private static Id digestId(String userColonPassword) {
        try {
            return new Id(SCHEME, DigestAuthenticationProvider.generateDigest(userColonPassword));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 missing from the JDK", e);
        }
    }

    /** @return the user name (not secret), such as {@code mesh} or {@code host-a} */
    public String user() { return user; }

    /** @return the host this identity is, for {@code host-<id>}; empty for an admin identity */
    public Optional<String> host() { return Optional.ofNullable(host); }

    /** @return true for an admin identity (any user but {@code host-*}) */
    public boolean admin() { return host == null; }

    /** @return {@code user:password} as bytes */
    byte[] credentials() { return credentials.clone(); }

    /** @return what the client authenticates as: this identity, then the fleet's */
    public List<AuthInfo> authorizations() {
        List<AuthInfo> out = new ArrayList<>();
        out.add(new AuthInfo(SCHEME, credentials.clone()));
        if (fleetCredentials != null) out.add(new AuthInfo(SCHEME, fleetCredentials.clone()));
        return out;
    }

    /** @return this identity in ACLs: {@code digest:<user>:<base64 sha1 of user:password>} */
    public Id id() { return id; }

    /** @return the fleet identity in ACLs (every host's file carries it; an admin derives it) */
    public Id fleetId() { return fleetId; }

    /** @return the ACL of a node only this identity may change: it may do everything, anyone may read */
    public List<ACL> acl() {
        // A mutable list: ZooKeeper's client asks it contains(null), which List.of refuses with an exception.
        return new ArrayList<>(List.of(new ACL(ZooDefs.Perms.ALL, id), new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE)));
    }

    /**
     * @return the lines of a credentials file for this identity ({@link #parseLines} reads them back); secret
     */
    public String fileText() {
        StringBuilder b = new StringBuilder(new String(credentials, StandardCharsets.UTF_8)).append('\n');
        if (host != null) b.append(new String(fleetCredentials, StandardCharsets.UTF_8)).append('\n');
        return b.toString();
    }

    /**
     * @param id a digest id as ZooKeeper shows it ({@code user:hash}, or {@code user:x} to a reader without ADMIN)
     * @return the user part
     */
    public static String userOf(Id id) {
        String s = id.getId();
        int colon = s.indexOf(':');
        return colon < 0 ? s : s.substring(0, colon);
    }

    /** @return the user only; the password is never printed */
    @Override
    public String toString() { return "ZkAuth[digest user=" + user + ", password=***]"; }
}
