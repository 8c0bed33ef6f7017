package io.mesh.zk;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import io.mesh.curator.HeldRegistry;
import io.mesh.curator.ZkClock;
import io.mesh.curator.ZkNode;
import io.mesh.manifest.ManifestException;
import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.HeldRecord;
import io.mesh.wire.Json;
import io.mesh.wire.Times;
import io.mesh.wire.WindowRecord;
import io.mesh.wire.WindowResult;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.framework.api.transaction.CuratorTransactionResult;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.io.IOException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

/**
 * Typed reads and writes of mesh's znodes ({@link ZkPaths}) for one process. Thread-safe.
 *
 * <p>Every read that an agent acts on is validated: a desired node that a process wrote bypassing the coordinator
 * goes through the same {@link ManifestParser} rules, and is refused with {@link InvalidNodeException} naming the
 * problem.
 */
public final class MeshStore {
    private final CuratorFramework client;
    private final ZkPaths paths;
    private final ManifestParser parser = new ManifestParser();
    private SessionGuard session;

    /**
     * @param client a started Curator client
     * @param paths  the layout
     */
    public MeshStore(CuratorFramework client, ZkPaths paths) {
        this.client = client;
        this.paths = paths;
        // A new session has none of the old one's watches: nothing known from them holds any more.
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.LOST
                    || state == ConnectionState.RECONNECTED) {
                forgetAll();
            }
        });
    }

    /** @return the Curator client */
    public CuratorFramework client() { return client; }

    /** @return the layout */
    public ZkPaths paths() { return paths; }

    /** @return the connection-state guard of this store's client, made on first use */
    public synchronized SessionGuard session() {
        if (session == null) session = new SessionGuard(client);
        return session;
    }

    /** A znode whose data is not what mesh writes there. */
    public static final class InvalidNodeException extends Exception {
        private final String revision;
        private final String push;

        /** @param message what is wrong, naming the path */
        public InvalidNodeException(String message) { this(message, null, null); }

        /**
         * @param message  what is wrong, naming the path
         * @param revision the node's {@code revision} when it can be read at all, else {@code null}
         * @param push     the node's {@code push} when it can be read at all, else {@code null}
         */
        public InvalidNodeException(String message, String revision, String push) {
            super(message);
            this.revision = revision;
            this.push = push;
        }

        /** @return the invalid node's {@code revision}, or {@code null} */
        public String revision() { return revision; }

        /** @return the invalid node's {@code push}, or {@code null}: the failed report names it */
        public String push() { return push; }
    }

    /**
     * @param module module name
     * @return the desired state of the module, its spec validated; {@code null} when there is none
     * @throws InvalidNodeException naming the path and the problem when the node is not a valid desired record
     * @throws Exception            from ZooKeeper
     */
    public DesiredRecord desired(String module) throws Exception {
        String path = paths.desired(module);
        CuratorCache cache = desiredCache;
        if (cache != null) {
            Optional<ChildData> d = cache.get(path);
            return d.isEmpty() ? null : parseDesired(path, module, d.get().getData());
        }
        ZkNode node = ZkNode.read(client, path);
        return node == null ? null : parseDesired(path, module, node.data());
    }

    private volatile CuratorCache desiredCache;

    /**
     * @param module module name
     * @return the push of the module's desired node as ZooKeeper has it now (never the cache), {@code null} when none
     *         or unreadable
     * @throws Exception from ZooKeeper
     */
    public String desiredPushNow(String module) throws Exception {
        try {
            DesiredRecord d = Json.readOrNull(client.getData().forPath(paths.desired(module)), DesiredRecord.class);
            return d == null ? null : d.push();
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    /**
     * Serves {@link #desired(String)} from a cache of {@code /mesh/desired} (the agent daemon's own) instead of a
     * ZooKeeper read. Call it once the cache has loaded (its {@code initialized} event): before that, an absent node
     * in the cache does not mean an absent desired state. The cache may trail ZooKeeper by the events it has not yet
     * applied; each of them asks for another apply, so a trailing read delays the newest revision, never loses it.
     *
     * @param cache a started {@link CuratorCache} on {@link ZkPaths#desired()}, loaded
     */
    public void readDesiredFrom(CuratorCache cache) { this.desiredCache = cache; }

    /** @return true when {@link #desired} reads a cache, so that it needs no ZooKeeper call */
    public boolean desiredIsCached() { return desiredCache != null; }

    /**
     * Validates a desired node's data.
     *
     * @param path   the node's path, for messages
     * @param module the module its path names
     * @param data   its data
     * @return the record with a validated spec
     * @throws InvalidNodeException naming the problem
     */
    public DesiredRecord parseDesired(String path, String module, byte[] data) throws InvalidNodeException {
        if (data == null) return parseDesiredNow(path, module, data);
        Parsed last = parsed.get(path);
        if (last != null && Arrays.equals(last.data, data)) return last.record;
        DesiredRecord record = parseDesiredNow(path, module, data);
        parsed.put(path, new Parsed(data.clone(), record));
        return record;
    }

    /** The last desired node parsed, per path: the same bytes are not parsed and validated again. */
    private record Parsed(byte[] data, DesiredRecord record) {}
    private final Map<String, Parsed> parsed = new ConcurrentHashMap<>();

    /** Reads a desired node refusing duplicate keys, which a tree would otherwise keep the last of, silently. */
    private static final ObjectReader STRICT_JSON =
            Json.MAPPER.reader().with(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

    private DesiredRecord parseDesiredNow(String path, String module, byte[] data) throws InvalidNodeException {
        JsonNode node;
        try {
            node = STRICT_JSON.readTree(data);
        } catch (IOException e) {
            String m = e.getMessage() == null ? "" : e.getMessage().lines().findFirst().orElse("");
            if (m.startsWith("Duplicate field")) throw invalid(path + " has a key twice (" + m + "); write each key once", data);
            throw new InvalidNodeException(path + " is not JSON: " + m);
        }
        if (node != null && node.isObject() && node.path("deleted").isObject()) {
            // A deleted module's tombstone (decision 11): applied as a spec that runs nowhere, so its containers are
            // removed wherever they are, under the module lock, like those of a module that left the host.
            DesiredRecord.Deleted deleted;
            try {
                deleted = Json.MAPPER.treeToValue(node.get("deleted"), DesiredRecord.Deleted.class);
            } catch (IOException | RuntimeException e) {
                throw invalid(path + " has a deleted object that is not {hosts, at, by}: " + e.getMessage(), data);
            }
            String named = node.path("module").asText(module);
            if (!named.equals(module)) throw invalid(path + " names module '" + named + "', not '" + module + "'", data);
            return new DesiredRecord(module, node.path("revision").asText(null), node.path("push").asText(null),
                    ModuleSpec.nowhere(module), deleted);
        }
        if (node == null || !node.isObject() || !node.path("spec").isObject()) {
            throw invalid(path + " has no spec object: expected {module, revision, push, spec}", data);
        }
        ModuleSpec spec;
        try {
            spec = parser.parseJson(node.get("spec").toString());
        } catch (ManifestException e) {
            throw invalid(path + " holds an invalid spec: " + e.getMessage(), data);
        }
        if (!spec.module().equals(module)) {
            throw invalid(path + " names module '" + spec.module() + "', not '" + module + "'", data);
        }
        return new DesiredRecord(module, node.path("revision").asText(null), node.path("push").asText(null), spec);
    }

    /** @return the problem, with the node's own revision and push when a plain read of it finds them */
    private static InvalidNodeException invalid(String message, byte[] data) {
        String revision = null, push = null;
        try {
            JsonNode loose = Json.MAPPER.readTree(data);
            if (loose != null && loose.isObject()) {
                revision = loose.path("revision").isTextual() ? loose.get("revision").asText() : null;
                push = loose.path("push").isTextual() ? loose.get("push").asText() : null;
            }
        } catch (IOException | RuntimeException unreadable) {
            // neither, then
        }
        return new InvalidNodeException(message, revision, push);
    }

    /**
     * @return the names of modules with a desired node
     * @throws Exception from ZooKeeper
     */
    public List<String> desiredModules() throws Exception {
        try {
            return client.getChildren().forPath(paths.desired());
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    /**
     * @return the open window of a module on a host, or {@code null}
     * @throws Exception from ZooKeeper
     */
    public WindowRecord window(String host, String module) throws Exception {
        return read(paths.window(host, module), WindowRecord.class);
    }

    /**
     * @param host host id
     * @return the host's drain in force (decision 37), or {@code null}; a drain node whose data cannot be read is one
     *         ({@link io.mesh.wire.DrainRecord} with no end: a reader that cannot tell holds)
     * @throws Exception from ZooKeeper
     */
    public io.mesh.wire.DrainRecord drain(String host) throws Exception {
        ZkNode node = ZkNode.read(client, paths.drain(host));
        if (node == null) return null;
        io.mesh.wire.DrainRecord d = io.mesh.wire.Json.readOrNull(node.data(), io.mesh.wire.DrainRecord.class);
        if (d == null) d = io.mesh.wire.DrainRecord.unreadable();
        return d.inForceAt(ZkClock.earliest()) ? d : null;
    }

    /**
     * @param host host id
     * @return the held nodes of a host in force, by Docker container name: an operator hold whose {@code until} has
     *         passed is left out ({@link HeldRegistry#inForce})
     * @throws Exception from ZooKeeper
     */
    public Map<String, HeldRecord> held(String host) throws Exception {
        return HeldRegistry.inForce(client, paths, host, ZkClock.earliest());
    }

    /**
     * @return the last report of a module on a host, or {@code null}
     * @throws Exception from ZooKeeper
     */
    public ApplyReport report(String host, String module) throws Exception {
        return read(paths.report(host, module), ApplyReport.class);
    }

    /**
     * Writes a report, keeping the {@code lastWindow} of the report it replaces when the new one has none.
     * Compare-and-set on the node's version, so that a window's result and an apply's report never overwrite
     * each other.
     *
     * @param report the report
     * @throws Exception from ZooKeeper
     */
    public void writeReport(ApplyReport report) throws Exception {
        updateReport(report.host(), report.module(), old -> replacing(report, old));
    }

    /**
     * @return {@code report} with the {@code lastWindow} (unless it has its own), {@code lastApplied},
     *         {@code appliedPushes} and {@code failedPushes} of {@code old}
     */
    private static ApplyReport replacing(ApplyReport report, ApplyReport old) {
        if (old == null) return report.withLastApplied(null, List.of()).withFailedPushes(List.of());
        ApplyReport r = report.lastWindow() != null ? report : report.withLastWindow(old.lastWindow());
        return r.withLastApplied(old.lastApplied(), old.appliedPushes()).withFailedPushes(old.failedPushes());
    }

    /**
     * A report write made ready to be committed in another transaction (the apply's, with the release of its module
     * lock: {@code ModuleLock.releaseWith}): a {@code setData} at the version this store last wrote, of the report
     * with the {@code lastWindow}, {@code lastApplied} and {@code appliedPushes} of the one it replaces. After the
     * transaction, tell the store with {@link #committed}, or when it failed, ask {@link #landed}.
     *
     * @param path    the report's path
     * @param report  what is written
     * @param data    its bytes
     * @param version the node's version it is written at (the one this store wrote last)
     * @param op      the operation, for {@code CuratorFramework.transaction().forOperations}
     */
    public record ReportWrite(String path, ApplyReport report, byte[] data, int version, CuratorOp op) {}

    /**
     * Makes a report write ready for another transaction, as {@link #writeReport} would write it, when this store
     * knows the node's version (it wrote it last).
     *
     * @param report the report
     * @return the write; {@code null} when this store has not written the node (or a write of it failed since): then
     *         use {@link #writeReport}. When someone else wrote it since, the transaction fails on the version.
     * @throws Exception from Curator, building the operation
     */
    public ReportWrite prepareReport(ApplyReport report) throws Exception {
        String path = paths.report(report.host(), report.module());
        Written known = written.get(path);
        if (known == null) return null;
        ApplyReport next = replacing(report, known.report());
        forget(path); // what is read about it before this write is not trusted after
        byte[] data = Json.bytes(next);
        return new ReportWrite(path, next, data, known.version(),
                client.transactionOp().setData().withVersion(known.version()).forPath(path, data));
    }

    /**
     * The transaction of a {@link #prepareReport prepared} write was committed.
     *
     * @param w      the write
     * @param result the transaction's result for {@code w.op()}
     */
    public void committed(ReportWrite w, CuratorTransactionResult result) {
        Stat s = result.getResultStat();
        if (s == null) {
            written.remove(w.path());
            return;
        }
        wrote(w.path(), s, w.report());
    }

    /**
     * After the transaction of a {@link #prepareReport prepared} write failed: whether it was applied all the same (its
     * answer lost, Curator's retry failing on the versions it had changed itself), that is, whether the node holds
     * exactly what {@code w} wrote, at the version after {@code w}'s. When it was not, the next write of the node
     * reads it first.
     *
     * @param w the write
     * @return true when the node holds {@code w}'s bytes at {@code w.version() + 1}
     * @throws Exception from ZooKeeper
     */
    public boolean landed(ReportWrite w) throws Exception {
        Stat s = new Stat();
        try {
            byte[] data = client.getData().storingStatIn(s).forPath(w.path());
            if (s.getVersion() == w.version() + 1 && Arrays.equals(data, w.data())) {
                wrote(w.path(), s, w.report());
                return true;
            }
        } catch (KeeperException.NoNodeException gone) {
            // deleted: written again by writeReport
        }
        written.remove(w.path());
        return false;
    }

    /**
     * Sets the {@code lastWindow} of a module's report.
     *
     * @param host   host id
     * @param module module name
     * @param result the window's result
     * @param empty  the report to write when there is none yet
     * @throws Exception from ZooKeeper
     */
    public void writeWindowResult(String host, String module, WindowResult result, ApplyReport empty) throws Exception {
        updateReport(host, module, old -> (old == null ? empty : old).withLastWindow(result));
    }

    /** A report this store wrote, and the node's version and last-modifying zxid after the write. */
    private record Written(int version, long mzxid, ApplyReport report) {}

    /** Remembers that this store wrote {@code report} at {@code path}, leaving the node as {@code stat} says. */
    private void wrote(String path, Stat stat, ApplyReport report) {
        written.put(path, new Written(stat.getVersion(), stat.getMzxid(), report));
    }

    /**
     * Whether a module's report node is still the one this store last wrote (same version, same modifying
     * transaction): not deleted, not rewritten by another process, not lost with ZooKeeper's data (decision 0004's
     * no-op reconcile). The answer is read once, with a watch; until the watch fires (a change of the node, our own
     * next write included) or the session is lost, it is answered from memory, so a no-op reconcile costs ZooKeeper
     * nothing.
     *
     * @param host   host id
     * @param module module name
     * @return true when it is; false when it is not, or when this store wrote none
     * @throws Exception from ZooKeeper
     */
    public boolean reportIsOurs(String host, String module) throws Exception {
        String path = paths.report(host, module);
        Written w = written.get(path);
        if (w == null) return false;
        if (watchedReports.contains(path)) return true;
        long generation = watchGeneration();
        Stat st = client.checkExists().usingWatcher(forgetting(path)).forPath(path);
        boolean ours = st != null && st.getVersion() == w.version() && st.getMzxid() == w.mzxid();
        if (ours) rememberUnlessForgotten(generation, () -> watchedReports.add(path));
        return ours;
    }

    /**
     * @param host host id
     * @return the names of the host's held nodes (Docker container names), without their data; empty when none. Read
     *         with a watch and then answered from memory until the watch fires or the session is lost.
     * @throws Exception from ZooKeeper
     */
    public List<String> heldNames(String host) throws Exception {
        String path = paths.held(host);
        List<String> known = heldKnown.get(path);
        if (known != null) return known;
        long generation = watchGeneration();
        List<String> names;
        try {
            names = List.copyOf(client.getChildren().usingWatcher(forgetting(path)).forPath(path));
        } catch (KeeperException.NoNodeException e) {
            // a failed getChildren sets no watch: watch for the parent's creation instead
            client.checkExists().usingWatcher(forgetting(path)).forPath(path);
            names = List.of();
        }
        List<String> read = names;
        rememberUnlessForgotten(generation, () -> heldKnown.put(path, read));
        return names;
    }

    /** Report paths whose node is known, from an armed watch, to be the one this store wrote. */
    private final Set<String> watchedReports = ConcurrentHashMap.newKeySet();
    /** Held children per host path, known from an armed watch. */
    private final Map<String, List<String>> heldKnown = new ConcurrentHashMap<>();
    /** Guards {@link #generation}, and what is remembered against it. */
    private final Object watchLock = new Object();
    /** Moves on at every watch that fires and at every lost session: what was read before is not trusted after. */
    private long generation;

    private long watchGeneration() {
        synchronized (watchLock) {
            return generation;
        }
    }

    /** Remembers what was read at {@code readAt} only if no watch fired since (it may have fired for that very node). */
    private void rememberUnlessForgotten(long readAt, Runnable remember) {
        synchronized (watchLock) {
            if (generation == readAt) remember.run();
        }
    }

    private CuratorWatcher forgetting(String path) {
        return event -> forget(path);
    }

    private void forget(String path) {
        synchronized (watchLock) {
            generation++;
            watchedReports.remove(path);
            heldKnown.remove(path);
        }
    }

    private void forgetAll() {
        synchronized (watchLock) {
            generation++;
            watchedReports.clear();
            heldKnown.clear();
        }
    }

    /**
     * The last report written per path: the next write sets the data at that version without reading it first; when
     * somebody else wrote meanwhile (a window in another process), the version check fails and the write reads first.
     */
    private final Map<String, Written> written = new ConcurrentHashMap<>();

    private void updateReport(String host, String module, UnaryOperator<ApplyReport> change) throws Exception {
        String path = paths.report(host, module);
        forget(path); // what is read about it before this write is not trusted after
        Written known = written.remove(path);
        if (known != null) {
            ApplyReport next = change.apply(known.report());
            try {
                Stat s = client.setData().withVersion(known.version()).forPath(path, Json.bytes(next));
                wrote(path, s, next);
                return;
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException changed) {
                // written by somebody else since: read it, as below
            }
        }
        for (int attempt = 0; ; attempt++) {
            Stat stat = new Stat();
            ApplyReport old;
            try {
                byte[] data = client.getData().storingStatIn(stat).forPath(path);
                old = Json.readOrNull(data, ApplyReport.class);
            } catch (KeeperException.NoNodeException e) {
                try {
                    ApplyReport next = change.apply(null);
                    Stat created = new Stat();
                    client.create().storingStatIn(created).creatingParentContainersIfNeeded().withMode(CreateMode.PERSISTENT)
                            .forPath(path, Json.bytes(next));
                    wrote(path, created, next);
                    return;
                } catch (KeeperException.NodeExistsException raced) {
                    continue;
                }
            }
            try {
                ApplyReport next = change.apply(old);
                Stat s = client.setData().withVersion(stat.getVersion()).forPath(path, Json.bytes(next));
                wrote(path, s, next);
                return;
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException raced) {
                if (attempt > 20) throw raced;
            }
        }
    }

    private <T> T read(String path, Class<T> type) throws Exception {
        try {
            return Json.readOrNull(client.getData().forPath(path), type);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }
}
