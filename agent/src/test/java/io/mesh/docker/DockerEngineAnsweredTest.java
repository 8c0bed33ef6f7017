package io.mesh.docker;

import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.DockerClientException;
import com.github.dockerjava.api.exception.InternalServerErrorException;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/** Which failures are dockerd's answer ({@link DockerEngine#answered}), which the way to it failing. */
class DockerEngineAnsweredTest {
    @Test
    void anErrorStatusIsAnAnswerACutOrATimeoutIsNot() {
        assertThat(DockerEngine.answered(new InternalServerErrorException("Status 500: {\"message\":\"device or resource busy\"}"))).isTrue();
        assertThat(DockerEngine.answered(new ConflictException("Status 409: removal already in progress"))).isTrue();
        assertThat(DockerEngine.answered(new DockerClientException("java.net.SocketException: No such file or directory"))).isFalse();
        assertThat(DockerEngine.answered(new DockerTimeoutException("fleet-1", "the removal of x", Duration.ofSeconds(30), null))).isFalse();
        assertThat(DockerEngine.answered(new IllegalStateException("Broken pipe"))).isFalse();
    }
}
