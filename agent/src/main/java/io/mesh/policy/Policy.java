package io.mesh.policy;

import io.mesh.manifest.ContainerSpec;
import io.mesh.manifest.StepSpec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * What this agent lets a manifest do to its host (docs/security.md, threats 14 and 15): the agent runs as root next to
 * dockerd, so it, not the manifest, decides whether a container may bind a host path (only under an
 * {@code --allow-host-path} prefix, checked again after resolving symbolic links), run privileged
 * ({@code --allow-privileged}), share the host's PID namespace ({@code --allow-host-pid}) or its network stack
 * ({@code network: host}, also a container's default: {@code --allow-host-network}), add a capability
 * ({@code --allow-cap}), reach a host device ({@code --allow-device}), set a kernel parameter ({@code --allow-sysctl})
 * or loosen Docker's confinement ({@code --allow-security-opt}; decision 17). Checked by the apply before any create or
 * recreate and by the window before a step container is made. Immutable and thread-safe; built by {@link #builder()}.
 */
public final class Policy {
    /** A sysctl name, or a prefix ending in {@code .*}. */
    /** The network mode that shares the host's network stack. */
    private static final String HOST_NETWORK = "host";
    /**
     * Why {@code network: host} is refused, and the fixes: a container on the host's network reaches whatever listens on
     * the host's loopback, where the embedded ZooKeeper and the coordinator listen by default.
     */
    private static final String HOST_NETWORK_REFUSED = "is not allowed on this host: it shares the host's network stack, so the "
            + "container reaches whatever listens on the host's loopback, ZooKeeper and the coordinator among them (the agent allows "
            + "it with --allow-host-network; or give network: none, bridge or a network name)";
    private static final Pattern SYSCTL_RULE = Pattern.compile("[a-z0-9_]+(?:[./][A-Za-z0-9_-]+)*(?:\\.\\*)?");

    /**
     * The default: named volumes only; no privileged mode, host PID, host network, added capability, device, sysctl or
     * security option.
     */
    public static final Policy DEFAULT = builder().build();

    private final List<Path> hostPathPrefixes;
    private final boolean allowPrivileged;
    private final boolean allowHostPid;
    private final boolean allowHostNetwork;
    private final Set<String> allowedCaps;
    private final Set<String> allowedDevices;
    private final Set<String> allowedSysctls;
    private final Set<String> allowedSecurityOpts;

    /**
     * @param hostPathPrefixes absolute host paths under which bind mounts are allowed ({@code /} allows every path)
     * @param allowPrivileged  whether {@code privileged: true} is allowed
     * @param allowHostPid     whether {@code pid: host} is allowed
     * @param allowedCaps      capabilities {@code cap-add} may name
     * @throws IllegalArgumentException naming the option when a prefix is not an absolute, clean path
     */
    public Policy(Collection<String> hostPathPrefixes, boolean allowPrivileged, boolean allowHostPid, Collection<String> allowedCaps) {
        this(builder().allowHostPaths(hostPathPrefixes).allowPrivileged(allowPrivileged).allowHostPid(allowHostPid).allowCaps(allowedCaps));
    }

    private Policy(Builder b) {
        Collection<String> hostPathPrefixes = b.hostPaths;
        List<Path> prefixes = new ArrayList<>();
        for (String p : hostPathPrefixes) {
            Path path = Path.of(p);
            if (!path.isAbsolute() || !path.normalize().equals(path) || p.contains("//")) {
                throw new IllegalArgumentException("--allow-host-path '" + p + "' must be an absolute, clean path such as /srv/mesh");
            }
            prefixes.add(path);
        }
        for (String d : b.devices) {
            Path path = Path.of(d);
            if (!path.isAbsolute() || !path.normalize().equals(path) || d.contains("//")) {
                throw new IllegalArgumentException("--allow-device '" + d + "' must be an absolute, clean host device path such as /dev/fuse");
            }
        }
        for (String s : b.sysctls) {
            if (!SYSCTL_RULE.matcher(s).matches()) {
                throw new IllegalArgumentException("--allow-sysctl '" + s + "' must be a kernel parameter such as net.core.somaxconn, or a prefix "
                        + "ending in .* such as 'net.ipv4.*'");
            }
        }
        this.hostPathPrefixes = List.copyOf(prefixes);
        this.allowPrivileged = b.privileged;
        this.allowHostPid = b.hostPid;
        this.allowHostNetwork = b.hostNetwork;
        this.allowedCaps = Set.copyOf(new TreeSet<>(b.caps));
        this.allowedDevices = Set.copyOf(b.devices);
        this.allowedSysctls = Set.copyOf(b.sysctls);
        this.allowedSecurityOpts = Set.copyOf(b.securityOpts);
    }

    /** @return a builder of a policy that allows nothing (as {@link #DEFAULT}) until told */
    public static Builder builder() { return new Builder(); }

    /** What a {@link Policy} allows, option by option (the agent's {@code --allow-*} flags). Not thread-safe. */
    public static final class Builder {
        private final List<String> hostPaths = new ArrayList<>();
        private boolean privileged;
        private boolean hostPid;
        private boolean hostNetwork;
        private final List<String> caps = new ArrayList<>();
        private final List<String> devices = new ArrayList<>();
        private final List<String> sysctls = new ArrayList<>();
        private final List<String> securityOpts = new ArrayList<>();

        private Builder() {}

        /** @return this; bind mounts under these absolute host paths are allowed ({@code --allow-host-path}) */
        public Builder allowHostPaths(Collection<String> prefixes) { hostPaths.addAll(prefixes); return this; }
        /** @return this; {@code privileged: true} is allowed when {@code allow} ({@code --allow-privileged}) */
        public Builder allowPrivileged(boolean allow) { privileged = allow; return this; }
        /** @return this; {@code pid: host} is allowed when {@code allow} ({@code --allow-host-pid}) */
        public Builder allowHostPid(boolean allow) { hostPid = allow; return this; }
        /**
         * @return this; {@code network: host} (a container's default network) is allowed for containers and steps when
         *         {@code allow} ({@code --allow-host-network})
         */
        public Builder allowHostNetwork(boolean allow) { hostNetwork = allow; return this; }
        /** @return this; {@code cap-add} may name these capabilities ({@code --allow-cap}) */
        public Builder allowCaps(Collection<String> names) { caps.addAll(names); return this; }
        /** @return this; {@code devices} may name these host devices, exactly ({@code --allow-device}) */
        public Builder allowDevices(Collection<String> paths) { devices.addAll(paths); return this; }
        /** @return this; {@code sysctls} may set these parameters, or those under a {@code prefix.*} ({@code --allow-sysctl}) */
        public Builder allowSysctls(Collection<String> names) { sysctls.addAll(names); return this; }
        /** @return this; {@code security-opt} may give these values, exactly ({@code --allow-security-opt}) */
        public Builder allowSecurityOpts(Collection<String> values) { securityOpts.addAll(values); return this; }

        /**
         * @return the policy
         * @throws IllegalArgumentException naming the option when a host path prefix, device path or sysctl rule is malformed
         */
        public Policy build() { return new Policy(this); }
    }

    /**
     * @param spec a container spec
     * @return what this policy refuses in it, each naming the field and the agent option that would allow it; empty
     *         when allowed
     */
    public List<String> refusals(ContainerSpec spec) {
        List<String> out = new ArrayList<>();
        if (spec.runsPrivileged() && !allowPrivileged) {
            out.add("privileged: true is not allowed on this host (the agent allows it with --allow-privileged)");
        }
        if (spec.sharesHostPid() && !allowHostPid) {
            out.add("pid: host is not allowed on this host (the agent allows it with --allow-host-pid)");
        }
        if (HOST_NETWORK.equals(spec.network()) && !allowHostNetwork) {
            out.add("network: host (also the default of a container that names no network) " + HOST_NETWORK_REFUSED);
        }
        for (String cap : spec.capAdd()) {
            if (!allowedCaps.contains(cap)) {
                out.add("cap-add: " + cap + " is not allowed on this host (the agent allows it with --allow-cap " + cap + ")");
            }
        }
        for (String d : spec.devices()) {
            String host = d.split(":", -1)[0];
            if (!allowedDevices.contains(host)) {
                out.add("devices: " + d + " is not allowed on this host (the agent allows it with --allow-device " + host + ")");
            }
        }
        for (String name : spec.sysctls().keySet()) {
            if (!sysctlAllowed(name)) {
                out.add("sysctls: " + name + " is not allowed on this host (the agent allows it with --allow-sysctl " + name + ")");
            }
        }
        for (String o : spec.securityOpt()) {
            if (!allowedSecurityOpts.contains(o)) {
                out.add("security-opt: " + o + " is not allowed on this host (the agent allows it with --allow-security-opt " + o + ")");
            }
        }
        volumeRefusals(spec.volumes(), out);
        return out;
    }

    /**
     * @param step a window's step
     * @return what this policy refuses in it (host network, host-path volumes); empty when allowed
     */
    public List<String> refusals(StepSpec step) {
        List<String> out = new ArrayList<>();
        if (HOST_NETWORK.equals(step.network()) && !allowHostNetwork) out.add("step.network: host " + HOST_NETWORK_REFUSED);
        volumeRefusals(step.volumes(), out);
        return out;
    }

    private void volumeRefusals(List<String> volumes, List<String> out) {
        for (String v : volumes) {
            String src = ContainerSpec.volumeSource(v);
            if (!src.startsWith("/")) continue; // a named volume
            if (!allowedHostPath(src)) {
                out.add("volume " + v + ": host path " + src + " is not under an allowed prefix "
                        + (hostPathPrefixes.isEmpty() ? "(none is allowed: use a named volume, or start the agent with --allow-host-path PREFIX)"
                        : hostPathPrefixes + " (the agent allows more with --allow-host-path PREFIX)"));
            }
        }
    }

    /** Exactly named, or under an allowed {@code prefix.*} (by dotted component: {@code net.*} allows {@code net.core.x}). */
    private boolean sysctlAllowed(String name) {
        for (String rule : allowedSysctls) {
            if (rule.equals(name) || (rule.endsWith(".*") && name.startsWith(rule.substring(0, rule.length() - 1)))) return true;
        }
        return false;
    }

    private boolean allowedHostPath(String src) {
        Path p = Path.of(src).normalize();
        if (!under(p, hostPathPrefixes)) return false;
        // Docker follows symbolic links (and creates what is missing): resolve the deepest part that exists, and
        // the path must still be under a prefix.
        Path existing = p;
        while (existing.getParent() != null && !Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) existing = existing.getParent();
        try {
            Path real = existing.toRealPath().resolve(existing.relativize(p));
            List<Path> realPrefixes = new ArrayList<>();
            for (Path prefix : hostPathPrefixes) {
                try {
                    realPrefixes.add(prefix.toRealPath());
                } catch (IOException e) {
                    realPrefixes.add(prefix);
                }
            }
            return under(real, realPrefixes);
        } catch (IOException e) {
            return false; // a dangling link: Docker would create its target, wherever it points
        }
    }

    private static boolean under(Path p, List<Path> prefixes) {
        return prefixes.stream().anyMatch(p::startsWith);
    }

    /** @return the policy as the agent logs it at start */
    @Override
    public String toString() {
        return "host paths under " + (hostPathPrefixes.isEmpty() ? "none" : hostPathPrefixes.toString())
                + ", privileged " + (allowPrivileged ? "allowed" : "refused")
                + ", pid host " + (allowHostPid ? "allowed" : "refused")
                + ", network host " + (allowHostNetwork ? "allowed" : "refused")
                + ", cap-add " + (allowedCaps.isEmpty() ? "none" : new TreeSet<>(allowedCaps).toString())
                + ", devices " + (allowedDevices.isEmpty() ? "none" : new TreeSet<>(allowedDevices).toString())
                + ", sysctls " + (allowedSysctls.isEmpty() ? "none" : new TreeSet<>(allowedSysctls).toString())
                + ", security-opt " + (allowedSecurityOpts.isEmpty() ? "none" : new TreeSet<>(allowedSecurityOpts).toString());
    }
}
