package io.mesh.client;

import io.mesh.coordinator.CoordinatorFixture;
import io.mesh.coordinator.Manifests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Ctrl-C of {@code mesh push --wait}: the real client in its own JVM, stopped by a real SIGINT, says that the push goes
 * on and how to follow it ({@link InterruptNotice}); a wait that ends by itself says nothing of the kind.
 */
class InterruptNoticeTest {
    @RegisterExtension
    static final CoordinatorFixture fx = new CoordinatorFixture();
    @TempDir
    Path dir;

    /** Starts {@code mesh ARGS} as its own JVM, on this test's class path, printing into files under {@link #dir}. */
    private Process mesh(String name, String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "-cp", System.getProperty("java.class.path"), MeshCli.class.getName()));
        command.addAll(List.of(args));
        command.add("--coordinator=" + fx.api.uri());
        return new ProcessBuilder(command).redirectOutput(dir.resolve(name + ".out").toFile())
                .redirectError(dir.resolve(name + ".err").toFile()).start();
    }

    private String read(String file) throws Exception { return Files.readString(dir.resolve(file), StandardCharsets.UTF_8); }

    @Test
    void ctrlCOfPushWaitSaysThePushGoesOnAndHowToFollowIt() throws Exception {
        Path m = Files.writeString(dir.resolve("m.yaml"), Manifests.store("[host-without-agent]"));
        Process p = mesh("wait", "push", m.toString(), "--wait", "--timeout", "5m", "--interval", "200ms");
        try {
            await().atMost(60, TimeUnit.SECONDS).until(() -> read("wait.out").contains("push-0000000000"));
            Process kill = new ProcessBuilder("kill", "-INT", String.valueOf(p.pid())).start();
            assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("the client stopped on SIGINT").isTrue();
        } finally {
            p.destroyForcibly();
        }
        assertThat(read("wait.err")).contains("mesh push: interrupted: push-0000000000 goes on without this client",
                "follow it with: mesh status push-0000000000");

        // A wait that ends by itself (here its timeout) leaves no notice behind for the JVM's exit.
        Process q = mesh("timeout", "push", m.toString(), "--wait", "--timeout", "1s", "--interval", "200ms");
        try {
            assertThat(q.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(q.exitValue()).as(read("timeout.err")).isEqualTo(ExitCodes.TIMEOUT);
        } finally {
            q.destroyForcibly();
        }
        assertThat(read("timeout.err")).contains("timed out").doesNotContain("interrupted");
    }
}
