package io.mesh.apply;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.mesh.wire.ContainerSpec;

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

/**
 * A container spec's canonical form and hash (the {@code mesh.spec} and {@code mesh.spec-hash} labels), and the
 * reasons an apply gives when a spec changed, field by field. Pure functions.
 */
public final class SpecDiff {
    private static final ObjectMapper CANONICAL = JsonMapper.builder()
            .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
            .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
            .addMixIn(ContainerSpec.class, OnlyWhatDockerRuns.class)
            .build();

    /**
     * {@code ready} says how the apply judges a container, {@code depends-on} in which order it acts and
     * {@code create-host-path} what it checks before a create, not how Docker runs it: a change of any recreates nothing.
     */
    @JsonIgnoreProperties({"ready", "depends-on", "create-host-path"})
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
     * @param spec a container spec
     * @return the first 16 hex digits of the SHA-256 of its canonical JSON
     */
    public static String hash(ContainerSpec spec) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(canonical(spec).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 8);
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

    /**
     * What changed from one spec to another, as {@code field: old -> new}. Environment values are not shown (they
     * may be secrets): only which variables were added, removed or changed.
     *
     * @param before the spec the container was created from, or {@code null} when unknown
     * @param after  the desired spec
     * @return reasons, empty when nothing differs
     */
    public static List<String> reasons(ContainerSpec before, ContainerSpec after) {
        List<String> r = new ArrayList<>();
        if (before == null) {
            r.add("spec changed (the container's previous spec is not recorded)");
            return r;
        }
        field(r, "image", before.image(), after.image());
        field(r, "command", before.command(), after.command());
        envReasons(r, before.env(), after.env());
        field(r, "network", before.network(), after.network());
        field(r, "ports", before.ports(), after.ports());
        field(r, "volumes", before.volumes(), after.volumes());
        field(r, "restart", before.restart(), after.restart());
        field(r, "stop-timeout", before.stopTimeout(), after.stopTimeout());
        field(r, "privileged", before.runsPrivileged(), after.runsPrivileged());
        field(r, "pid", before.pid(), after.pid());
        field(r, "cap-add", before.capAdd(), after.capAdd());
        if (!Objects.equals(before.healthcheck(), after.healthcheck())) r.add("healthcheck: changed");
        field(r, "entrypoint", before.entrypoint(), after.entrypoint());
        field(r, "user", before.user(), after.user());
        field(r, "working-dir", before.workingDir(), after.workingDir());
        field(r, "hostname", before.hostname(), after.hostname());
        field(r, "labels", before.labels(), after.labels());
        field(r, "memory", before.memory(), after.memory());
        field(r, "cpus", before.cpus(), after.cpus());
        field(r, "pids-limit", before.pidsLimit(), after.pidsLimit());
        field(r, "ulimits", ulimits(before.ulimits()), ulimits(after.ulimits()));
        field(r, "tmpfs", before.tmpfs(), after.tmpfs());
        field(r, "read-only", before.readOnlyRootfs(), after.readOnlyRootfs());
        field(r, "extra-hosts", before.extraHosts(), after.extraHosts());
        field(r, "stop-signal", before.stopSignal(), after.stopSignal());
        field(r, "init", before.runsInit(), after.runsInit());
        field(r, "logging", logging(before.logging()), logging(after.logging()));
        field(r, "dns", before.dns(), after.dns());
        field(r, "devices", before.devices(), after.devices());
        field(r, "sysctls", before.sysctls(), after.sysctls());
        field(r, "security-opt", before.securityOpt(), after.securityOpt());
        return r;
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
        for (String k : a.keySet()) if (b.containsKey(k) && !Objects.equals(a.get(k), b.get(k))) changed.add(k);
        if (!added.isEmpty()) r.add("env: added " + String.join(", ", added));
        if (!removed.isEmpty()) r.add("env: removed " + String.join(", ", removed));
        if (!changed.isEmpty()) r.add("env: changed " + String.join(", ", changed));
    }
}
