package io.mesh.apply;

import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;

import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static io.mesh.testing.TestDocker.BUSYBOX;

/** The module {@link ApplierTest} and {@link ApplierLockAndReportTest} apply: a web container and, optionally, a worker. */
final class WebAndWorker {
    private WebAndWorker() {}

    /**
     * Readiness is ReadinessTest's: here a container counts as soon as it runs.
     *
     * @return the manifest of {@code module} on host-a: web from {@code webImage} with env MODE={@code webEnv}, and a
     *         busybox worker when {@code withWorker}; both exit at once on SIGTERM
     */
    static String yaml(String module, String webImage, String webEnv, boolean withWorker) {
        return "module: " + module + "\nhosts: [host-a]\ncontainers:\n"
                + "  web:\n    image: " + webImage + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n"
                + "    env: {MODE: \"" + webEnv + "\"}\n    network: host\n    stop-timeout: 2s\n    ready: {min-healthy: 0s}\n"
                + (withWorker ? "  worker:\n    image: " + BUSYBOX + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n    network: none\n    stop-timeout: 2s\n    ready: {min-healthy: 0s}\n" : "");
    }

    /** @return the report's containers by name */
    static Map<String, ContainerResult> byName(ApplyReport r) {
        return r.containers().stream().collect(Collectors.toMap(ContainerResult::name, Function.identity()));
    }
}
