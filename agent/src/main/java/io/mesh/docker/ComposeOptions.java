package io.mesh.docker;

import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.model.Device;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.LogConfig;
import com.github.dockerjava.api.model.Ulimit;
import io.mesh.manifest.ContainerSpec;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Puts a container's compose-grade fields (SPEC.md, "Containers"; decision 17) on Docker's create call, with Docker's
 * meaning for each: {@code entrypoint}, {@code user}, {@code working-dir}, {@code hostname}, {@code stop-signal} and
 * the operator's {@code labels} on the container's config; {@code memory}, {@code cpus}, {@code pids-limit},
 * {@code ulimits}, {@code tmpfs}, {@code read-only}, {@code extra-hosts}, {@code init}, {@code logging}, {@code dns},
 * {@code devices}, {@code sysctls} and {@code security-opt} on its host config. An absent field is not sent, so Docker
 * (or the image) keeps its default. The agent's {@code Policy} has allowed devices, sysctls and security options
 * before this is called.
 */
final class ComposeOptions {
    private ComposeOptions() {}

    /**
     * @param spec   the container's spec, validated by the manifest parser
     * @param cmd    the create command
     * @param hc     its host config
     * @param labels mesh's own labels ({@link Labels}); they are set after the operator's, and no operator label starts
     *               with {@code mesh.} (the parser refuses it)
     */
    static void apply(ContainerSpec spec, CreateContainerCmd cmd, HostConfig hc, Map<String, String> labels) {
        Map<String, String> all = new LinkedHashMap<>(spec.labels());
        all.putAll(labels);
        cmd.withLabels(all);
        if (!spec.entrypoint().isEmpty()) cmd.withEntrypoint(spec.entrypoint());
        if (spec.user() != null) cmd.withUser(spec.user());
        if (spec.workingDir() != null) cmd.withWorkingDir(spec.workingDir());
        if (spec.hostname() != null) cmd.withHostName(spec.hostname());
        if (spec.stopSignal() != null) cmd.withStopSignal(spec.stopSignal());

        if (spec.memory() != null) hc.withMemory(spec.memoryBytes());
        if (spec.cpus() != null) hc.withNanoCPUs(spec.nanoCpus());
        if (spec.pidsLimit() != null) hc.withPidsLimit(spec.pidsLimit());
        if (!spec.ulimits().isEmpty()) {
            hc.withUlimits(spec.ulimits().entrySet().stream()
                    .map(e -> new Ulimit(e.getKey(), e.getValue().soft(), e.getValue().hard())).toList());
        }
        if (!spec.tmpfs().isEmpty()) hc.withTmpFs(tmpfs(spec.tmpfs()));
        if (spec.readOnlyRootfs()) hc.withReadonlyRootfs(true);
        if (!spec.extraHosts().isEmpty()) hc.withExtraHosts(spec.extraHosts().toArray(String[]::new));
        if (spec.runsInit()) hc.withInit(true);
        if (spec.logging() != null) {
            ContainerSpec.Logging l = spec.logging();
            hc.withLogConfig(new LogConfig(l.driver() == null ? null : LogConfig.LoggingType.fromValue(l.driver()),
                    l.options().isEmpty() ? null : l.options()));
        }
        if (!spec.dns().isEmpty()) hc.withDns(spec.dns());
        if (!spec.devices().isEmpty()) hc.withDevices(spec.devices().stream().map(ComposeOptions::device).toList());
        if (!spec.sysctls().isEmpty()) hc.withSysctls(spec.sysctls());
        if (!spec.securityOpt().isEmpty()) hc.withSecurityOpts(spec.securityOpt());
    }

    /** {@code "/run:size=64m"} → {@code /run → size=64m}: Docker's {@code Tmpfs} map of path to mount options. */
    static Map<String, String> tmpfs(List<String> entries) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String t : entries) {
            int colon = t.indexOf(':');
            out.put(colon < 0 ? t : t.substring(0, colon), colon < 0 ? "" : t.substring(colon + 1));
        }
        return out;
    }

    /** {@code host[:container[:rwm]]}: the container path defaults to the host's, the permissions to {@code rwm}, as in compose. */
    static Device device(String d) {
        String[] p = d.split(":", -1);
        return new Device(p.length > 2 ? p[2] : "rwm", p.length > 1 ? p[1] : p[0], p[0]);
    }
}
