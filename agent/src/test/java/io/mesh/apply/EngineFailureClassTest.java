package io.mesh.apply;

import io.mesh.docker.DockerEngine;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Failure model row 110: what reads as the engine's failure ({@link ApplyExecution#theEngines}). A Docker socket with no
 * dockerd behind it is the engine's, also under a pull's wrapping; a pull Docker refused is not (the real engine).
 */
class EngineFailureClassTest {
    @Test
    void anEngineThatIsNotThereIsTheEnginesFailure() throws Exception {
        try (DockerEngine away = new DockerEngine("unix:///tmp/mesh-review-no-dockerd.sock", Duration.ofSeconds(5))) {
            RuntimeException e = catchThrowableOfType(RuntimeException.class, () -> away.inspect("mesh-review-none"));
            assertThat(e).isNotNull();
            assertThat(io.mesh.docker.DockerAnswer.theEngines(e)).as("%s", e).isTrue();
            RuntimeException pull = catchThrowableOfType(RuntimeException.class, () -> away.pull("mesh-review/none:1"));
            assertThat(pull).isNotNull();
            assertThat(io.mesh.docker.DockerAnswer.theEngines(pull)).as("%s", pull).isTrue();
        }
    }

    @Test
    void aPullDockerRefusedIsNotTheEngines() {
        RuntimeException pull = catchThrowableOfType(RuntimeException.class,
                () -> io.mesh.testing.TestDocker.engine().pull("127.0.0.1:1/mesh-review/none:1"));
        assertThat(pull).isNotNull();
        assertThat(io.mesh.docker.DockerAnswer.theEngines(pull)).as("%s", pull).isFalse();
    }
}
