package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mesh.curator.LockNodes;
import io.mesh.manifest.ManifestError;
import io.mesh.manifest.ManifestException;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleName;
import io.mesh.manifest.ModuleSpec;
import io.mesh.manifest.Printable;
import io.mesh.manifest.ScheduleSpec;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HistoryRecord;
import io.mesh.wire.Json;
import io.mesh.wire.PushAction;
import io.mesh.wire.PushRecord;
import io.mesh.wire.RolloutHostRecord;
import io.mesh.wire.RolloutRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Validates a manifest and writes it as one push: the push node, every module's desired node and every module's
 * history node (with the deletes that keep the newest {@value HistoryRecord#KEPT}) in ONE ZooKeeper transaction, with
 * a {@code setData} on {@code {root}/pushes} at the version just read, retried when a racing writer wins, at least
 * {@link #MAX_ATTEMPTS} times and for at least {@link #RACE_BUDGET_MS} (SPEC.md, "Coordinator HTTP API" and "History
 * and rollback"; docs/design.md, "Push ids", "Docker names" and "History, rollback and delete"). A rollback ({@link #rollback}) and a delete ({@link #delete})
 * are pushes written the same way (docs/decisions/0011-history-rollback-delete.md). The push node is a
 * {@link PushRecord} plus {@code hosts} and, for a module of every host ({@code ["*"]}), {@code agents}: the hosts with an
 * agent node then (docs/design.md, "ZooKeeper layout"). Thread-safe.
 */
public final class PushWriter {
    /** How many times at least a transaction that lost a race is read again and retried. */
    public static final int MAX_ATTEMPTS = 10;
    /**
     * How long at least, in milliseconds, a push keeps retrying races it lost: on a busy machine one writer among a few
     * could lose ten in a row to the others' quicker attempts (PushApiTest.racingWritersNeverShareAnId, 16 of 20 pushes
     * written); the others are done within this, and then it wins. Well inside the HTTP read timeout (30 s).
     */
    public static final long RACE_BUDGET_MS = 5_000;
    /** Field name used in errors about the revision header. */
    public static final String REVISION_FIELD = "X-Mesh-Revision";
    /** Field name used in errors about the source header. */
    public static final String SOURCE_FIELD = "X-Mesh-Source";
    /** Field of a rollback's body naming the push to roll back to. */
    public static final String TO_FIELD = "to";
    /** Revision of a delete that names none. */
    public static final String DELETE_REVISION = "deleted";
    /** Longest {@code X-Mesh-Source} kept. */
    public static final int MAX_SOURCE = 200;
    /**
     * Most bytes of data and paths one push's transaction may carry: ZooKeeper refuses a request over its
     * {@code jute.maxbuffer} (1 MiB by default) by closing the connection, which a client sees as an outage; 64 KiB are
     * left for the request's own framing. Each module's spec is written twice (desired and history node).
     */
    public static final int MAX_TRANSACTION_BYTES = (1 << 20) - (64 << 10);
    /**
     * Bytes counted for each operation of a push's transaction besides its data and path: its header and its ACL (up to
     * three digest entries, about 60 bytes each). A rollout adds two operations per host (its child's delete and
     * create), so these count at fleet size: a 6,000-host rollout passed the check without them and was over the limit.
     */
    static final int OP_OVERHEAD_BYTES = 256;

    private static final Logger LOG = LoggerFactory.getLogger(PushWriter.class);

    private final CuratorFramework client;
    private final ZkPaths paths;
    private final Clock clock;
    private final ManifestParser parser = new ManifestParser();
    /** Run between an attempt's reads and its transaction; tests use it to let another coordinator win the race. */
    private volatile Runnable beforeTransaction;

    /**
     * What was written.
     *
     * @param push     the push node name, such as {@code push-0000000002}
     * @param revision the revision written into every desired node
     * @param modules  module names, in document order
     * @param hosts    every host named by those modules, sorted ({@code *} when a module runs everywhere)
     */
    public record Result(String push, String revision, List<String> modules, List<String> hosts, PushAction action,
                         String rollbackOf) {
        /** @return the result of a manifest pushed */
        public Result(String push, String revision, List<String> modules, List<String> hosts) {
            this(push, revision, modules, hosts, PushAction.PUSH, null);
        }
    }

    /**
     * Who pushed and from where: a push's {@code by} and {@code source} ({@link HistoryRecord}).
     *
     * @param by     {@link HistoryRecord#BY_WEBHOOK}, {@link HistoryRecord#BY_TOKEN} or {@link HistoryRecord#BY_ANONYMOUS}
     *               (named tokens: the token's name)
     * @param source the {@code X-Mesh-Source} header, or {@code null}
     */
    public record Origin(String by, String source) {
        /** A push with no credentials asked and no source. */
        public static final Origin ANONYMOUS = new Origin(HistoryRecord.BY_ANONYMOUS, null);
    }

    /** One module of a push: its new spec, or {@code null} for a delete, whose tombstone names {@code hosts}. */
    private record Change(ModuleSpec spec, String module, List<String> hosts, Stat desired) {}

    /** The changes of one attempt, read afresh after the read of {@code /pushes} whose version the transaction sets. */
    @FunctionalInterface
    private interface Plan {
        Planned plan() throws Exception;
    }

    /** What one attempt writes. */
    private record Planned(List<Change> changes, String revision, PushAction action, String rollbackOf) {}

    /** The push's transaction would be over {@link #MAX_TRANSACTION_BYTES}; nothing was written. */
    public static final class TooLargeException extends Exception {
        /** The transaction's size in bytes. */
        public final long bytes;

        /**
         * @param bytes   the transaction's size
         * @param message what to do
         */
        public TooLargeException(long bytes, String message) {
            super(message);
            this.bytes = bytes;
        }
    }

    /** The race with other writers was lost {@link #MAX_ATTEMPTS} times in a row; nothing of this push was written. */
    public static final class ConflictException extends Exception {
        /** @param message what happened */
        public ConflictException(String message) { super(message); }
    }

    /**
     * @param client a started Curator client
     * @param paths  the layout under the configured root
     * @param clock  source of {@code receivedAt}
     */
    public PushWriter(CuratorFramework client, ZkPaths paths, Clock clock) {
        this.client = client;
        this.paths = paths;
        this.clock = clock;
    }

    /**
     * For tests: runs {@code hook} in every attempt after its reads and before its transaction, as if another
     * coordinator were scheduled there.
     *
     * @param hook what to run, or {@code null} for nothing
     */
    void beforeTransaction(Runnable hook) { this.beforeTransaction = hook; }

    /** Checks each push's fields against its hosts' agents' versions, or nothing when {@code null}. */
    private volatile AgentFieldCheck agentFields;

    /**
     * @param check the check of a push's fields against the agents' versions (docs/decisions/0041-upgrades.md)
     * @return this
     */
    PushWriter checkingAgents(AgentFieldCheck check) {
        this.agentFields = check;
        return this;
    }

    /**
     * Validates the manifest and, only when it is entirely valid, writes it.
     *
     * @param text     the manifest YAML, one module per document
     * @param revision the revision ({@code X-Mesh-Revision}), or {@code null}/blank for {@link #contentRevision(byte[])}
     * @return what was written
     * @throws ManifestException when the manifest or the revision is invalid, or a container's Docker name is taken
     *                           by another module already desired: nothing was written. A revision error has
     *                           document 0 and field {@value #REVISION_FIELD}
     * @throws ConflictException when other writers won every attempt: nothing was written
     * @throws Exception         ZooKeeper errors (connection loss etc.): the transaction either committed whole or not
     */
    public Result write(String text, String revision) throws Exception {
        return write(text, revision, Origin.ANONYMOUS);
    }

    /**
     * Validates the manifest and, only when it is entirely valid, writes it with its origin.
     *
     * @param text     the manifest YAML, one module per document
     * @param revision the revision ({@code X-Mesh-Revision}), or {@code null}/blank for {@link #contentRevision(byte[])}
     * @param origin   who pushed and the {@code X-Mesh-Source} header as received
     * @return what was written
     * @throws ManifestException as {@link #write(String, String)}; a source error has document 0 and field
     *                           {@value #SOURCE_FIELD}
     * @throws ConflictException when other writers won every attempt: nothing was written
     * @throws Exception         ZooKeeper errors
     */
    public Result write(String text, String revision, Origin origin) throws Exception {
        return write(text, revision, origin, false);
    }

    /**
     * As {@link #write(String, String, Origin)}; unless {@code force}, a field some targeted host's agent does not know
     * is refused too ({@link AgentFieldCheck}), naming the hosts.
     *
     * @param force send fields the agents do not know anyway ({@code mesh push --force})
     */
    public Result write(String text, String revision, Origin origin, boolean force) throws Exception {
        List<ManifestError> errors = new ArrayList<>();
        Origin o = checkOrigin(origin, errors);
        Validated v = parse(text, revision, errors);
        List<ModuleSpec> modules = v.modules();
        AgentFieldCheck check = agentFields;
        if (!force && check != null) {
            List<ManifestError> unknown = check.refused(modules);
            if (!unknown.isEmpty()) throw new ManifestException(unknown);
        }
        String r = v.revision();
        List<Change> changes = new ArrayList<>();
        for (ModuleSpec m : modules) changes.add(new Change(m, m.module(), m.hosts(), null));
        return commit(() -> {
            // Read after the version of /pushes that the transaction sets: a push that another coordinator commits
            // after this read fails this transaction (and the next attempt reads its desired nodes again); one that
            // committed before it is in what this reads. So two racing pushes never both pass this check.
            List<ManifestError> taken = dockerNamesTaken(modules);
            taken.addAll(slotKeysTaken(modules));
            if (!taken.isEmpty()) throw new ManifestException(taken);
            List<Change> withStats = new ArrayList<>();
            for (Change c : changes) withStats.add(new Change(c.spec(), c.module(), c.hosts(), client.checkExists().forPath(paths.desired(c.module()))));
            return new Planned(withStats, r, PushAction.PUSH, null);
        }, o);
    }

    /**
     * Pushes again the spec a module had at an earlier push of its history: an ordinary push (it meets windows like
     * any push) whose record carries {@code rollbackOf} and whose revision is that push's.
     *
     * @param module the module
     * @param to     the push to roll back to, or {@code null} for the newest one of the history with a spec and
     *               another revision than the current one (after a delete: the spec the module had before it)
     * @param origin who asks and from where
     * @return what was written ({@link Result#rollbackOf()} names the push rolled back to)
     * @throws Refusal           404 for a module without desired node and history, or a {@code to} not in its history;
     *                           400 for a {@code to} that is not a push id, is a delete or is the current push, or
     *                           when there is nothing earlier to roll back to: nothing was written
     * @throws ManifestException when the spec rolled back to is no longer valid or its Docker names are taken now
     * @throws ConflictException when other writers won every attempt
     * @throws Exception         ZooKeeper errors
     */
    public Result rollback(String module, String to, Origin origin) throws Exception {
        checkModule(module);
        if (to != null && !ZkPaths.PUSH_NAME.matcher(to).matches()) {
            throw Refusal.badRequest(TO_FIELD, TO_FIELD + ": '" + Printable.cut(to) + "' is not a push id: give one such as push-0000000002"
                    + " (mesh history " + module + " lists the pushes of the module), or leave it out to roll back to the revision before the current one");
        }
        List<ManifestError> errors = new ArrayList<>();
        Origin o = checkOrigin(origin, errors);
        if (!errors.isEmpty()) throw new ManifestException(errors);
        return commit(() -> {
            Stat stat = new Stat();
            DesiredRecord current = desiredOrNull(module, stat);
            List<HistoryRecord> history = history(module);
            if (current == null && history.isEmpty()) throw noModule(module);
            HistoryRecord target = rollbackTarget(module, to, current, history);
            ModuleSpec spec;
            try {
                spec = parser.parseJson(Json.text(target.spec()));
            } catch (ManifestException e) {
                throw Refusal.badRequest(TO_FIELD, TO_FIELD + ": the spec of " + target.push() + " (revision " + target.revision()
                        + ") is no longer valid: " + e.getMessage() + "; roll back to another push, or push a fixed manifest");
            }
            List<ManifestError> taken = dockerNamesTaken(List.of(spec));
            if (!taken.isEmpty()) throw new ManifestException(taken);
            return new Planned(List.of(new Change(spec, module, spec.hosts(), current == null ? null : stat)), target.revision(),
                    PushAction.ROLLBACK, target.push());
        }, o);
    }

    /**
     * Deletes a module: its desired node becomes a tombstone ({@link DesiredRecord#tombstoneOf}) naming the hosts the
     * module named, so every agent removes its containers (windows and held containers are waited for as by any
     * apply), and the delete is recorded like a push: push record and history node, in one transaction.
     *
     * @param module   the module
     * @param revision the revision to record ({@code X-Mesh-Revision}), or {@code null} for {@value #DELETE_REVISION}
     * @param origin   who asks and from where
     * @return what was written: {@link Result#hosts()} are the hosts the module named
     * @throws Refusal           404 when the module has no desired node or is deleted already
     * @throws ManifestException when the revision or source header is invalid
     * @throws ConflictException when other writers won every attempt
     * @throws Exception         ZooKeeper errors
     */
    public Result delete(String module, String revision, Origin origin) throws Exception {
        checkModule(module);
        List<ManifestError> errors = new ArrayList<>();
        String rev = revision == null || revision.isBlank() ? DELETE_REVISION : revision.strip();
        String bad = Revision.error(rev);
        if (bad != null) errors.add(new ManifestError(0, REVISION_FIELD, bad));
        Origin o = checkOrigin(origin, errors);
        if (!errors.isEmpty()) throw new ManifestException(errors);
        return commit(() -> {
            Stat stat = new Stat();
            DesiredRecord current = desiredOrNull(module, stat);
            if (current == null) throw noModule(module);
            if (current.tombstone()) {
                throw Refusal.notFound("module", "module " + module + " is deleted already (by " + current.push()
                        + "): nothing to delete; mesh history " + module + " shows its pushes, mesh rollback " + module + " brings it back");
            }
            return new Planned(List.of(new Change(null, module, current.spec().hosts(), stat)), rev, PushAction.DELETE, null);
        }, o);
    }

    /**
     * @param module module name
     * @return the module's history, newest first ({@link HistoryRecord}s whose node cannot be read are skipped)
     * @throws Exception ZooKeeper errors
     */
    public List<HistoryRecord> history(String module) throws Exception {
        List<String> nodes = new ArrayList<>(historyNodes(module));
        nodes.sort(Comparator.comparingLong(ZkPaths::historySeq).reversed());
        List<HistoryRecord> out = new ArrayList<>();
        for (String n : nodes) {
            HistoryRecord r = ZkReads.read(client, paths.history(module, n), HistoryRecord.class);
            if (r != null) out.add(r);
        }
        return out;
    }

    /** @return the history node names of a module (rev-...), in no order; empty when it has none */
    private List<String> historyNodes(String module) throws Exception {
        return ZkReads.children(client, paths.history(module)).stream().filter(n -> ZkPaths.historySeq(n) >= 0).toList();
    }

    /** The push a rollback pushes again: see {@link #rollback}. */
    private static HistoryRecord rollbackTarget(String module, String to, DesiredRecord current, List<HistoryRecord> history)
            throws Refusal {
        String currentPush = current == null ? null : current.push();
        if (to != null) {
            HistoryRecord h = history.stream().filter(r -> to.equals(r.push())).findFirst().orElse(null);
            if (h == null) {
                throw Refusal.notFound(TO_FIELD, TO_FIELD + ": " + to + " is not in the history of module " + module
                        + " (it did not push the module, or is older than the newest " + HistoryRecord.KEPT + " kept): mesh history "
                        + module + " lists the pushes you can roll back to");
            }
            if (h.spec() == null) {
                throw Refusal.badRequest(TO_FIELD, TO_FIELD + ": " + to + " deleted module " + module
                        + ": roll back to a push that wrote its spec (mesh history " + module + ")");
            }
            if (to.equals(currentPush)) {
                throw Refusal.badRequest(TO_FIELD, TO_FIELD + ": " + to + " is the current push of module " + module
                        + ": nothing to roll back; give an older push (mesh history " + module + ")");
            }
            return h;
        }
        boolean deleted = current == null || current.tombstone();
        for (HistoryRecord h : history) {
            if (h.spec() == null || h.push().equals(currentPush)) continue;
            if (deleted || !h.revision().equals(current.revision())) return h;
        }
        throw Refusal.badRequest(TO_FIELD, "module " + module + " has no revision before " + (current == null ? "its current one" : current.revision())
                + " in its history (the newest " + HistoryRecord.KEPT + " pushes are kept): name a push with " + TO_FIELD
                + " (mesh rollback " + module + " --to PUSH; mesh history " + module + " lists them), or push the manifest you want");
    }

    private static Refusal noModule(String module) {
        return Refusal.notFound("module", "no module " + module + " has been pushed (no desired node, no history): "
                + "check the name (mesh status lists the modules)");
    }

    private static void checkModule(String module) throws Refusal {
        if (!ModuleName.matches(module)) {
            throw Refusal.notFound("module", "no module '" + Printable.cut(module == null ? "" : module)
                    + "': module names match " + ModuleName.REGEX);
        }
    }


    /** @return the desired node of a module (a tombstone's spec {@code null}), its stat in {@code stat}; {@code null} when none */
    private DesiredRecord desiredOrNull(String module, Stat stat) throws Exception {
        byte[] data;
        try {
            data = client.getData().storingStatIn(stat).forPath(paths.desired(module));
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
        DesiredRecord d = Json.readOrNull(data, DesiredRecord.class);
        if (d == null || !d.complete()) {
            // a node edited by hand: the operator's to mend, not the coordinator's failure (a 409 naming the fix, not a 500)
            throw Refusal.conflict("module", paths.desired(module) + " does not hold a desired record: push the module again to replace it");
        }
        return d;
    }

    /** @return the origin with its source checked (length, printable); errors added to {@code errors} */
    private static Origin checkOrigin(Origin origin, List<ManifestError> errors) {
        Origin o = origin == null ? Origin.ANONYMOUS : origin;
        String src = o.source() == null || o.source().isBlank() ? null : o.source().strip();
        if (src != null && (src.length() > MAX_SOURCE || src.codePoints().anyMatch(cp -> cp < 0x20 || cp == 0x7f))) {
            errors.add(new ManifestError(0, SOURCE_FIELD, "'" + Printable.cut(src) + "' is not a source: give at most " + MAX_SOURCE
                    + " printable characters, such as a commit id or a pipeline URL"));
        }
        return new Origin(o.by(), src);
    }

    /**
     * The revision of a push that names none.
     *
     * @param body the manifest bytes as received
     * @return {@code sha-} and the first 12 hex digits of the body's SHA-256
     */
    public static String contentRevision(byte[] body) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(body);
            return "sha-" + HexFormat.of().formatHex(d).substring(0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }

    private Result commit(Plan plan, Origin origin) throws Exception {
        ensureParents();
        long giveUpAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RACE_BUDGET_MS);
        for (int attempt = 1; ; attempt++) {
            Stat stat = new Stat();
            client.getData().storingStatIn(stat).forPath(paths.pushes());
            Planned p = plan.plan();
            List<String> names = p.changes().stream().map(Change::module).toList();
            Map<String, List<String>> hostsByModule = new LinkedHashMap<>();
            TreeSet<String> allHosts = new TreeSet<>();
            for (Change c : p.changes()) {
                hostsByModule.put(c.module(), c.hosts());
                allHosts.addAll(c.hosts());
            }
            String push = ZkPaths.pushName(stat.getCversion());
            Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
            // hosts: ["*"] targets every host with an agent now, and any that registers later: the ones now are recorded,
            // so that one whose agent goes before it answers is still waited for (docs/design.md, "Push status").
            List<String> agents = allHosts.contains(ModuleSpec.ALL_HOSTS) ? ZkReads.children(client, paths.agents()).stream().sorted().toList() : null;
            byte[] pushData = pushData(new PushRecord(push, p.revision(), names, now, p.action(), p.rollbackOf(), origin.by(), origin.source()),
                    hostsByModule, agents);
            Map<String, Object> last = new LinkedHashMap<>();
            last.put("last", push);
            last.put("revision", p.revision());
            last.put("receivedAt", now);

            List<CuratorOp> ops = new ArrayList<>();
            long bytes = pushData.length + paths.push(push).length();
            ops.add(client.transactionOp().setData().withVersion(stat.getVersion()).forPath(paths.pushes(), Json.bytes(last)));
            ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths.push(push), pushData));
            for (Change c : p.changes()) {
                String path = paths.desired(c.module());
                DesiredRecord record = c.spec() == null
                        ? DesiredRecord.tombstoneOf(c.module(), p.revision(), push, new DesiredRecord.Deleted(c.hosts(), now, origin.by()))
                        : new DesiredRecord(c.module(), p.revision(), push, c.spec());
                byte[] data = Json.bytes(record);
                HistoryRecord h = historyRecord(c, p, push, now, origin);
                bytes += data.length + path.length() + Json.bytes(h).length + paths.historyPrefix(c.module()).length() + 10;
                ops.add(c.desired() == null
                        ? client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(path, data)
                        : client.transactionOp().setData().withVersion(c.desired().getVersion()).forPath(path, data));
                ops.addAll(historyOps(c, h));
                RolloutRecord rollout = rolloutOf(c, record, now, origin);
                if (rollout != null) {
                    bytes += Json.bytes(rollout).length + paths.rollout(c.module()).length();
                    for (RolloutHostRecord child : rollout.startChildren()) {
                        bytes += Json.bytes(child).length + paths.rolloutHost(c.module(), child.host()).length();
                    }
                }
                ops.addAll(rolloutOps(c, rollout));
            }
            bytes += (long) ops.size() * OP_OVERHEAD_BYTES;
            if (bytes > MAX_TRANSACTION_BYTES) {
                throw new TooLargeException(bytes, "this push is " + bytes + " bytes as one ZooKeeper transaction (each module's spec is written"
                        + " twice: its desired node and its history node; three times with a rollout, whose node keeps the spec it replaces, and a rollout writes a node per host, about 400 bytes each: roll out to fewer hosts per push), over the " + MAX_TRANSACTION_BYTES + " bytes ZooKeeper takes in one"
                        + " request: split it into several pushes of a few modules each (a push changes only the modules it names)");
            }
            if (attempt == 1) {
                // Before the desired nodes: an agent that sees its module finds its lock node (SPEC "Identities":
                // only the coordinators may make one host's lock node, LockNodes).
                Map<String, List<String>> pushed = new LinkedHashMap<>();
                for (Change c : p.changes()) if (c.spec() != null) pushed.put(c.module(), c.hosts());
                LockNodes.ensureForPush(client, paths, pushed);
            }
            Runnable hook = beforeTransaction;
            if (hook != null) hook.run();
            Result result = new Result(push, p.revision(), names, List.copyOf(allHosts), p.action(), p.rollbackOf());
            try {
                client.transaction().forOperations(ops);
                return result;
            } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException | KeeperException.NoNodeException
                     | KeeperException.NotEmptyException e) {
                // Curator retries a transaction after a connection loss: the first try may have committed.
                if (Arrays.equals(dataOrNull(paths.push(push)), pushData)) return result;
                if (attempt >= MAX_ATTEMPTS && System.nanoTime() - giveUpAt >= 0) {
                    throw new ConflictException("another writer changed " + paths.pushes() + ", " + paths.desired() + " or "
                            + paths.history() + " during each of " + attempt + " attempts over " + RACE_BUDGET_MS / 1000
                            + " s; nothing was written: push again");
                }
                LOG.info("push transaction lost a race ({}), attempt {}: reading again", e.code(), attempt);
                Thread.sleep(ThreadLocalRandom.current().nextLong(5, 20L * Math.min(attempt, MAX_ATTEMPTS)));
            }
        }
    }

    /**
     * The rollout nodes of one module in the push's transaction (decision 13): a push whose spec has {@code rollout}
     * starts a rollout ({@link RolloutRecord#start}: its targets, for {@code ["*"]} the hosts with an agent now, and the
     * desired state it replaces) with one {@code waiting} child per host, which that host alone may write
     * ({@link io.mesh.curator.MeshAcls}); any other push of the module deletes an older rollout. An older rollout's
     * children are deleted and the new ones created, its node overwritten: at any version, since a push replaces whatever rollout ran, so
     * the agents' moves of the older one must not make a busy rollout refuse the push that fixes it (a move that races
     * it writes a child of the older push, which the new rollout counts as waiting until its host moves again).
     *
     * @param rollout the rollout to start ({@link #rolloutOf}), {@code null} for none
     * @return the operations, none when there is nothing to write
     */
    private List<CuratorOp> rolloutOps(Change c, RolloutRecord rollout) throws Exception {
        String path = paths.rollout(c.module());
        List<CuratorOp> ops = new ArrayList<>();
        List<String> old;
        try {
            old = client.getChildren().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            old = null;
        }
        if (old != null) {
            for (String h : old) ops.add(client.transactionOp().delete().forPath(ZKPaths.makePath(path, h)));
        }
        if (rollout == null) {
            if (old != null) ops.add(client.transactionOp().delete().forPath(path));
            return ops;
        }
        // An existing rollout node is overwritten, not created again: its version keeps growing, so an agent's move
        // read before this push fails its check of it (a node created again would start at version 0 once more).
        ops.add(old == null ? client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(path, Json.bytes(rollout))
                : client.transactionOp().setData().forPath(path, Json.bytes(rollout)));
        for (RolloutHostRecord h : rollout.startChildren()) {
            ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths.rolloutHost(c.module(), h.host()), Json.bytes(h)));
        }
        return ops;
    }

    /** @return the rollout a push of {@code record} starts, or {@code null} for a spec without {@code rollout} */
    private RolloutRecord rolloutOf(Change c, DesiredRecord record, Instant now, Origin origin) throws Exception {
        if (c.spec() == null || c.spec().rollout() == null) return null;
        List<String> online = ZkReads.children(client, paths.agents());
        List<String> targets = c.spec().hosts().contains(ModuleSpec.ALL_HOSTS) ? online : c.spec().hosts();
        DesiredRecord previous = c.desired() == null ? null : desiredOrNull(c.module(), new Stat());
        return RolloutRecord.start(record, targets, Set.copyOf(online), previous, origin.by(), now);
    }

    private static HistoryRecord historyRecord(Change c, Planned p, String push, Instant now, Origin origin) {
        return switch (p.action()) {
            case DELETE -> HistoryRecord.deleted(c.module(), p.revision(), push, now, origin.by(), origin.source());
            case ROLLBACK -> HistoryRecord.rolledBack(c.spec(), p.revision(), push, now, origin.by(), origin.source(), p.rollbackOf());
            default -> HistoryRecord.pushed(c.spec(), p.revision(), push, now, origin.by(), origin.source());
        };
    }

    /**
     * The history operations of one module in the push's transaction: its parent when missing, the new node
     * (persistent sequential), and the deletes of the oldest nodes beyond the newest {@value HistoryRecord#KEPT}, read
     * now. A node another writer deleted or a parent it made meanwhile fails the transaction, which is then retried
     * like any lost race.
     */
    private List<CuratorOp> historyOps(Change c, HistoryRecord record) throws Exception {
        List<CuratorOp> ops = new ArrayList<>();
        String parent = paths.history(c.module());
        List<String> nodes;
        try {
            nodes = new ArrayList<>(client.getChildren().forPath(parent).stream().filter(n -> ZkPaths.historySeq(n) >= 0).toList());
        } catch (KeeperException.NoNodeException e) {
            ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(parent, "{}".getBytes(StandardCharsets.UTF_8)));
            nodes = new ArrayList<>();
        }
        ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT_SEQUENTIAL).forPath(paths.historyPrefix(c.module()), Json.bytes(record)));
        nodes.sort(Comparator.comparingLong(ZkPaths::historySeq));
        for (int i = 0; i < nodes.size() - (HistoryRecord.KEPT - 1); i++) {
            ops.add(client.transactionOp().delete().forPath(paths.history(c.module(), nodes.get(i))));
        }
        return ops;
    }

    /**
     * Docker names are unique across modules (failure model row 16; the rule and its message are
     * {@link ManifestParser#dockerNameTaken}, which also checks the documents of one push against each other): a
     * container of this push whose Docker name is a container's of another module desired now, one this push does not
     * replace, is refused. A desired node whose data cannot be read is skipped (its agents report it failed).
     *
     * @param modules the modules of this push, in document order (module {@code i} is document {@code i + 1})
     * @return one error per container of this push whose Docker name is taken; empty when none is
     */
    private List<ManifestError> dockerNamesTaken(List<ModuleSpec> modules) throws Exception {
        Set<String> pushed = new HashSet<>();
        for (ModuleSpec m : modules) pushed.add(m.module());
        Map<String, ManifestParser.DockerNameOwner> owners = new HashMap<>();
        for (String other : ZkReads.children(client, paths.desired())) {
            if (pushed.contains(other)) continue;
            String path = paths.desired(other);
            byte[] data = dataOrNull(path);
            if (data == null) continue;
            JsonNode node;
            try {
                node = Json.MAPPER.readTree(data);
            } catch (IOException e) {
                LOG.warn("{} is not JSON, its Docker names are not checked against this push: {}", path, e.getMessage());
                continue;
            }
            if (node == null) continue;
            String where = "desired at " + path + ", push " + node.path("push").asText("?");
            for (Iterator<String> c = node.path("spec").path("containers").fieldNames(); c.hasNext(); ) {
                String name = c.next();
                owners.putIfAbsent(ModuleSpec.dockerName(other, name), new ManifestParser.DockerNameOwner(other, name, where));
            }
        }
        List<ManifestError> errors = new ArrayList<>();
        for (int i = 0; i < modules.size(); i++) {
            ModuleSpec m = modules.get(i);
            for (String c : m.containers().keySet()) {
                ManifestParser.DockerNameOwner owner = owners.get(m.dockerName(c));
                if (owner != null) errors.add(ManifestParser.dockerNameTaken(i + 1, m.module(), c, owner));
            }
        }
        return errors;
    }

    /**
     * A schedule's own slot, {@code /mesh/slots/window-<module>-<schedule>} (SPEC's key), must be its alone: names
     * joined by '-' can meet (module {@code a-b} schedule {@code c}, module {@code a} schedule {@code b-c}), and two
     * schedules sharing a slot would throttle each other (a review found it). Refused at push time, against the other
     * modules desired now and the documents of this push.
     *
     * @param modules the modules of this push, in document order
     * @return one error per schedule whose slot is another schedule's
     */
    private List<ManifestError> slotKeysTaken(List<ModuleSpec> modules) throws Exception {
        Set<String> pushed = new HashSet<>();
        for (ModuleSpec m : modules) pushed.add(m.module());
        Map<String, String> owners = new HashMap<>(); // slot key -> "schedule 's' of module 'm'"
        for (String other : ZkReads.children(client, paths.desired())) {
            if (pushed.contains(other)) continue;
            DesiredRecord d;
            try {
                d = ZkReads.read(client, paths.desired(other), DesiredRecord.class);
            } catch (RuntimeException e) {
                continue; // unreadable: its agents report it
            }
            if (d == null || d.spec() == null) continue;
            for (Map.Entry<String, ScheduleSpec> s : d.spec().schedules().entrySet()) {
                if (s.getValue().maxConcurrent() != null && s.getValue().group() == null) {
                    owners.putIfAbsent(paths.windowSlots(other, s.getKey()), "schedule '" + s.getKey() + "' of module '" + other + "' (desired now)");
                }
            }
        }
        List<ManifestError> errors = new ArrayList<>();
        for (int i = 0; i < modules.size(); i++) {
            ModuleSpec m = modules.get(i);
            for (Map.Entry<String, ScheduleSpec> s : m.schedules().entrySet()) {
                if (s.getValue().maxConcurrent() == null || s.getValue().group() != null) continue;
                String key = paths.windowSlots(m.module(), s.getKey());
                String owner = owners.putIfAbsent(key, "schedule '" + s.getKey() + "' of module '" + m.module() + "' (document " + (i + 1) + ")");
                if (owner != null) {
                    errors.add(new ManifestError(i + 1, "schedules." + s.getKey() + ".max-concurrent", "its slot " + key
                            + " is also the slot of " + owner + ": rename the schedule, or give both schedules one group"));
                }
            }
        }
        return errors;
    }

    /**
     * @param agents for a push of a module with {@code hosts: ["*"]}, the hosts with an agent node when it was taken
     *               ({@code agents}); {@code null} otherwise (not written)
     */
    private static byte[] pushData(PushRecord record, Map<String, List<String>> hostsByModule, List<String> agents) {
        ObjectNode node = Json.MAPPER.valueToTree(record);
        node.set("hosts", Json.MAPPER.valueToTree(hostsByModule));
        if (agents != null) node.set("agents", Json.MAPPER.valueToTree(agents));
        return Json.bytes(node);
    }

    private byte[] dataOrNull(String path) throws Exception {
        try {
            return client.getData().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    /** Creates {root}, {root}/pushes, {root}/desired, {root}/history and {root}/rollouts with data {@code {}} when missing. */
    private void ensureParents() throws Exception {
        for (String p : List.of(paths.root(), paths.pushes(), paths.desired(), paths.history(), paths.rollouts())) {
            if (client.checkExists().forPath(p) != null) continue;
            try {
                client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(p, "{}".getBytes(StandardCharsets.UTF_8));
            } catch (KeeperException.NodeExistsException ignored) {
                // another coordinator or agent made it
            }
        }
    }

    /**
     * What a manifest would push, checked as {@link #write} checks it and written nowhere: a plan's input
     * ({@link PlanStore}).
     *
     * @param modules  the modules as validated, in document order
     * @param revision the revision the push would have
     */
    public record Validated(List<ModuleSpec> modules, String revision) {}

    /**
     * Validates a manifest exactly as {@link #write} does (the revision, {@link ManifestParser}, Docker names taken
     * by other modules desired now) and writes nothing. The Docker-name check reads {@code /mesh/desired} once, outside
     * any transaction: a push racing the plan may still make it stale (a plan is a forecast).
     *
     * @param text     the manifest YAML
     * @param revision the revision, or {@code null}/blank for {@link #contentRevision(byte[])}
     * @return the modules and revision
     * @throws ManifestException with the errors {@link #write} would answer
     * @throws Exception         ZooKeeper errors
     */
    public Validated validate(String text, String revision) throws Exception {
        Validated v = parse(text, revision, new ArrayList<>());
        List<ManifestError> taken = dockerNamesTaken(v.modules());
        taken.addAll(slotKeysTaken(v.modules()));
        if (!taken.isEmpty()) throw new ManifestException(taken);
        return v;
    }

    /**
     * The revision's check and the manifest's parse, shared by {@link #write} and {@link #validate}.
     *
     * @param errors errors found before (the origin's), reported with these
     * @throws ManifestException with every error when any
     */
    private Validated parse(String text, String revision, List<ManifestError> errors) throws ManifestException {
        String rev = revision == null || revision.isBlank() ? null : revision.strip();
        String bad = rev == null ? null : Revision.error(rev);
        if (bad != null) errors.add(new ManifestError(0, REVISION_FIELD, bad));
        List<ModuleSpec> modules;
        try {
            modules = parser.parse(text);
        } catch (ManifestException e) {
            errors.addAll(e.errors());
            throw new ManifestException(errors);
        }
        if (!errors.isEmpty()) throw new ManifestException(errors);
        return new Validated(modules, rev != null ? rev : contentRevision(text.getBytes(StandardCharsets.UTF_8)));
    }
}
