package io.mesh.docker;

import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.InternalServerErrorException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Which answers to a start are a refusal for good ({@link StaleTaskException}); the messages are dockerd 20.10's. */
class StaleTaskExceptionTest {
    private static final String ID = "818939770a277d189154c8e56b578ae6da530efd9be80994ab57fda2dad18d46";

    @Test
    void aTaskOrContainerContainerdKeepsIsARefusalForGood() {
        assertThat(StaleTaskException.is(new InternalServerErrorException("Status 500: {\"message\":\"task " + ID + ": already exists\"}"), ID))
                .isTrue();
        assertThat(StaleTaskException.is(new InternalServerErrorException("Status 500: {\"message\":\"id already in use\"}"), ID)).isTrue();
        // moby/moby#36145's form
        assertThat(StaleTaskException.is(new InternalServerErrorException("Status 500: {\"message\":\"container \\\"" + ID
                + "\\\": already exists\"}"), ID)).isTrue();
    }

    @Test
    void aDockerdGoingAwayOrAnotherAnswerIsNot() {
        // what a start got while dockerd shut down (the same run): retried until the engine is back
        assertThat(StaleTaskException.is(new InternalServerErrorException("Status 500: {\"message\":\"transport is closing: unavailable\"}"), ID))
                .isFalse();
        // a new container of the same name would meet this one again: not a refusal of this container alone
        assertThat(StaleTaskException.is(new InternalServerErrorException("Status 500: {\"message\":\"endpoint with name x-web "
                + "already exists in network host\"}"), ID)).isFalse();
        // a task of another container's id
        assertThat(StaleTaskException.is(new InternalServerErrorException("Status 500: {\"message\":\"task " + ID.replace('8', '9')
                + ": already exists\"}"), ID)).isFalse();
        assertThat(StaleTaskException.is(new ConflictException("Status 409: {\"message\":\"name already in use\"}"), ID)).isFalse();
        assertThat(StaleTaskException.is(new IllegalStateException("already exists"), ID)).isFalse();
    }
}
