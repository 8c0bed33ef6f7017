package io.mesh.testing;

import io.mesh.policy.Policy;

/**
 * The agent policy of the tests' agents, appliers and windows: the default ({@link Policy#DEFAULT}: named volumes only,
 * nothing privileged) plus the host's network, which the tests' containers use as the demos' do (SPEC.md, "Local
 * engine": {@code network: host}, bound to 127.0.0.1), so they allow it as the demos' agents do, with
 * {@code --allow-host-network}. A test of what the policy refuses gives its own.
 */
public final class TestPolicy {
    /** {@link Policy#DEFAULT} and {@code --allow-host-network}. */
    public static final Policy HOST_NETWORK = Policy.builder().allowHostNetwork(true).build();
    /** What a child JVM's {@code mesh-agent run} or {@code window} is given for the same policy. */
    public static final String HOST_NETWORK_FLAG = "--allow-host-network";

    private TestPolicy() {}
}
