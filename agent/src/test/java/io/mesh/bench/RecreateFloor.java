package io.mesh.bench;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.RestartPolicy;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.httpclient5.ApacheDockerHttpClient;
import io.mesh.docker.Labels;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * B2's floor: the Docker calls a recreate that keeps the old container until the new one starts cannot do without,
 * issued through docker-java directly, every container at once: create the new one aside, stop the old one, rename
 * the old one aside and the new one to the name, start the new one, remove the old one (6 calls per container). No
 * readiness wait, no restart-policy juggling, no checks: what any correct implementation of the same recreate must
 * at least ask of dockerd. Its containers carry {@code mesh.module=<module>} (a {@code bench-} name) only so that
 * run.sh's cleanup finds them.
 */
final class RecreateFloor implements AutoCloseable {
    private final DockerClient docker;
    private final ExecutorService pool;
    private final String module, command;
    private final int n;
    private final List<String> ids = new ArrayList<>();

    /**
     * @param module  the {@code mesh.module} label of its containers (named {@code <module>-cNN})
     * @param command the containers' {@code sh -c} command
     * @param n       how many containers
     */
    RecreateFloor(String module, String command, int n) {
        DefaultDockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder().build();
        this.docker = DockerClientImpl.getInstance(config, new ApacheDockerHttpClient.Builder().dockerHost(config.getDockerHost())
                .sslConfig(config.getSSLConfig()).maxConnections(32).connectionTimeout(Duration.ofSeconds(10)).build());
        this.pool = Executors.newFixedThreadPool(n);
        this.module = module;
        this.command = command;
        this.n = n;
    }

    /** Creates and starts the first generation (not measured). */
    void up() throws Exception {
        for (int i = 0; i < n; i++) {
            String id = create(name(i), 0);
            docker.startContainerCmd(id).exec();
            ids.add(id);
        }
    }

    /** Recreates all n containers at once with env {@code BENCH_ROUND=round}; returns when every one is done. */
    void recreate(int round) throws Exception {
        List<Future<String>> fs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String name = name(i), old = ids.get(i);
            fs.add(pool.submit(() -> {
                String id = create(name + ".next", round);
                docker.stopContainerCmd(old).withTimeout(1).exec();
                docker.renameContainerCmd(old).withName(name + ".prev").exec();
                docker.renameContainerCmd(id).withName(name).exec();
                docker.startContainerCmd(id).exec();
                docker.removeContainerCmd(old).withForce(true).exec();
                return id;
            }));
        }
        for (int i = 0; i < n; i++) ids.set(i, fs.get(i).get(2, TimeUnit.MINUTES));
    }

    private String create(String name, int round) {
        return docker.createContainerCmd("mesh-demo/busybox:1").withName(name)
                .withCmd("sh", "-c", command).withEnv("BENCH_ROUND=" + round).withStopTimeout(1)
                .withLabels(Map.of(Labels.MODULE, module))
                .withHostConfig(HostConfig.newHostConfig().withNetworkMode("host").withRestartPolicy(RestartPolicy.unlessStoppedRestart()))
                .exec().getId();
    }

    private String name(int i) { return String.format("%s-c%02d", module, i); }

    @Override
    public void close() throws Exception {
        pool.shutdownNow();
        for (var c : docker.listContainersCmd().withShowAll(true).withLabelFilter(Map.of(Labels.MODULE, module)).exec()) {
            docker.removeContainerCmd(c.getId()).withForce(true).exec();
        }
        docker.close();
    }
}
