package io.mesh.coordinator;

import io.mesh.curator.RolloutNodes;
import io.mesh.manifest.ModuleName;
import io.mesh.manifest.Printable;
import io.mesh.wire.Json;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

import java.time.Clock;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * An operator's side of {@code /mesh/rollouts/<module>} (SPEC.md, "Rollouts"; docs/decisions/0013-rollouts.md): read
 * it as derived from the node and its hosts' children ({@link RolloutNodes}), resume, abort or promote it. Every move is a
 * write of the rollout node at the version read, as the folds are, so a coordinator keeps nothing and any coordinator
 * may do it.
 *
 * @param client a started Curator client
 * @param paths  the layout
 * @param clock  for the record's times
 */
public record RolloutStore(CuratorFramework client, ZkPaths paths, Clock clock) {
    private static final int MAX_ATTEMPTS = 20;

    /**
     * @param module module name (checked by the caller)
     * @return the module's rollout as its hosts' children say now, without the spec it replaces; empty when the module
     *         has none
     * @throws Exception ZooKeeper errors
     */
    public Optional<RolloutRecord> read(String module) throws Exception {
        RolloutRecord r = RolloutNodes.readView(client, paths, module);
        return Optional.ofNullable(r == null ? null : r.withoutPrevious());
    }

    /** What an operator does to a rollout. */
    public enum Move { RESUME, ABORT, PROMOTE }

    /**
     * @param module module name, as the request's path gives it
     * @param move   resume (a paused rollout goes on; the hosts failed now are recorded as resumed past), abort (it
     *               stops for good) or promote (the hosts after the canaries of a {@code promote: manual} rollout go)
     * @param by     who asks
     * @param push   the push whose rollout the operator means (as {@code mesh rollout status} showed it), or
     *               {@code null} for the current one
     * @return the rollout as written and derived
     * @throws Refusal   404 when {@code module} is no module name or has no rollout; 409 when the rollout is not where
     *                   the move applies (not paused, ended already, not waiting for a promote), is of another push than {@code push}, or changed
     *                   under every attempt (decision 13)
     * @throws Exception ZooKeeper errors
     */
    public RolloutRecord move(String module, Move move, String by, String push) throws Exception {
        Optional<RolloutRecord> r;
        try {
            r = ModuleName.matches(module) ? write(module, move, by, push) : Optional.empty();
        } catch (IllegalStateException e) {
            throw Refusal.conflict(null, e.getMessage() + ": mesh rollout status " + Printable.cut(module) + " shows it");
        }
        return r.orElseThrow(() -> Refusal.notFound(null, "module " + Printable.cut(module) + " has no rollout to "
                + move.name().toLowerCase(Locale.ROOT)));
    }

    /**
     * {@link #move}'s write at the version read.
     *
     * @return the rollout as written and derived; empty when the module has no rollout
     * @throws IllegalStateException when the move does not apply, or every attempt lost its race
     */
    private Optional<RolloutRecord> write(String module, Move move, String by, String push) throws Exception {
        String path = paths.rollout(module);
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            RolloutNodes nodes = RolloutNodes.read(client, paths, module);
            if (nodes == null) return Optional.empty();
            RolloutRecord r = nodes.view();
            if (r == null) throw new IllegalStateException(path + " does not hold a rollout record");
            if (push != null && !push.equals(r.push())) {
                throw new IllegalStateException("the rollout of " + module + " is of " + r.push() + " now, not " + push + " (a newer push replaced it)");
            }
            RolloutRecord next = switch (move) {
                case RESUME -> r.resume(by, clock.instant());
                case ABORT -> r.abort(by, clock.instant());
                case PROMOTE -> r.promote(by, clock.instant());
            };
            try {
                client.setData().withVersion(nodes.parentStat().getVersion()).forPath(path, Json.bytes(next));
                return Optional.of(next.view(nodes.children().values().stream().map(RolloutNodes.Child::record).toList()).withoutPrevious());
            } catch (KeeperException.BadVersionException e) {
                // a fold or another operator wrote it meanwhile: read again, after a pause that lets a busy wave's folds pass
                Thread.sleep(ThreadLocalRandom.current().nextLong(5, 20L + 20L * attempt));
            }
        }
        throw new IllegalStateException(path + " changed under each of " + MAX_ATTEMPTS + " attempts: try again");
    }
}
