package io.mesh.curator;

import java.util.Optional;
import io.mesh.wire.ZkPaths;
import io.mesh.wire.Json;
import org.apache.zookeeper.KeeperException;
import org.apache.curator.framework.CuratorFramework;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import org.apache.zookeeper.data.Id;

import java.time.Instant;

/**
 * Data of {@code /mesh/identities/<host>}: a host's ZooKeeper identity as {@code mesh-coordinator credentials} made it,
 * so that a coordinator can give the host rights on the nodes it makes for it (a plan's or window request's node, an
 * operator hold). Readable by the admin identity only: {@code digest} is the password's hash as ZooKeeper's ACLs carry
 * it, which ZooKeeper itself shows only to who may administer a node (docs/decisions/0019-host-identities.md).
 *
 * @param host      host id
 * @param user      the digest user, {@code host-<host>}
 * @param digest    the digest id, {@code host-<host>:<base64 sha1 of user:password>}
 * @param createdAt when the credentials were issued
 */
@JsonPropertyOrder({"host", "user", "digest", "createdAt"})
public record HostIdentity(String host, String user, String digest, Instant createdAt) {
    /**
     * @param auth a host's credentials ({@link ZkAuth#host()} present)
     * @param at   when they were issued
     * @return the record of {@code auth}
     */
    public static HostIdentity of(ZkAuth auth, Instant at) {
        String host = auth.host().orElseThrow(() -> new IllegalArgumentException(auth.user() + " is not a host identity"));
        return new HostIdentity(host, auth.user(), auth.id().getId(), at);
    }

    /** @return the identity as an ACL entry's id */
    public Id id() { return new Id(ZkAuth.SCHEME, digest); }

    /**
     * @return the host's identity; empty when it has none
     * @throws Exception from ZooKeeper (NoAuth for a process without the admin identity)
     */
    public static Optional<HostIdentity> read(CuratorFramework client, ZkPaths paths, String host) throws Exception {
        try {
            return Optional.ofNullable(Json.readOrNull(client.getData().forPath(paths.identity(host)), HostIdentity.class));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        }
    }
}
