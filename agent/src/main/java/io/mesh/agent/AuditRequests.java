package io.mesh.agent;

import io.mesh.curator.ZkNode;
import io.mesh.docker.IdleThreads;
import io.mesh.ledger.LedgerSource;
import io.mesh.wire.AuditAnswer;
import io.mesh.wire.AuditPage;
import io.mesh.wire.AuditRequest;
import io.mesh.wire.AuditState;
import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import io.mesh.wire.QueuedOnce;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.watch.PersistentWatcher;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Answers the audits asked of this host ({@code mesh audit}, {@code mesh why}; SPEC.md "Audit", decision 28): for each
 * {@code /mesh/audits/<audit>/<host>} of this host still {@code pending}, reads the ledger's slice of the request's span
 * from a {@link LedgerSource}, writes it as page children {@code page-<n>} of at most {@link AuditPage#MAX_BYTES} of JSON
 * each, then sets the node to {@code answered} with the number of pages, at the version it read (never overwriting
 * another answer). Without a ledger, or when the slice cannot be read, the node reads {@code failed} with why.
 *
 * <p>It travels as a plan does (decision 12; {@link PlanRequests}): a recursive {@link PersistentWatcher} on
 * {@code /mesh/audits} (no copy of other hosts' pages), a look at every request after the watch is set and after each
 * reconnection, one request at a time on one thread. A request older than {@link AuditAnswer#MAX_REQUEST_AGE} is left
 * alone: its coordinator has given up on it. Read only: nothing but the answer and its pages is written, no lock taken.
 */
public final class AuditRequests implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AuditRequests.class);

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final String host;
    private final Clock clock;
    /** The most pages an answer has ({@link AuditPage#MAX_PAGES}; fewer in tests). */
    private final int maxPages;
    private volatile LedgerSource ledger;
    private final PersistentWatcher watcher;
    private final ExecutorService worker;
    /** An audit asked again (an event and a sweep) before its answer starts is answered once. */
    private final QueuedOnce answers;

    /**
     * @param client a started Curator client
     * @param paths  the layout
     * @param host   this host's id
     * @param ledger this host's ledger, or {@code null} when it keeps none (then every audit is answered {@code failed})
     * @param clock  this host's clock, for a request's age
     */
    public AuditRequests(CuratorFramework client, ZkPaths paths, String host, LedgerSource ledger, Clock clock) {
        this(client, paths, host, ledger, clock, AuditPage.MAX_PAGES);
    }

    /** As the public constructor, with at most {@code maxPages} pages per answer. */
    AuditRequests(CuratorFramework client, ZkPaths paths, String host, LedgerSource ledger, Clock clock, int maxPages) {
        this.maxPages = maxPages;
        this.client = client;
        this.paths = paths;
        this.host = host;
        this.ledger = ledger;
        this.clock = clock;
        this.watcher = new PersistentWatcher(client, paths.audits(), true);
        this.worker = IdleThreads.serial("audits-" + host); // no thread while no audit is asked
        this.answers = new QueuedOnce(worker::submit);
    }

    /** @param source this host's ledger from now on, or {@code null} for none */
    public void ledger(LedgerSource source) { this.ledger = source; }

    /** Starts watching; returns at once. */
    public void start() {
        watcher.getListenable().addListener(this::event);
        watcher.getResetListenable().addListener(this::sweep);
        watcher.start();
    }

    private void event(WatchedEvent e) {
        if (e.getType() != Watcher.Event.EventType.NodeCreated && e.getType() != Watcher.Event.EventType.NodeDataChanged) return;
        String path = e.getPath();
        if (path == null) return;
        ZKPaths.PathAndNode pn = ZKPaths.getPathAndNode(path);
        if (!pn.getNode().equals(host)) return;
        ZKPaths.PathAndNode parent = ZKPaths.getPathAndNode(pn.getPath());
        if (!parent.getPath().equals(paths.audits()) || ZkPaths.auditSeq(parent.getNode()) < 0) return;
        submit(parent.getNode());
    }

    /** Looks at every audit: after the watch is set, and after each reconnection. */
    private void sweep() {
        try {
            worker.submit(() -> {
                List<String> audits;
                try {
                    audits = client.getChildren().forPath(paths.audits());
                } catch (KeeperException.NoNodeException e) {
                    return;
                } catch (Exception e) {
                    log.warn("audits of host={}: cannot list {}: {}", host, paths.audits(), e.toString());
                    return;
                }
                for (String audit : audits) if (ZkPaths.auditSeq(audit) >= 0) submit(audit);
            });
        } catch (RejectedExecutionException closed) {
            // closing
        }
    }

    private void submit(String audit) {
        answers.ask(audit, () -> {
            try {
                answer(audit);
            } catch (Exception e) {
                log.warn("audit {} host={}: not answered: {}", audit, host, e.toString());
            }
        });
    }

    /** Answers one audit when this host's node is pending and the request is young enough. */
    void answer(String audit) throws Exception {
        String path = paths.audit(audit, host);
        ZkNode node = ZkNode.read(client, path);
        if (node == null) return; // not asked of this host, or deleted
        AuditAnswer pending = node.as(AuditAnswer.class);
        if (pending == null || pending.state() != AuditState.PENDING) return;
        AuditRequest request;
        try {
            request = Json.readOrNull(client.getData().forPath(paths.audit(audit)), AuditRequest.class);
        } catch (KeeperException.NoNodeException e) {
            return; // deleted meanwhile
        }
        if (request != null && request.requestedAt() != null
                && request.requestedAt().isBefore(clock.instant().minus(AuditAnswer.MAX_REQUEST_AGE))) {
            log.debug("audit {} host={}: requested at {}, over {} ago: left alone", audit, host, request.requestedAt(), AuditAnswer.MAX_REQUEST_AGE);
            return;
        }
        AuditAnswer answer;
        LedgerSource source = ledger;
        if (request == null || request.since() == null || request.until() == null) {
            answer = pending.failed("the request " + paths.audit(audit) + " names no span (since, until): the coordinator wrote it wrong");
        } else if (source == null) {
            answer = pending.failed("no ledger: the agent of " + host + " keeps no ledger (SPEC.md, \"Audit\")");
        } else {
            try {
                List<LedgerEntry> lines = source.slice(request.since(), request.until(),
                        request.modules() == null ? null : new HashSet<>(request.modules()));
                List<AuditPage> pages = AuditPage.split(lines, AuditPage.MAX_BYTES);
                if (pages.size() > maxPages) {
                    answer = pending.failed("the ledger of " + host + " holds " + lines.size() + " lines from " + request.since() + " to "
                            + request.until() + ", over the " + maxPages + " pages of " + AuditPage.MAX_BYTES / 1024
                            + " KiB an answer may have: audit a shorter span (--since, --until) or one module (--module)");
                } else {
                    for (AuditPage p : pages) writePage(paths.auditPage(audit, host, p.page()), Json.bytes(p));
                    answer = pending.answered(pages.size());
                }
            } catch (KeeperException.NoNodeException e) {
                return; // the audit was deleted meanwhile
            } catch (Exception e) {
                answer = pending.failed("the agent of " + host + " could not read its ledger: " + describe(e));
            }
        }
        try {
            client.setData().withVersion(node.version()).forPath(path, Json.bytes(answer));
        } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
            return; // answered or deleted meanwhile: never overwrite
        }
        log.info("audit {} host={} answered: {}", audit, host,
                answer.state() == AuditState.ANSWERED ? answer.pages() + " page(s)" : answer.error());
    }

    /** Writes one page; a page left by an earlier try of this answer (a lost connection) is overwritten. */
    private void writePage(String path, byte[] data) throws Exception {
        try {
            client.create().withMode(CreateMode.PERSISTENT).forPath(path, data);
        } catch (KeeperException.NodeExistsException e) {
            client.setData().forPath(path, data);
        }
    }

    private static String describe(Throwable e) {
        String m = e.getMessage();
        if (m == null || m.isBlank()) return e.getClass().getSimpleName();
        return m.lines().map(String::strip).filter(s -> !s.isEmpty()).findFirst().orElse(m);
    }

    /** Stops watching; an audit being answered is let finish (bounded). */
    @Override
    public void close() {
        try {
            watcher.close();
        } catch (RuntimeException e) {
            log.debug("audits watcher of host={} not closed cleanly: {}", host, e.toString());
        }
        worker.shutdown();
        try {
            if (!worker.awaitTermination(10, TimeUnit.SECONDS)) worker.shutdownNow();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
