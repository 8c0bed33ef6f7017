package io.mesh.coordinator;

import io.mesh.wire.Json;
import io.mesh.wire.PushCancel;
import io.mesh.wire.PushState;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Drops a push nobody will apply ({@code mesh push cancel PUSH}, {@code POST /v1/pushes/{push}/cancel}): writes its
 * cancel node {@link ZkPaths#pushCancel}, naming the hosts not settled then, after which those targets read
 * {@link PushState#CANCELLED} ({@link PushStatus}). The desired nodes are not touched: an agent that starts later
 * still applies each module's newest desired state (docs/decisions/0030-cancel-and-expire-pushes.md). Thread-safe.
 *
 * @param client a started Curator client; what decides the write is read from ZooKeeper, not the cache
 * @param paths  the layout under the configured root
 * @param clock  source of the cancel's {@code at}
 * @param noAgentExpiry as the coordinator's {@link PushStatus#noAgentExpiry()}, so that an expired target is not
 *               counted as one the cancel drops
 */
public record PushCancels(CuratorFramework client, ZkPaths paths, Clock clock, Duration noAgentExpiry) {
    /** The unsettled states a cancel drops. */
    private static final Set<PushState> UNSETTLED = Set.of(PushState.PENDING, PushState.DEFERRED, PushState.WAITING);

    /**
     * What a cancel did.
     *
     * @param cancel  the cancel node's record (an older one when the push was already cancelled)
     * @param already true when the push was already cancelled: nothing was written
     */
    public record Result(PushCancel cancel, boolean already) {}

    /**
     * @param push a push id such as {@code push-0000000002}
     * @param by   who cancels it (as a push's {@code by})
     * @return the cancel
     * @throws Refusal          404 for an unknown push, 409 for a push with no pending, deferred or waiting target
     * @throws Exception        ZooKeeper errors
     */
    public Result cancel(String push, String by) throws Exception {
        PushStatus status = new PushStatus(client, paths, ZkReads.direct(client), noAgentExpiry, clock);
        Optional<PushStatus.View> view = status.of(push);
        if (view.isEmpty()) {
            throw Refusal.notFound("push", "no push " + push + " (push ids look like push-0000000002; GET /v1/pushes lists them)");
        }
        PushStatus.View v = view.get();
        if (v.cancelled() != null) return new Result(v.cancelled(), true);
        List<String> hosts = v.targets().stream().filter(t -> UNSETTLED.contains(t.state())).map(PushStatus.Target::host)
                .distinct().sorted().toList();
        if (hosts.isEmpty()) {
            throw Refusal.conflict("push", push + " is " + v.state() + ": no host is pending, deferred or waiting on it, so there "
                    + "is nothing to cancel (mesh status " + push + " shows each host)");
        }
        PushCancel cancel = new PushCancel(push, clock.instant().truncatedTo(java.time.temporal.ChronoUnit.MILLIS), by, hosts);
        try {
            client.create().withMode(CreateMode.PERSISTENT).forPath(paths.pushCancel(push), Json.bytes(cancel));
        } catch (KeeperException.NodeExistsException e) {
            // Another coordinator (or a second click) cancelled it between the read and this create: that cancel stands.
            return new Result(ZkReads.read(client, paths.pushCancel(push), PushCancel.class), true);
        }
        return new Result(cancel, false);
    }
}
