package io.mesh.agent;

import io.mesh.policy.Policy;
import io.mesh.secrets.DigestKey;
import io.mesh.secrets.SecretsDir;
import io.mesh.wire.ZkPaths;

import java.nio.file.Path;
import java.time.Duration;

/**
 * What an agent needs to know about its place in the fleet.
 *
 * @param host              this host's id ({@link ZkPaths#checkHost(String)})
 * @param paths             the ZooKeeper layout ({@code --zk-root})
 * @param stateDir          where the agent keeps local state ({@code --state-dir})
 * @param reconcileInterval how often every module is applied even without a change ({@code --reconcile-interval}, 60 s)
 * @param applyLockWait     how long an apply waits for the module lock before reporting {@code deferred} (2 s)
 * @param windowLockWait    how long a window waits for the module lock (an apply in progress) before failing (10 min)
 * @param policy            what containers and steps may do to this host ({@code --allow-*}; {@link Policy#DEFAULT})
 * @param secretsDir        where the files containers' {@code secrets} name live ({@code --secrets-dir};
 *                          {@link SecretsDir#DEFAULT})
 */
public record AgentConfig(String host, ZkPaths paths, Path stateDir, Duration reconcileInterval,
                          Duration applyLockWait, Duration windowLockWait, Policy policy, Path secretsDir) {
    /** mesh's version, as {@code /mesh/agents/<host>} reports it. */
    public static final String VERSION = io.mesh.wire.MeshVersion.CURRENT;

    /** A null policy is {@link Policy#DEFAULT}, a null secrets dir {@link SecretsDir#DEFAULT}. */
    public AgentConfig {
        policy = policy == null ? Policy.DEFAULT : policy;
        secretsDir = secretsDir == null ? SecretsDir.DEFAULT : secretsDir;
    }

    /** A configuration with the default secrets dir. */
    public AgentConfig(String host, ZkPaths paths, Path stateDir, Duration reconcileInterval,
                       Duration applyLockWait, Duration windowLockWait, Policy policy) {
        this(host, paths, stateDir, reconcileInterval, applyLockWait, windowLockWait, policy, SecretsDir.DEFAULT);
    }

    /** @return the secrets dir, its digests keyed by the key in the state dir (decision 18) */
    public SecretsDir secrets() {
        return new SecretsDir(secretsDir, new DigestKey(stateDir));
    }

    /**
     * A configuration with the default {@link Policy}.
     *
     * @param host              this host's id
     * @param paths             the ZooKeeper layout
     * @param stateDir          local state directory
     * @param reconcileInterval reconcile interval
     * @param applyLockWait     apply lock wait
     * @param windowLockWait    window lock wait
     */
    public AgentConfig(String host, ZkPaths paths, Path stateDir, Duration reconcileInterval,
                       Duration applyLockWait, Duration windowLockWait) {
        this(host, paths, stateDir, reconcileInterval, applyLockWait, windowLockWait, Policy.DEFAULT);
    }
}
