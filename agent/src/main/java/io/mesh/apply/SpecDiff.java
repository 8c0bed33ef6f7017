package io.mesh.apply;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.SecretRef;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A container spec's canonical form and hash (the {@code mesh.spec-hash} label), the form shown in the
 * {@code mesh.spec} label, and the reasons an apply gives when a spec changed, field by field. Pure functions.
 *
 * <p>Decision 18: the hash is of the canonical form as it always was (env values as written, so upgrading mesh
 * recreates nothing) plus, for a container with secrets, each secret's keyed digest (so a changed secret file
 * recreates it). The label shows env values and secrets only as digests; a label written before that, with env values
 * as written, still compares right.
 */
public final class SpecDiff {
    private static final ObjectMapper CANONICAL = JsonMapper.builder()
            .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .addMixIn(ContainerSpec.class, OnlyWhatDockerRuns.class)
            .build();

    /**
     * {@code ready} says how the apply judges a container, {@code depends-on} in which order it acts,
     * {@code create-host-path} what it checks before a create, {@code pull} where its image comes from and
     * {@code hooks} what mesh runs in it around its stops and starts (decision 38), not how Docker runs it: a change of
     * any of them recreates nothing (a pull that changes the image does, by the image: decision 20).
     */
    @JsonIgnoreProperties({"ready", "depends-on", "create-host-path", "pull", "hooks"})
    private interface OnlyWhatDockerRuns {}

    private SpecDiff() {}

