package io.mesh.apply;

import com.github.dockerjava.api.command.InspectContainerResponse;
import io.mesh.docker.DockerEngine;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A desired node written by a process that bypassed the coordinator (anyone with write access to ZooKeeper, or a
 * bug): the agent validates it as the coordinator would, reports {@code failed} naming the path and the problem,
 * and leaves what runs running. Real Docker engine, real ZooKeeper.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class InvalidDesiredTest {
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "inv"); // one module for the class (PER_CLASS)
    private DockerEngine docker;
    private Applier applier;
    private String module;
    private InspectContainerResponse running;

    @BeforeAll
    void runAModule() throws Exception {
        docker = here.docker();
        module = here.module();
        applier = here.applier();
        zk.setDesired("module: " + module + "\nhosts: [host-a]\ncontainers:\n  web:\n    image: " + BUSYBOX
                + "\n    command: [sh, -c, \"trap 'exit 0' TERM; while true; do sleep 1; done\"]\n    network: none\n    stop-timeout: 1s\n", "r1");
        assertThat(applier.apply(module, () -> false).outcome()).isEqualTo(ApplyOutcome.APPLIED);
        running = docker.inspect(module + "-web");
        assertThat(running.getState().getRunning()).isTrue();
    }

    private String head() {
        return "{\"module\":\"" + module + "\",\"revision\":\"rX\",\"push\":\"push-0000000099\",";
    }

    Stream<Arguments> invalid() {
        String spec = "{\"module\":\"" + module + "\",\"hosts\":[\"host-a\"],\"containers\":{\"web\":{\"image\":\"" + BUSYBOX + "\"}}}";
        String head = head();
        return Stream.of(
                Arguments.of("not JSON", "module: " + module + "\nthis is YAML, not JSON", "is not JSON"),
                Arguments.of("truncated JSON", head + "\"spec\":{\"module\":", "is not JSON"),
                Arguments.of("empty node", "", "has no spec object"),
                Arguments.of("a JSON array", "[1,2,3]", "has no spec object"),
                Arguments.of("missing spec", head + "\"other\":1}", "has no spec object"),
                Arguments.of("spec is a string", head + "\"spec\":\"module: x\"}", "has no spec object"),
                Arguments.of("wrong module", head + "\"spec\":" + spec.replace("\"module\":\"" + module + "\"", "\"module\":\"other\"") + "}",
                        "names module 'other', not '" + module + "'"),
                Arguments.of("unknown container field", head + "\"spec\":" + spec.replace("\"image\"", "\"mem_limit\":\"1g\",\"image\"") + "}",
                        "containers.web.mem_limit"),
                Arguments.of("container name traversal", head + "\"spec\":" + spec.replace("\"web\"", "\"../web\"") + "}",
                        "containers.../web"),
                Arguments.of("bad cap-add", head + "\"spec\":" + spec.replace("\"image\"", "\"cap-add\":\"ALL\",\"image\"") + "}",
                        "containers.web.cap-add"),
                Arguments.of("duplicate key in the spec", head + "\"spec\":" + spec.replace("\"image\"", "\"image\":\"other:1\",\"image\"") + "}",
                        "has a key twice (Duplicate field 'image')"),
                Arguments.of("missing image", head + "\"spec\":" + spec.replace("\"image\":\"" + BUSYBOX + "\"", "\"command\":[\"x\"]") + "}",
                        "containers.web.image"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalid")
    void anInvalidDesiredNodeIsReportedFailedNamingTheProblemAndWhatRunsKeepsRunning(String name, String data, String problem) throws Exception {
        String path = zk.paths().desired(module);
        zk.client().setData().forPath(path, data.getBytes(StandardCharsets.UTF_8));

        ApplyReport r = applier.apply(module, () -> false);

        assertThat(r.outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(r.error()).contains(path, problem);
        assertThat(r.containers()).isEmpty();
        ApplyReport stored = Json.read(zk.client().getData().forPath(zk.paths().report("host-a", module)), ApplyReport.class);
        assertThat(stored.outcome()).isEqualTo(ApplyOutcome.FAILED);
        assertThat(stored.error()).isEqualTo(r.error());
        // The report names the push it failed on whenever the node's own push can be read at all, so that mesh status
        // and the push's status show this failure, not "pending".
        boolean pushReadable = data.startsWith(head()) && !name.equals("truncated JSON");
        assertThat(stored.push()).isEqualTo(pushReadable ? "push-0000000099" : null);
        assertThat(stored.revision()).isEqualTo(pushReadable ? "rX" : null);
        InspectContainerResponse now = docker.inspect(module + "-web");
        assertThat(now.getId()).isEqualTo(running.getId());
        assertThat(now.getState().getRunning()).isTrue();
        assertThat(now.getState().getStartedAt()).isEqualTo(running.getState().getStartedAt());
        assertThat(docker.moduleContainers(module)).hasSize(1);
    }
}
