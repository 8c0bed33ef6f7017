package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mesh.wire.DesiredRecord;
import io.mesh.wire.Json;
import io.mesh.wire.ManifestError;
import io.mesh.wire.ManifestException;
import io.mesh.wire.ManifestParser;
import io.mesh.wire.ModuleSpec;
import io.mesh.wire.PushRecord;
import io.mesh.wire.ZkPaths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
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
import java.util.regex.Pattern;

/**
 * Validates a manifest and writes it as one push: the push node and every module's desired node in ONE ZooKeeper
 * transaction, with a {@code setData} on {@code {root}/pushes} at the version just read, retried at most
 * {@link #MAX_ATTEMPTS} times when a racing writer wins (SPEC.md, "Coordinator HTTP API"; docs/design.md, "Push ids"
 * and "Docker names", which say why the Docker-name check is part of the transaction). The push node is a
 * {@link PushRecord} plus {@code hosts} (docs/design.md, "ZooKeeper layout"). Thread-safe.
 */
public final class PushWriter {
    /** How many times a transaction that lost a race is read again and retried. */
    public static final int MAX_ATTEMPTS = 10;
    /** Revisions: what an operator or CI would use (a git sha, a tag, {@code r2}); at most 128 characters. */
    public static final Pattern REVISION = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:/+@-]{0,127}");
    /** Field name used in errors about the revision header. */
    public static final String REVISION_FIELD = "X-Mesh-Revision";

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
    public record Result(String push, String revision, List<String> modules, List<String> hosts) {}

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
        List<ManifestError> errors = new ArrayList<>();
        String rev = revision == null || revision.isBlank() ? null : revision.strip();
        if (rev != null && !REVISION.matcher(rev).matches()) {
            errors.add(new ManifestError(0, REVISION_FIELD, "'" + abbreviate(rev)
                    + "' is not a revision: use letters, digits and . _ : / + @ -, starting with a letter or digit, at most 128 characters (such as a git sha or r2)"));
        }
        List<ModuleSpec> modules;
        try {
            modules = parser.parse(text);
        } catch (ManifestException e) {
            errors.addAll(e.errors());
            throw new ManifestException(errors);
        }
        if (!errors.isEmpty()) throw new ManifestException(errors);
        if (rev == null) rev = contentRevision(text.getBytes(StandardCharsets.UTF_8));
        return commit(modules, rev);
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

    private Result commit(List<ModuleSpec> modules, String revision) throws Exception {
        ensureParents();
        List<String> names = modules.stream().map(ModuleSpec::module).toList();
        Map<String, List<String>> hostsByModule = new LinkedHashMap<>();
        TreeSet<String> allHosts = new TreeSet<>();
        for (ModuleSpec m : modules) {
            hostsByModule.put(m.module(), m.hosts());
            allHosts.addAll(m.hosts());
        }
        for (int attempt = 1; ; attempt++) {
            Stat stat = new Stat();
            client.getData().storingStatIn(stat).forPath(paths.pushes());
            // Read after the version of /pushes that the transaction sets: a push that another coordinator commits
            // after this read fails this transaction (and the next attempt reads its desired nodes again); one that
            // committed before it is in what this reads. So two racing pushes never both pass this check.
            List<ManifestError> taken = dockerNamesTaken(modules);
            if (!taken.isEmpty()) throw new ManifestException(taken);
            String push = ZkPaths.pushName(stat.getCversion());
            Instant now = clock.instant().truncatedTo(ChronoUnit.MILLIS);
            byte[] pushData = pushData(new PushRecord(push, revision, names, now), hostsByModule);
            Map<String, Object> last = new LinkedHashMap<>();
            last.put("last", push);
            last.put("revision", revision);
            last.put("receivedAt", now);

            List<CuratorOp> ops = new ArrayList<>();
            ops.add(client.transactionOp().setData().withVersion(stat.getVersion()).forPath(paths.pushes(), Json.bytes(last)));
            ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(paths.push(push), pushData));
            for (ModuleSpec m : modules) {
                String path = paths.desired(m.module());
                byte[] data = Json.bytes(new DesiredRecord(m.module(), revision, push, m));
                Stat ds = client.checkExists().forPath(path);
                ops.add(ds == null
                        ? client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(path, data)
                        : client.transactionOp().setData().withVersion(ds.getVersion()).forPath(path, data));
            }
            Runnable hook = beforeTransaction;
            if (hook != null) hook.run();
            try {
                client.transaction().forOperations(ops);
                return new Result(push, revision, names, List.copyOf(allHosts));
            } catch (KeeperException.BadVersionException | KeeperException.NodeExistsException | KeeperException.NoNodeException e) {
                // Curator retries a transaction after a connection loss: the first try may have committed.
                if (Arrays.equals(dataOrNull(paths.push(push)), pushData)) {
                    return new Result(push, revision, names, List.copyOf(allHosts));
                }
                if (attempt >= MAX_ATTEMPTS) {
                    throw new ConflictException("another writer changed " + paths.pushes() + " or " + paths.desired()
                            + " during each of " + MAX_ATTEMPTS + " attempts; nothing was written: push again");
                }
                LOG.info("push transaction lost a race ({}), attempt {} of {}: reading again", e.code(), attempt, MAX_ATTEMPTS);
                Thread.sleep(ThreadLocalRandom.current().nextLong(5, 20L * attempt));
            }
        }
    }

    /**
     * Docker names are unique across modules (issue 11, requirement 7; the rule and its message are
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

    private static byte[] pushData(PushRecord record, Map<String, List<String>> hostsByModule) {
        ObjectNode node = Json.MAPPER.valueToTree(record);
        node.set("hosts", Json.MAPPER.valueToTree(hostsByModule));
        return Json.bytes(node);
    }

    private byte[] dataOrNull(String path) throws Exception {
        try {
            return client.getData().forPath(path);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    /** Creates {root}, {root}/pushes and {root}/desired with data {@code {}} when missing. */
    private void ensureParents() throws Exception {
        for (String p : List.of(paths.root(), paths.pushes(), paths.desired())) {
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
        List<ManifestError> errors = new ArrayList<>();
        String rev = revision == null || revision.isBlank() ? null : revision.strip();
        if (rev != null && !REVISION.matcher(rev).matches()) {
            errors.add(new ManifestError(0, REVISION_FIELD, "'" + abbreviate(rev)
                    + "' is not a revision: use letters, digits and . _ : / + @ -, starting with a letter or digit, at most 128 characters (such as a git sha or r2)"));
        }
        List<ModuleSpec> modules;
        try {
            modules = parser.parse(text);
        } catch (ManifestException e) {
            errors.addAll(e.errors());
            throw new ManifestException(errors);
        }
        if (!errors.isEmpty()) throw new ManifestException(errors);
        List<ManifestError> taken = dockerNamesTaken(modules);
        if (!taken.isEmpty()) throw new ManifestException(taken);
        return new Validated(modules, rev != null ? rev : contentRevision(text.getBytes(StandardCharsets.UTF_8)));
    }

    private static String abbreviate(String s) {
        String printable = s.codePoints().limit(60)
                .collect(StringBuilder::new, (b, cp) -> { if (cp < 0x20 || cp == 0x7f) b.append('?'); else b.appendCodePoint(cp); }, StringBuilder::append)
                .toString();
        return s.length() > 60 ? printable + "..." : printable;
    }
}