    /**
     * @param spec a container spec
     * @return its canonical JSON: sorted keys, defaults filled in
     */
    public static String canonical(ContainerSpec spec) {
        try {
            return CANONICAL.writeValueAsString(spec);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * @param spec a container spec without secrets (a spec with secrets hashes with their digests:
     *             {@link #hash(ContainerSpec, Map)})
     * @return the first 16 hex digits of the SHA-256 of its canonical JSON
     */
    public static String hash(ContainerSpec spec) {
        return hash(spec, Map.of());
    }

    /**
     * @param spec    a container spec
     * @param digests by secret name, the digest of each secret's file on this host
     *                ({@link io.mesh.secrets.SecretsDir}); a secret without one hashes as unreadable
     * @return the first 16 hex digits of the SHA-256 of its canonical JSON with the secrets' digests in it; for a spec
     *         without secrets, of {@link #canonical} exactly, as before secrets existed
     */
    public static String hash(ContainerSpec spec, Map<String, String> digests) {
        if (spec.secrets().isEmpty()) return remembered(HASHES, spec, s -> sha256(canonical(s), 8));
        return sha256(write(withSecretDigests(CANONICAL.valueToTree(spec), digests)), 8);
    }

    /**
     * The hash and the label of specs without secrets, by spec (a record: equal specs, equal text): each apply asks
     * for both for every desired container (the plan, then the create), and they depend on the spec alone. Jackson's
     * canonical form and the SHA-256 were a tenth of an apply's CPU (docs/benchmark-notes.md, B5). Cleared when full, at
     * {@link #REMEMBERED} of each: an agent has a few dozen specs at a time (the equal specs of many simulated agents in
     * one JVM share entries), so old revisions' specs go and the heap of a {@code -Xmx64m} agent is not at stake.
     */
    private static final Map<ContainerSpec, String> HASHES = new ConcurrentHashMap<>(), LABELS = new ConcurrentHashMap<>();
    private static final int REMEMBERED = 256;

    private static String remembered(Map<ContainerSpec, String> memo, ContainerSpec spec, Function<ContainerSpec, String> derive) {
        String known = memo.get(spec);
        if (known != null) return known;
        String text = derive.apply(spec);
        if (memo.size() >= REMEMBERED) memo.clear();
        memo.put(spec, text);
        return text;
    }

    /**
     * The {@code mesh.spec} label: the canonical form with each env value replaced by {@link #envDigest} and each secret
     * carrying its digest, so that an apply can say which variable or secret changed without the label showing any
     * value.
     *
     * @param spec    a container spec
     * @param digests by secret name, the digest of each secret's file on this host
     * @return the label's JSON
     */
    public static String label(ContainerSpec spec, Map<String, String> digests) {
        if (spec.secrets().isEmpty()) return remembered(LABELS, spec, s -> labelNow(s, Map.of()));
        return labelNow(spec, digests);
    }

    private static String labelNow(ContainerSpec spec, Map<String, String> digests) {
        if (spec.env().isEmpty() && spec.secrets().isEmpty()) return canonical(spec);
        ObjectNode tree = withSecretDigests(CANONICAL.valueToTree(spec), digests);
        if (tree.get("env") instanceof ObjectNode env) {
            env.properties().forEach(e -> e.setValue(env.textNode(envDigest(e.getValue().asText()))));
        }
        return write(tree);
    }

    /**
     * @param value an env value
     * @return {@code sha256:} and the first 16 hex digits of the SHA-256 of its UTF-8 bytes; not keyed, so an operator
     *         can check it ({@code printf %s "$v" | sha256sum}): the value is in the desired node anyway (decision 18)
     */
    public static String envDigest(String value) {
        return "sha256:" + sha256(value, 8);
    }

    /** Each secret's node rebuilt with its digest, keys in order (digest, file, target). */
    private static ObjectNode withSecretDigests(ObjectNode tree, Map<String, String> digests) {
        if (tree.get("secrets") instanceof ObjectNode secrets) {
            secrets.properties().forEach(e -> {
                ObjectNode s = secrets.objectNode();
                String d = digests.get(e.getKey());
                s.put("digest", d == null ? "unreadable" : d);
                s.setAll((ObjectNode) e.getValue());
                e.setValue(s);
            });
        }
        return tree;
    }

    private static String write(ObjectNode tree) {
        try {
            return CANONICAL.writeValueAsString(tree);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String sha256(String text, int bytes) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * @param json a {@code mesh.spec} label
     * @return the spec, or {@code null} when the label is missing or unreadable
     */
    public static ContainerSpec parse(String json) {
        if (json == null) return null;
        try {
            return CANONICAL.readValue(json, ContainerSpec.class);
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    /** Adds to {@code r} why one field differs between two specs, if it does. */
    private interface Compared {
        void add(List<String> r, ContainerSpec before, ContainerSpec after);
    }

    /** @return the networks a container joins as reasons show them: {@code [shop_back (db, postgres), shop_default (db)]} */
    private static List<String> networks(Map<String, io.mesh.manifest.NetworkSpec.Attachment> networks) {
        List<String> out = new ArrayList<>();
        networks.forEach((n, a) -> out.add(a.aliases().isEmpty() ? n : n + " (" + String.join(", ", a.aliases()) + ")"));
        return out;
    }

    /** @return the field {@code name}, whose change reads {@code name: old -> new} */
    private static Compared shown(String name, Function<ContainerSpec, Object> value) {
        return (r, a, b) -> field(r, name, value.apply(a), value.apply(b));
    }

    /** The fields of a container's spec, in the order {@link #reasons} lists their changes; the secrets come last. */
    private static final List<Compared> FIELDS = List.of(
            shown("image", ContainerSpec::image),
            shown("command", ContainerSpec::command),
            (r, a, b) -> envReasons(r, a.env(), b.env()),
            shown("network", ContainerSpec::network),
            shown("networks", s -> networks(s.networks())),
            shown("ports", ContainerSpec::ports),
            shown("volumes", ContainerSpec::volumes),
            shown("restart", ContainerSpec::restart),
            shown("stop-timeout", ContainerSpec::stopTimeout),
            shown("privileged", ContainerSpec::runsPrivileged),
            shown("pid", ContainerSpec::pid),
            shown("cap-add", ContainerSpec::capAdd),
            (r, a, b) -> { if (!Objects.equals(a.healthcheck(), b.healthcheck())) r.add("healthcheck: changed"); },
            shown("entrypoint", ContainerSpec::entrypoint),
            shown("user", ContainerSpec::user),
            shown("working-dir", ContainerSpec::workingDir),
            shown("hostname", ContainerSpec::hostname),
            shown("labels", ContainerSpec::labels),
            shown("memory", ContainerSpec::memory),
            shown("cpus", ContainerSpec::cpus),
            shown("pids-limit", ContainerSpec::pidsLimit),
            shown("ulimits", s -> ulimits(s.ulimits())),
            shown("tmpfs", ContainerSpec::tmpfs),
            shown("read-only", ContainerSpec::readOnlyRootfs),
            shown("extra-hosts", ContainerSpec::extraHosts),
            shown("stop-signal", ContainerSpec::stopSignal),
            shown("init", ContainerSpec::runsInit),
            shown("logging", s -> logging(s.logging())),
            shown("dns", ContainerSpec::dns),
            shown("devices", ContainerSpec::devices),
            shown("sysctls", ContainerSpec::sysctls),
            shown("security-opt", ContainerSpec::securityOpt));

    /**
     * What changed from one spec to another, for a spec without secrets ({@link #reasons(ContainerSpec, ContainerSpec, Map)}).
     *
     * @param before the spec the container was created from, or {@code null} when unknown
     * @param after  the desired spec
     * @return reasons, empty when nothing differs
     */
    public static List<String> reasons(ContainerSpec before, ContainerSpec after) {
        return reasons(before, after, Map.of());
    }

    /**
     * What changed from one spec to another, as {@code field: old -> new}. Environment values are not shown (the
     * label has their digests only): which variables were added, removed or changed; nor are secrets: which were
     * added or removed, and {@code secret changed: NAME} when its file, target or digest differs.
     *
     * @param before  the spec the container was created from ({@link #parse} of its label), or {@code null} when unknown
     * @param after   the desired spec
     * @param digests by secret name, the digest of each of {@code after}'s secrets on this host; a secret without one
     *                (its file cannot be read) is not compared
     * @return reasons, empty when nothing differs
     */
    public static List<String> reasons(ContainerSpec before, ContainerSpec after, Map<String, String> digests) {
        List<String> r = new ArrayList<>();
        if (before == null) {
            r.add("spec changed (the container's previous spec is not recorded)");
            return r;
        }
        for (Compared f : FIELDS) f.add(r, before, after);
        secretReasons(r, before.secrets(), after.secrets(), digests);
        return r;
    }

    private static void secretReasons(List<String> r, Map<String, SecretRef> a, Map<String, SecretRef> b, Map<String, String> digests) {
        TreeSet<String> added = new TreeSet<>(b.keySet());
        added.removeAll(a.keySet());
        TreeSet<String> removed = new TreeSet<>(a.keySet());
        removed.removeAll(b.keySet());
        if (!added.isEmpty()) r.add("secrets: added " + String.join(", ", added));
        if (!removed.isEmpty()) r.add("secrets: removed " + String.join(", ", removed));
        for (Map.Entry<String, SecretRef> e : new TreeMap<>(b).entrySet()) {
            SecretRef was = a.get(e.getKey());
            SecretRef now = e.getValue();
            if (was == null) continue;
            List<String> how = new ArrayList<>();
            if (!Objects.equals(was.file(), now.file())) how.add("file " + was.file() + " -> " + now.file());
            if (!Objects.equals(was.target(), now.target())) how.add("target " + was.target() + " -> " + now.target());
            String digest = digests.get(e.getKey());
            if (how.isEmpty() && digest != null && !digest.equals(was.digest())) r.add("secret changed: " + e.getKey());
            else if (!how.isEmpty()) r.add("secret changed: " + e.getKey() + " (" + String.join(", ", how) + ")");
        }
    }

    /** {@code name: a -> b} when they differ; an absent value reads {@code unset}. */
    private static void field(List<String> r, String name, Object a, Object b) {
        if (!Objects.equals(a, b)) r.add(name + ": " + (a == null ? "unset" : a) + " -> " + (b == null ? "unset" : b));
    }

    /** {@code {nofile=1024:2048}}: soft and hard as {@code ulimit} shows them. */
    private static Map<String, String> ulimits(Map<String, ContainerSpec.Ulimit> u) {
        Map<String, String> out = new TreeMap<>();
        u.forEach((k, v) -> out.put(k, v.soft() + ":" + v.hard()));
        return out;
    }

    /** {@code json-file {max-size=1m}}, or {@code null} for the engine's default. */
    private static String logging(ContainerSpec.Logging l) {
        if (l == null) return null;
        return (l.driver() == null ? "(default driver)" : l.driver()) + (l.options().isEmpty() ? "" : " " + l.options());
    }

    private static void envReasons(List<String> r, Map<String, String> a, Map<String, String> b) {
        TreeSet<String> added = new TreeSet<>(b.keySet());
        added.removeAll(a.keySet());
        TreeSet<String> removed = new TreeSet<>(a.keySet());
        removed.removeAll(b.keySet());
        TreeSet<String> changed = new TreeSet<>();
        // The label holds digests (a label of an older mesh, values as written): either matches an unchanged value.
        for (String k : a.keySet()) {
            if (!b.containsKey(k)) continue;
            String was = a.get(k), now = b.get(k);
            if (!Objects.equals(was, now) && !Objects.equals(was, envDigest(now))) changed.add(k);
        }
        if (!added.isEmpty()) r.add("env: added " + String.join(", ", added));
        if (!removed.isEmpty()) r.add("env: removed " + String.join(", ", removed));
        if (!changed.isEmpty()) r.add("env: changed " + String.join(", ", changed));
    }
}
