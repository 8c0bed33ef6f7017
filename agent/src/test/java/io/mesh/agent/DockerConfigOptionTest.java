package io.mesh.agent;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mesh-agent --docker-config DIR} (SPEC.md, "Images"): a directory that is not there, or whose config.json cannot
 * be read, stops the agent at start naming it, before it connects to ZooKeeper or Docker.
 */
class DockerConfigOptionTest {
    @TempDir
    Path dir;

    /** Runs {@code mesh-agent window} (it builds its engine first) against nothing: only the option can fail it. */
    private static String[] run(Path config) {
        return new String[] {"window", "--host", "hm-host", "--module", "m", "--schedule", "s", "--zk", "127.0.0.1:1",
                "--docker-host", "unix:///nonexistent/docker.sock", "--docker-config", config.toString()};
    }

    private record Result(int code, String err) {}

    private static Result main(String... args) {
        CommandLine cl = AgentMain.commandLine();
        StringWriter err = new StringWriter();
        cl.setErr(new PrintWriter(err, true));
        return new Result(cl.execute(args), err.toString());
    }

    @Test
    void aDirectoryThatIsNotThereIsNamed() {
        Result r = main(run(dir.resolve("absent")));
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("--docker-config " + dir.resolve("absent") + " is not a directory");
    }

    @Test
    void aConfigJsonThatCannotBeReadIsNamed() throws Exception {
        Files.writeString(dir.resolve("config.json"), "{\"auths\": ");
        Result r = main(run(dir));
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.err()).contains("cannot read " + dir.resolve("config.json")).contains("--docker-config");
    }
}
