package io.mesh.coordinator;

import io.mesh.wire.AuditAnswer;
import io.mesh.wire.AuditChecker;
import io.mesh.wire.AuditPage;
import io.mesh.wire.AuditReport;
import io.mesh.wire.AuditRequest;
import io.mesh.wire.AuditState;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.ProcessRef;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The coordinator's side of an audit ({@code mesh audit}, {@code mesh why}; SPEC.md "Audit", decision 28): writes
 * {@code /mesh/audits/audit-<seq>} ({@link AuditRequest}) and one {@code pending} child per host ({@link AuditAnswer})
 * in one transaction, waits for the hosts' agents to answer, reads each answer's pages, judges each host's slice with
 * {@link AuditChecker#check} (its {@code now}: this coordinator's clock), and deletes the request. A host that did not
 * answer in time, or answered {@code failed}, is in the result as {@link AuditReport#unanswered}: never left out.
 * Requests an earlier coordinator abandoned (it died while waiting) are deleted once older than {@link #MAX_AGE}.
 * Thread-safe.
 *
 * @param client a started Curator client
 * @param paths  the layout
 * @param clock  this coordinator's clock: {@code requestedAt}, the checker's {@code now}
 */
public record AuditStore(CuratorFramework client, ZkPaths paths, Clock clock) {
    /** How long an audit waits for its hosts by default. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
    /** The longest wait a request may ask for (an HTTP request is answered within the coordinator's read timeout). */
    public static final Duration MAX_TIMEOUT = Duration.ofSeconds(25);
    /** Requests older than this are abandoned (their coordinator died while waiting) and deleted. */
    public static final Duration MAX_AGE = Duration.ofMinutes(10);
    /** The longest the answers go unread while waiting, should a watch not fire (a lost connection). */
    private static final Duration POLL_CAP = Duration.ofMillis(500);
    /** How many times a request that lost the race for its name is tried again. */
    private static final int MAX_ATTEMPTS = 10;

    private static final Logger LOG = LoggerFactory.getLogger(AuditStore.class);

    /**
     * What an audit found.
     *
     * @param from  the span's start
     * @param to    the span's end
     * @param exit  SPEC's exit code ({@link AuditReport#exitCode})
     * @param hosts one report per host asked, sorted by host
     */
    public record Result(Instant from, Instant to, int exit, List<AuditReport> hosts) {}

    /**
     * @return every host the fleet knows: those with an agent node now, and those with reports
     * @throws Exception ZooKeeper errors
     */
    public Set<String> knownHosts() throws Exception {
        Set<String> out = new TreeSet<>(ZkReads.children(client, paths.agents()));
        out.addAll(ZkReads.children(client, paths.reports()));
        return out;
    }

    /**
     * Asks each host for its ledger's slice of the span and judges it.
     *
     * @param since   the span's start
     * @param until   the span's end, after {@code since}
     * @param hosts   the hosts to ask; {@code null} or empty for every host {@link #knownHosts} names
     * @param modules the modules wanted, or {@code null} for all
     * @param timeout how long to wait for the answers, from 1 ms to {@link #MAX_TIMEOUT}
     * @param by      who asks, for the request's record
     * @return one report per host, sorted by host
     * @throws IllegalArgumentException when the timeout is out of range
     * @throws InterruptedException     when interrupted while waiting (the request is deleted)
     * @throws Exception                ZooKeeper errors writing the request
     */
    public Result audit(Instant since, Instant until, List<String> hosts, Set<String> modules, Duration timeout, ProcessRef by) throws Exception {
        if (timeout == null || timeout.isNegative() || timeout.isZero() || timeout.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException("timeout must be above 0 and at most " + MAX_TIMEOUT.toSeconds() + "s; got " + timeout);
        }
        List<String> targets = List.copyOf(new TreeSet<>(hosts == null || hosts.isEmpty() ? knownHosts() : hosts));
        Set<String> agents = new HashSet<>(ZkReads.children(client, paths.agents()));
        prune();
        if (targets.isEmpty()) return new Result(since, until, AuditReport.CLEAN, List.of());
        String audit = create(since, until, targets, modules, by);
        try {
            Map<String, AuditAnswer> answers = await(audit, targets, agents, timeout);
            Instant now = clock.instant();
            List<AuditReport> reports = new ArrayList<>();
            for (String h : targets) reports.add(report(audit, h, answers.get(h), agents.contains(h), since, until, modules, timeout, now));
            return new Result(since, until, AuditReport.exitCode(reports), List.copyOf(reports));
        } finally {
            delete(audit);
        }
    }

    /** Writes the request and its hosts' pending nodes in one transaction; @return the request's name */
    private String create(Instant since, Instant until, List<String> hosts, Set<String> modules, ProcessRef by) throws Exception {
        ensure(paths.root());
        ensure(paths.audits());
        for (int attempt = 1; ; attempt++) {
            Stat parent = client.checkExists().forPath(paths.audits());
            String audit = ZkPaths.auditName(parent.getCversion());
            Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
            byte[] request = Json.bytes(new AuditRequest(audit, since, until, modules == null ? null : List.copyOf(new TreeSet<>(modules)),
                    hosts, now, by));
            List<CuratorOp> ops = new ArrayList<>();
            ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths.audit(audit), request));
            for (String h : hosts) {
                ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths.audit(audit, h),
                        Json.bytes(AuditAnswer.pending(audit, h))));
            }
            try {
                client.transaction().forOperations(ops);
                return audit;
            } catch (KeeperException.NodeExistsException e) {
                // Another request took the name (or Curator retried a transaction that had committed: then it is ours).
                if (Arrays.equals(dataOrNull(paths.audit(audit)), request)) return audit;
                if (attempt >= MAX_ATTEMPTS) throw new IllegalStateException("another writer took each of " + MAX_ATTEMPTS + " audit names; ask again");
                Thread.sleep(ThreadLocalRandom.current().nextLong(5, 20L * attempt));
            }
        }
    }

    /**
     * Waits until every host with an agent node has answered, or the timeout. Each pending node is read with a watch, and
     * the wait ends at its first change (or after {@link #POLL_CAP}, should a watch be lost with a connection), so the
     * answers are read when they come, not on a fast poll per host.
     *
     * @return the last answer read per host (pending when it did not answer)
     */
    private Map<String, AuditAnswer> await(String audit, List<String> hosts, Set<String> agents, Duration timeout) throws Exception {
        Map<String, AuditAnswer> out = new LinkedHashMap<>();
        Object signal = new Object();
        boolean[] changed = {false};
        CuratorWatcher watch = e -> {
            synchronized (signal) {
                changed[0] = true;
                signal.notifyAll();
            }
        };
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            boolean waiting = false;
            for (String h : hosts) {
                AuditAnswer a = out.get(h);
                if (a != null && a.state() != AuditState.PENDING) continue;
                // A host without an agent node cannot answer: it is read once, not watched nor waited for.
                boolean watched = agents.contains(h);
                try {
                    byte[] data = watched ? client.getData().usingWatcher(watch).forPath(paths.audit(audit, h))
                            : client.getData().forPath(paths.audit(audit, h));
                    a = ZkReads.parse(paths.audit(audit, h), data, AuditAnswer.class);
                } catch (KeeperException.NoNodeException gone) {
                    a = null; // deleted under us (a prune of another coordinator): reads as not answered
                    watched = false;
                }
                if (a != null) out.put(h, a);
                if ((a == null || a.state() == AuditState.PENDING) && watched) waiting = true;
            }
            long left = deadline - System.nanoTime();
            if (!waiting || left <= 0) return out;
            synchronized (signal) {
                if (!changed[0]) signal.wait(Math.max(1, Math.min(POLL_CAP.toMillis(), left / 1_000_000)));
                changed[0] = false;
            }
        }
    }

    private AuditReport report(String audit, String host, AuditAnswer a, boolean agent, Instant since, Instant until,
                               Set<String> modules, Duration timeout, Instant now) {
        if (a == null || a.state() == AuditState.PENDING || a.state() == AuditState.UNKNOWN) {
            String why = agent ? "did not answer within " + seconds(timeout)
                    + " (its agent is busy, or its ZooKeeper session is stale; ask again, or with a longer timeout)"
                    : "did not answer: it has no agent (no " + paths.agent(host) + "); start mesh-agent run --host " + host;
            return AuditReport.unanswered(host, since, until, why);
        }
        if (a.state() == AuditState.FAILED) {
            return AuditReport.unanswered(host, since, until, a.error() == null ? "its agent could not answer" : a.error());
        }
        try {
            List<AuditPage> pages = new ArrayList<>();
            for (int i = 0; i < a.pages(); i++) {
                AuditPage p = Json.readOrNull(client.getData().forPath(paths.auditPage(audit, host, i)), AuditPage.class);
                if (p == null) throw new IllegalStateException("page " + i + " of " + a.pages() + " does not read");
                pages.add(p);
            }
            List<LedgerEntry> lines = AuditPage.join(pages);
            return AuditChecker.check(host, lines, since, until, modules, now);
        } catch (Exception e) {
            LOG.warn("audit {} host={}: the answer does not read: {}", audit, host, e.toString());
            return AuditReport.unanswered(host, since, until, "its answer does not read: " + e.getMessage());
        }
    }

    private static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
    }

    /** Deletes an audit with its answers and pages; best effort. */
    private void delete(String audit) {
        try {
            client.delete().deletingChildrenIfNeeded().forPath(paths.audit(audit));
        } catch (KeeperException.NoNodeException gone) {
            // deleted by a prune of another coordinator
        } catch (Exception e) {
            LOG.warn("audit {} not deleted (a later audit prunes it after {}m): {}", audit, MAX_AGE.toMinutes(), e.toString());
        }
    }

    /** Deletes the requests older than {@link #MAX_AGE}: their coordinator died before deleting them; best effort. */
    private void prune() {
        try {
            long oldest = clock.millis() - MAX_AGE.toMillis();
            for (String a : ZkReads.children(client, paths.audits())) {
                if (ZkPaths.auditSeq(a) < 0) continue;
                Stat s = client.checkExists().forPath(paths.audit(a));
                if (s != null && s.getCtime() < oldest) delete(a);
            }
        } catch (Exception e) {
            LOG.warn("old audits not pruned: {}", e.toString());
        }
    }

    private byte[] dataOrNull(String path) throws Exception {
        try {
            return client.getData().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    private void ensure(String path) throws Exception {
        if (client.checkExists().forPath(path) != null) return;
        try {
            client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(path, "{}".getBytes(StandardCharsets.UTF_8));
        } catch (KeeperException.NodeExistsException ignored) {
            // made meanwhile
        }
    }
}
