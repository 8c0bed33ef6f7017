package io.mesh.coordinator;

import io.mesh.wire.Json;
import io.mesh.wire.MeshEvent;
import io.mesh.wire.PromText;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sends the outbox's events to the webhooks of {@code --notify-config}, from the leading coordinator only
 * (docs/decisions/0034-webhooks-from-an-outbox.md; SPEC.md, "The rest of the operator's stack").
 *
 * <ul>
 *   <li><b>Who.</b> Every coordinator joins one Curator {@link LeaderLatch} at {@code /mesh/leader}. Only its leader
 *       sends, and it asks again before each send ({@link #leading}): the latch's flag can lag a lost connection or a
 *       closed client (Curator's known double-leader windows), and an overlap costs at most a duplicate, which
 *       receivers dedupe on {@code id}.</li>
 *   <li><b>What.</b> A {@link CuratorCache} of {@code /mesh/events} (every coordinator keeps it; {@code mesh_notify_pending}).
 *       One queue per webhook and module, in the order of {@code time}, then {@code id}; a queue sends its head, one at a
 *       time, and waits after a failure by its own back-off, so a receiver that is down delays only its own queues.</li>
 *   <li><b>Delivered.</b> After a 2xx, {@code /mesh/notify/<webhook>/<id>}; before it sends a head, the leader looks for that
 *       node, so a new leader skips what the last one had recorded. A leader killed between a 2xx and that write sends
 *       it again: at least once.</li>
 *   <li><b>Deleted.</b> An event and its delivery nodes go, in one transaction, once every webhook that wants it has it (at
 *       once when none does), or {@link Timing#retention} (24 h) after its {@code time}: then it is logged, counted in
 *       {@code mesh_notify_dropped_total} for each webhook that did not get it, and given up.</li>
 * </ul>
 * Every coordinator should be given the same {@code --notify-config}: the leader's decides (docs/runbook.md).
 */
public final class Notifier implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Notifier.class);

    /**
     * The notifier's times.
     *
     * @param retention  how long after its {@code time} an event is given up (SPEC: 24 h)
     * @param firstRetry a queue's wait after its first failure; doubled after each further one
     * @param maxRetry   the longest wait
     * @param pumpEvery  how often the outbox is looked at without a change (a back-off ending, a leadership gained)
     */
    public record Timing(Duration retention, Duration firstRetry, Duration maxRetry, Duration pumpEvery) {
        /** 24 h, 1 s doubling up to 5 min, 500 ms. */
        public static final Timing DEFAULT = new Timing(Duration.ofHours(24), Duration.ofSeconds(1), Duration.ofMinutes(5), Duration.ofMillis(500));

        /** @return the wait after {@code failures} failures in a row (&gt;= 1) */
        Duration retryAfter(int failures) {
            long ms = firstRetry.toMillis() << Math.min(failures - 1, 20);
            return Duration.ofMillis(Math.min(ms, maxRetry.toMillis()));
        }
    }

    /** Where a queue is. */
    enum QueueState {
        /** Nothing in flight: its head is sent at the next look. */
        IDLE,
        /** Its head is being POSTed. */
        SENDING,
        /** Its head failed; it waits for its back-off. */
        BACKING_OFF
    }

    /** One webhook's queue of one module. Guarded by itself. */
    private static final class Queue {
        final Webhook webhook;
        final String module;
        QueueState state = QueueState.IDLE;
        int failures;
        long retryAtNanos;

        Queue(Webhook webhook, String module) {
            this.webhook = webhook;
            this.module = module;
        }

        synchronized boolean takeIfReady() {
            if (state == QueueState.SENDING) return false;
            if (state == QueueState.BACKING_OFF && System.nanoTime() - retryAtNanos < 0) return false;
            state = QueueState.SENDING;
            return true;
        }

        synchronized void sent() { state = QueueState.IDLE; failures = 0; }

        synchronized Duration failed(Timing timing) {
            failures++;
            Duration wait = timing.retryAfter(failures);
            retryAtNanos = System.nanoTime() + wait.toNanos();
            state = QueueState.BACKING_OFF;
            return wait;
        }

        synchronized void released() { if (state == QueueState.SENDING) state = failures == 0 ? QueueState.IDLE : QueueState.BACKING_OFF; }

        synchronized boolean sending() { return state == QueueState.SENDING; }

        synchronized int failuresSoFar() { return failures; }
    }

    /** An event of the outbox, with its id and where it is. */
    private record Stored(String id, String path, MeshEvent event, Instant time) {}

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final NotifyConfig config;
    private final Timing timing;
    private final Clock clock;
    private final LeaderLatch latch;
    private final CuratorCache cache;
    private final ScheduledExecutorService pump;
    private final ExecutorService senders;
    private final WebhookCall call = new WebhookCall();
    private final Map<String, Queue> queues = new ConcurrentHashMap<>();
    /** By webhook, the ids known to have a delivery node; forgotten when leadership is lost (a new term reads them again). */
    private final Map<String, Set<String>> delivered = new ConcurrentHashMap<>();
    /** Ids deleted by this leader that the cache may still show: never sent again. */
    private final Set<String> deleted = ConcurrentHashMap.newKeySet();
    private final Map<String, AtomicLong> sent = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> failures = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> dropped = new ConcurrentHashMap<>();
    private final AtomicBoolean pumpQueued = new AtomicBoolean();
    private volatile int pending;

    /**
     * @param client the coordinator's client (the admin identity: it deletes hosts' events)
     * @param paths  the layout
     * @param config the webhooks; {@link NotifyConfig#NONE} for none (the leader then deletes events as they come)
     * @param timing the notifier's times ({@link Timing#DEFAULT})
     * @param clock  the clock of the retention
     */
    public Notifier(CuratorFramework client, ZkPaths paths, NotifyConfig config, Timing timing, Clock clock) {
        this.client = client;
        this.paths = paths;
        this.config = config;
        this.timing = timing;
        this.clock = clock;
        // The latch node's data, as zkCli shows it: one line of JSON (SPEC.md, "ZooKeeper layout"), saying which
        // coordinator and which webhooks, so that coordinators given different --notify-config files can be spotted.
        Map<String, Object> me = new LinkedHashMap<>();
        me.put("coordinator", ManagementFactory.getRuntimeMXBean().getName());
        me.put("webhooks", config.webhooks().stream().map(Webhook::name).toList());
        this.latch = new LeaderLatch(client, paths.leader(), Json.text(me), LeaderLatch.CloseMode.SILENT);
        this.cache = CuratorCache.build(client, paths.events());
        this.pump = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "mesh-notify"));
        this.senders = Executors.newFixedThreadPool(4, r -> daemon(r, "mesh-notify-send"));
    }

    /** @param config the webhooks; default timing and the system clock */
    public Notifier(CuratorFramework client, ZkPaths paths, NotifyConfig config) {
        this(client, paths, config, Timing.DEFAULT, Clock.systemUTC());
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    /**
     * Starts the cache, joins the latch and looks at the outbox every {@link Timing#pumpEvery}.
     *
     * @throws Exception from the latch's start
     */
    public void start() throws Exception {
        cache.listenable().addListener((type, before, after) -> trigger());
        cache.start();
        latch.addListener(new LeaderLatchListener() {
            @Override
            public void isLeader() {
                log.info("this coordinator leads ({}): it sends the webhooks {}", paths.leader(), config.webhooks().stream().map(Webhook::name).toList());
                trigger();
            }

            @Override
            public void notLeader() {
                log.info("this coordinator no longer leads ({}): it stops sending webhooks", paths.leader());
                delivered.clear(); // the next term reads the delivery nodes again
                deleted.clear();
            }
        });
        latch.start();
        long every = timing.pumpEvery().toMillis();
        pump.scheduleWithFixedDelay(this::pumpQuietly, every, every, TimeUnit.MILLISECONDS);
    }

    /** @return true while this coordinator leads and its client is connected: asked before each send */
    public boolean leading() {
        return client.getState() == CuratorFrameworkState.STARTED && client.getZookeeperClient().isConnected() && latch.hasLeadership();
    }

    /** Looks at the outbox soon (coalesced). */
    private void trigger() {
        if (pumpQueued.compareAndSet(false, true)) {
            try {
                pump.execute(this::pumpQuietly);
            } catch (java.util.concurrent.RejectedExecutionException stopping) {
                pumpQueued.set(false);
            }
        }
    }

    private void pumpQuietly() {
        pumpQueued.set(false);
        try {
            pumpOnce();
        } catch (Exception e) {
            log.warn("webhooks: looking at the outbox failed, trying again in {} ms: {}", timing.pumpEvery().toMillis(), e.toString());
        }
    }

    /** The outbox, as the cache has it, in sending order (time, then id). */
    private List<Stored> outbox() {
        List<Stored> out = new ArrayList<>();
        for (ChildData d : cache.stream().toList()) {
            String id = paths.eventId(d.getPath());
            if (id == null) continue;
            MeshEvent e = Json.readOrNull(d.getData(), MeshEvent.class);
            Instant made = d.getStat() == null ? clock.instant() : Instant.ofEpochMilli(d.getStat().getCtime());
            if (e == null || e.type() == null) {
                e = MeshEvent.of(io.mesh.wire.EventType.UNKNOWN, made, null, null); // no webhook wants it: deleted
            }
            out.add(new Stored(id, d.getPath(), e.withId(id), e.time() == null ? made : e.time()));
        }
        out.sort(Comparator.comparing(Stored::time).thenComparing(Stored::id));
        return out;
    }

    private void pumpOnce() throws Exception {
        List<Stored> events = outbox();
        Set<String> present = new HashSet<>();
        for (Stored s : events) present.add(s.id());
        deleted.retainAll(present);
        pending = events.size() - deleted.size();
        if (!leading()) return;
        Instant now = clock.instant();
        Map<String, List<Stored>> byQueue = new LinkedHashMap<>();
        Map<String, Queue> wanted = new LinkedHashMap<>();
        for (Stored s : events) {
            if (deleted.contains(s.id())) continue;
            List<Webhook> wanting = config.webhooks().stream().filter(w -> w.wants(s.event().type())).toList();
            List<Webhook> missing = wanting.stream().filter(w -> !known(w, s.id())).toList();
            if (missing.isEmpty()) {
                delete(s, wanting);
                continue;
            }
            if (now.isAfter(s.time().plus(timing.retention()))) {
                for (Webhook w : missing) {
                    dropped.computeIfAbsent(w.name(), k -> new AtomicLong()).incrementAndGet();
                    log.warn("webhook {} gives up event {} ({} of {} on {} at {}): not delivered within {} of its time",
                            w.name(), s.id(), s.event().type(), s.event().module(), s.event().host(), s.time(),
                            io.mesh.manifest.Durations.format(timing.retention()));
                }
                delete(s, wanting);
                continue;
            }
            for (Webhook w : missing) {
                String key = w.name() + "\u0000" + s.event().module();
                byQueue.computeIfAbsent(key, k -> new ArrayList<>()).add(s);
                wanted.computeIfAbsent(key, k -> queues.computeIfAbsent(k, q -> new Queue(w, s.event().module())));
            }
        }
        queues.entrySet().removeIf(q -> !wanted.containsKey(q.getKey()) && !q.getValue().sending());
        for (Map.Entry<String, List<Stored>> e : byQueue.entrySet()) {
            Queue q = wanted.get(e.getKey());
            if (!q.takeIfReady()) continue;
            Stored head = null;
            try {
                for (Stored s : e.getValue()) {
                    if (recorded(q.webhook, s.id())) continue; // the last leader had it delivered
                    if (client.checkExists().forPath(s.path()) == null) { // deleted by the last leader; this cache lags
                        deleted.add(s.id());
                        continue;
                    }
                    head = s;
                    break;
                }
            } finally {
                if (head == null) q.released();
            }
            if (head == null) continue;
            Stored h = head;
            try {
                senders.execute(() -> send(q, h));
            } catch (java.util.concurrent.RejectedExecutionException stopping) {
                q.released();
            }
        }
    }

    /** @return true when this leader knows the webhook has the event (memory only) */
    private boolean known(Webhook w, String id) {
        Set<String> s = delivered.get(w.name());
        return s != null && s.contains(id);
    }

    /** @return true when the event's delivery node exists (read from ZooKeeper; remembered) */
    private boolean recorded(Webhook w, String id) throws Exception {
        if (known(w, id)) return true;
        if (client.checkExists().forPath(paths.delivered(w.name(), id)) == null) return false;
        remember(w, id);
        return true;
    }

    private void remember(Webhook w, String id) { delivered.computeIfAbsent(w.name(), k -> ConcurrentHashMap.newKeySet()).add(id); }

    /**
     * One send of a queue's head. It hands its queue on exactly once ({@link Queue#sent}, {@link Queue#failed} or
     * {@link Queue#released}) and touches it no more after: the next send of the queue may already own it.
     */
    private void send(Queue q, Stored s) {
        Webhook w = q.webhook;
        boolean handedOn = false;
        try {
            if (!leading()) return; // asked again at each send: the latch's flag may lag (class comment)
            WebhookCall.Answer a = call.post(w, s.event());
            if (!a.delivered()) {
                failures.computeIfAbsent(w.name(), k -> new AtomicLong()).incrementAndGet();
                Duration wait = timing.retryAfter(q.failuresSoFar() + 1);
                log.warn("webhook {} did not take event {} ({} of {}): {}; its queue of {} tries again in {} ms", w.name(), s.id(),
                        s.event().type(), s.event().module(), a.said(), q.module, wait.toMillis());
                handedOn = true;
                q.failed(timing);
                return;
            }
            sent.computeIfAbsent(w.name(), k -> new AtomicLong()).incrementAndGet();
            try {
                Map<String, Object> record = new LinkedHashMap<>();
                record.put("webhook", w.name());
                record.put("id", s.id());
                record.put("at", clock.instant().toString());
                record.put("answer", a.said());
                record(w, s, Json.bytes(record));
            } catch (KeeperException.NodeExistsException twice) {
                // another leader's send of the same event, recorded first
            } catch (KeeperException.NoNodeException gone) {
                // the event went meanwhile (another leader found it delivered everywhere): nothing to record
            } catch (Exception e) {
                log.warn("webhook {} took event {}, but its delivery was not recorded ({}): it will be sent again", w.name(),
                        s.id(), e.toString());
                handedOn = true;
                q.failed(timing); // not recorded: it is sent again (at least once)
                return;
            }
            remember(w, s.id()); // before the queue moves on: its next look skips this event
            log.info("webhook {} took event {} ({}{}{}): {}", w.name(), s.id(), s.event().type(),
                    s.event().module() == null ? "" : " of " + s.event().module(), s.event().host() == null ? "" : " on " + s.event().host(), a.said());
            handedOn = true;
            q.sent();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.warn("webhook {}: sending event {} failed: {}", w.name(), s.id(), e.toString());
            if (!handedOn) {
                handedOn = true;
                q.failed(timing);
            }
        } finally {
            if (!handedOn) q.released();
            trigger();
        }
    }

    /**
     * Writes {@code /mesh/notify/<webhook>/<id>} in one transaction with a check that the event is still there, so that no
     * delivery node outlives its event (they are deleted together).
     *
     * @throws KeeperException.NoNodeException when the event is gone
     * @throws KeeperException.NodeExistsException when it was recorded already
     */
    private void record(Webhook w, Stored s, byte[] data) throws Exception {
        String node = paths.delivered(w.name(), s.id());
        String parent = org.apache.curator.utils.ZKPaths.getPathAndNode(node).getPath();
        if (client.checkExists().forPath(parent) == null) {
            try {
                client.create().creatingParentContainersIfNeeded().withMode(CreateMode.CONTAINER).forPath(parent);
            } catch (KeeperException.NodeExistsException raced) {
                // made meanwhile
            }
        }
        try {
            client.transaction().forOperations(client.transactionOp().check().forPath(s.path()),
                    client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(node, data));
        } catch (KeeperException.NoNodeException e) {
            // the event, or the container parent ZooKeeper reaped between the two calls: look again
            if (client.checkExists().forPath(s.path()) == null) throw e;
            client.create().creatingParentContainersIfNeeded().withMode(CreateMode.PERSISTENT).forPath(node, data);
        }
    }

    /** Deletes an event and the delivery nodes this leader knows of, in one transaction. */
    private void delete(Stored s, List<Webhook> wanting) {
        List<String> nodes = new ArrayList<>();
        nodes.add(s.path());
        for (Webhook w : wanting) if (known(w, s.id())) nodes.add(paths.delivered(w.name(), s.id()));
        try {
            List<CuratorOp> ops = new ArrayList<>();
            for (String p : nodes) ops.add(client.transactionOp().delete().forPath(p));
            client.transaction().forOperations(ops);
        } catch (KeeperException.NoNodeException gone) {
            for (String p : nodes) {
                try {
                    client.delete().forPath(p);
                } catch (KeeperException.NoNodeException alsoGone) {
                    // deleted meanwhile (another leader, an operator)
                } catch (Exception e) {
                    log.warn("webhooks: cannot delete {}: {}", p, e.toString());
                    return;
                }
            }
        } catch (Exception e) {
            log.warn("webhooks: cannot delete event {}: {}; trying again later", s.id(), e.toString());
            return;
        }
        deleted.add(s.id());
        for (Webhook w : wanting) {
            Set<String> d = delivered.get(w.name());
            if (d != null) d.remove(s.id());
        }
    }

    /** @return events in the outbox, as this coordinator's cache shows them */
    public int pending() { return pending; }

    /** @return events given up for that webhook since this coordinator started */
    public long droppedCount(String webhook) { AtomicLong a = dropped.get(webhook); return a == null ? 0 : a.get(); }

    /** @return Prometheus text of the webhooks: pending, sent, failed and dropped, and whether this coordinator leads */
    public String metrics() {
        PromText out = new PromText();
        out.family("mesh_notify_pending", "gauge", "Events in the webhooks' outbox (/mesh/events), not yet delivered to every webhook that wants them.");
        out.sample("mesh_notify_pending", "", pending);
        out.family("mesh_notify_leader", "gauge", "1 when this coordinator leads and sends the webhooks.");
        out.sample("mesh_notify_leader", "", leading() ? 1 : 0);
        counter(out, "mesh_notify_sent_total", "Events a webhook answered 2xx, sent by this coordinator.", sent);
        counter(out, "mesh_notify_failures_total", "Sends a webhook did not answer 2xx (each is retried with back-off).", failures);
        counter(out, "mesh_notify_dropped_total", "Events given up, not delivered to that webhook within 24 h of their time.", dropped);
        return out.toString();
    }

    private void counter(PromText out, String name, String help, Map<String, AtomicLong> by) {
        out.family(name, "counter", help);
        Map<String, Long> all = new TreeMap<>();
        for (Webhook w : config.webhooks()) all.put(w.name(), 0L);
        by.forEach((k, v) -> all.put(k, v.get()));
        all.forEach((k, v) -> out.sample(name, PromText.label("webhook", k), v));
    }

    /** Leaves the latch (another coordinator takes over), stops the cache and the sends in flight. */
    @Override
    public void close() {
        pump.shutdownNow();
        senders.shutdownNow();
        try {
            latch.close();
        } catch (Exception e) {
            log.debug("closing the leader latch: {}", e.toString());
        }
        cache.close();
    }
}
