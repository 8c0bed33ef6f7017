package io.mesh.coordinator;

import io.mesh.curator.HostIdentities;
import io.mesh.curator.HostIdentity;
import io.mesh.curator.MeshAcls;
import io.mesh.curator.MeshZk;
import io.mesh.curator.ZkAuth;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code mesh-coordinator credentials HOST}: issues a host's ZooKeeper identity (SPEC.md, "Identities";
 * docs/decisions/0019-host-identities.md). Writes the credentials file (mode 0600: {@code host-<id>:<random password>}
 * and the fleet line), registers the identity at {@code /mesh/identities/<host>}, makes the host's own parents
 * ({@code /mesh/reports|held|windows|requests/<host>}) with the ACL that lets that host create and delete under them,
 * and brings every other node's ACL to its rule ({@link MeshZk#secure}). Issuing again replaces the identity: the
 * nodes the old one made that the admin may delete (the host's reports, its empty module-lock nodes) are deleted, the
 * rest are named.
 */
public final class HostCredentials {
    private final CuratorFramework admin;
    private final ZkPaths paths;
    private final ZkAuth adminAuth;
    private final Clock clock;

    /**
     * @param admin     a client made by {@link MeshZk#connect} with {@code adminAuth}
     * @param paths     the layout
     * @param adminAuth the admin identity ({@link ZkAuth#admin()})
     * @param clock     for the identity's {@code createdAt}
     * @throws IllegalArgumentException when {@code adminAuth} is missing or a host's
     */
    public HostCredentials(CuratorFramework admin, ZkPaths paths, ZkAuth adminAuth, Clock clock) {
        if (adminAuth == null || !adminAuth.admin()) {
            throw new IllegalArgumentException("--zk-auth-file must hold the admin identity (the coordinators' user:password), not "
                    + (adminAuth == null ? "nothing" : "host " + adminAuth.host().orElseThrow() + "'s"));
        }
        this.admin = admin;
        this.paths = paths;
        this.adminAuth = adminAuth;
        this.clock = clock;
    }

    /**
     * Issues the identity of {@code host} and writes it to {@code out}.
     *
     * @param host  host id ({@link ZkPaths#checkHost})
     * @param out   the credentials file to write; its directory must exist
     * @param force replace {@code out} when it exists
     * @return what was done, one line each, for the operator (no secret)
     * @throws IllegalArgumentException naming the fix for a bad host id, or an existing {@code out} without
     *                                  {@code force}; nothing is written then
     * @throws Exception                from ZooKeeper or the file system; the file is in place only when ZooKeeper
     *                                  took the identity
     */
    public List<String> issue(String host, Path out, boolean force) throws Exception {
        ZkPaths.checkHost(host);
        if (Files.exists(out) && !force) {
            throw new IllegalArgumentException("--out " + out + " exists: give another file, or --force to replace it "
                    + "(the host's agent must then be restarted with the new file)");
        }
        ZkAuth hostAuth = ZkAuth.newHost(host, adminAuth);
        List<String> done = new ArrayList<>();
        Path dir = out.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(dir, ".mesh-credentials-", ".tmp", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try {
            Files.writeString(tmp, "# ZooKeeper identity of mesh host " + host + " (mesh-coordinator credentials, " + clock.instant()
                    + "): give it to mesh-agent --zk-auth-file; keep it mode 0600\n" + hostAuth.fileText(), StandardCharsets.UTF_8);
            Optional<HostIdentity> before = HostIdentity.read(admin, paths, host);
            done.addAll(HostIdentities.register(admin, paths, adminAuth, hostAuth, clock.instant()));
            if (before.isPresent() && !before.get().digest().equals(hostAuth.id().getId())) done.addAll(dropOldNodes(host));
            MeshZk.secure(admin, paths, adminAuth); // every other node to its rule, the host's subtree among them
            done.add("ACLs of every node under " + paths.root() + " checked against their rules (host " + host + " may write its own nodes only)");
            try {
                Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileAlreadyExistsException e) {
                throw new IllegalArgumentException("--out " + out + " appeared meanwhile: run again with --force");
            }
            done.add(0, "wrote " + out + " (mode 0600): user " + hostAuth.user() + " and the " + ZkAuth.FLEET_USER + " line");
            done.add("start the agent with: mesh-agent run --host " + host + " --zk-auth-file " + out + " (copy the file to that host, mode 0600)");
            return done;
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /**
     * The nodes the host's previous identity made stay its own (the admin has no right to change their ACL): its
     * reports are deleted (the agent writes them again at its next apply); its module-lock nodes were replaced by the
     * registration ({@link io.mesh.curator.LockNodes#ensureForHost}).
     */
    private List<String> dropOldNodes(String host) throws Exception {
        List<String> out = new ArrayList<>();
        for (String m : children(paths.reports(host))) {
            String p = paths.report(host, m);
            if (!MeshAcls.namesMeshIdentity(admin.getACL().forPath(p))) continue;
            try {
                admin.delete().forPath(p);
                out.add("deleted " + p + " (made by the previous identity; the agent writes it again)");
            } catch (KeeperException.NoNodeException gone) {
                // went meanwhile
            }
        }
        return out;
    }

    private List<String> children(String path) throws Exception {
        try {
            return admin.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

}
