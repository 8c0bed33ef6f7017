package io.mesh.docker;

import com.github.dockerjava.api.exception.NotFoundException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** A failed call as a report shows it: dockerd's own message and the fix where one is known, never a guess at a 404. */
class DockerAnswerTest {
    @Test
    void dockerdsMessageIsShownWithoutDockerJavasWrappingAndAMissingNetworkGetsItsFix() {
        NotFoundException e = new NotFoundException("Status 404: {\"message\":\"network shop_default not found\"}\n");
        assertThat(DockerAnswer.text(e)).isEqualTo("network shop_default not found");
        assertThat(DockerAnswer.explained(e)).startsWith("network shop_default not found: declare the network")
                .contains("docker network create shop_default");
        assertThat(DockerAnswer.noSuchContainer(e)).as("a 404 for a network is not a missing container").isFalse();
    }

    @Test
    void aMissingContainerIsOneOnlyWhenDockerdSaysSo() {
        assertThat(DockerAnswer.noSuchContainer(new NotFoundException("Status 404: {\"message\":\"No such container: 46b9\"}"))).isTrue();
        assertThat(DockerAnswer.text(new IllegalStateException("plain\nsecond line"))).isEqualTo("plain");
        assertThat(DockerAnswer.fix("device or resource busy")).isNull();
    }

    @Test
    void dockerdShuttingDownIsTheEnginesAnswerNotTheContainers() {
        assertThat(DockerAnswer.engineStopping(new com.github.dockerjava.api.exception.InternalServerErrorException(
                "Status 500: {\"message\":\"get h76da-f-data: database not open\"}"))).isTrue();
        assertThat(DockerAnswer.engineStopping(new com.github.dockerjava.api.exception.InternalServerErrorException(
                "Status 500: {\"message\":\"transport is closing: unavailable\"}"))).isTrue();
        assertThat(DockerAnswer.engineStopping(new com.github.dockerjava.api.exception.InternalServerErrorException(
                "Status 500: {\"message\":\"failed to create task: exec: \\\"nope\\\": executable file not found\"}"))).isFalse();
    }
}
