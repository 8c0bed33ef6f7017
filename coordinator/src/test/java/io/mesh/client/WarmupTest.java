package io.mesh.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The run {@code deploy/bin/mesh} makes its class-data archive from: every command succeeds against the stand-in. */
class WarmupTest {
    @Test
    void everyCommandRunsAgainstTheStandIn() throws Exception {
        assertThat(Warmup.run()).containsOnly(ExitCodes.OK).hasSize(4);
    }
}
