package io.mesh.policy;

import io.mesh.wire.ContainerSpec;
import io.mesh.wire.StepSpec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What this agent lets a manifest do to its host (docs/security.md, threats 14 and 15): the agent runs as root next to
 * dockerd, so it, not the manifest, decides whether a container may bind a host path (only under an
 * {@code --allow-host-path} prefix, checked again after resolving symbolic links), run privileged
 * ({@code --allow-privileged}), share the host's PID namespace ({@code --allow-host-pid}) or add a capability
 * ({@code --allow-cap}). Checked by the apply before any create or recreate and by the window before a step container
 * is made. Immutable and thread-safe.
 */
public final class Policy {
    /** The default: named volumes only; no privileged mode, host PID or added capability. */
    public static final Policy DEFAULT = new Policy(List.of(), false, false, List.of());

    private final List<Path> hostPathPrefixes;
    private final boolean allowPrivileged;
    private final boolean allowHostPid;
    private final Set<String> allowedCaps;

    /**
     * @param hostPathPrefixes absolute host paths under which bind mounts are allowed ({@code /} allows every path)
     * @param allowPrivileged  whether {@code privileged: true} is allowed
     * @param allowHostPid     whether {@code pid: host} is allowed
     * @param allowedCaps      capabilities {@code cap-add} may name
     * @throws IllegalArgumentException naming the option when a prefix is not an absolute, clean path
     */
    public Policy(Collection<String> hostPathPrefixes, boolean allowPrivileged, boolean allowHostPid, Collection<String> allowedCaps) {
        List<Path> prefixes = new ArrayList<>();
        for (String p : hostPathPrefixes) {
            Path path = Path.of(p);
            if (!path.isAbsolute() || !path.normalize().equals(path) || p.contains("//")) {
                throw new IllegalArgumentException("--allow-host-path '" + p + "' must be an absolute, clean path such as /srv/mesh");
            }
            prefixes.add(path);
        }
        this.hostPathPrefixes = List.copyOf(prefixes);
        this.allowPrivileged = allowPrivileged;
        this.allowHostPid = allowHostPid;
        this.allowedCaps = Set.copyOf(new TreeSet<>(allowedCaps));
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
        for (String cap : spec.capAdd()) {
            if (!allowedCaps.contains(cap)) {
                out.add("cap-add: " + cap + " is not allowed on this host (the agent allows it with --allow-cap " + cap + ")");
            }
        }
        volumeRefusals(spec.volumes(), out);
        return out;
    }

    /**
     * @param step a window's step
     * @return what this policy refuses in it (host-path volumes); empty when allowed
     */
    public List<String> refusals(StepSpec step) {
        List<String> out = new ArrayList<>();
        volumeRefusals(step.volumes(), out);
        return out;
    }

    private void volumeRefusals(List<String> volumes, List<String> out) {
        for (String v : volumes) {
            String src = v.split(":", -1)[0];
            if (!src.startsWith("/")) continue; // a named volume
            if (!allowedHostPath(src)) {
                out.add("volume " + v + ": host path " + src + " is not under an allowed prefix "
                        + (hostPathPrefixes.isEmpty() ? "(none is allowed: use a named volume, or start the agent with --allow-host-path PREFIX)"
                        : hostPathPrefixes + " (the agent allows more with --allow-host-path PREFIX)"));
            }
        }
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
                + ", cap-add " + (allowedCaps.isEmpty() ? "none" : new TreeSet<>(allowedCaps).toString());
    }
}
