package io.mesh.window;

import io.mesh.docker.ContainerRuntime;
import io.mesh.ledger.Ledger;
import io.mesh.policy.Policy;
import io.mesh.secrets.DigestKey;
import io.mesh.secrets.SecretsDir;
import io.mesh.wire.ProcessRef;
import io.mesh.zk.MeshStore;

/**
 * What a mesh process on this host works with when it changes the host's containers: an apply
 * ({@code io.mesh.apply.Applier}), a window ({@link WindowRunner}) and the recovery of a window ({@link WindowRecovery}).
 * It lives beside the window journal, the one part of it that is the window's own.
 *
 * @param store   ZooKeeper access
 * @param docker  the local container runtime
 * @param host    this host's id
 * @param process this process, as lock, window and held nodes name it
 * @param journal the host's window journal ({@code --state-dir}), shared by every mesh process on the host
 * @param policy  what containers and steps may do to this host (decision 12); checked before every create, recreate
 *                and before a window stops anything
 * @param secrets the host's secrets dir ({@code --secrets-dir}), read at every apply of a module with secrets; a step's
 *                log lines lose the secret values of the container its {@code volumes-from} names (decision 18)
 * @param ledger  this process's writer of the host's ledger (decision 28): every module section records its calls
 *                there; {@link Ledger#NONE} when the process keeps none
 */
public record HostContext(MeshStore store, ContainerRuntime docker, String host, ProcessRef process, WindowJournal journal,
                          Policy policy, SecretsDir secrets, Ledger ledger) {

    /** A null ledger is {@link Ledger#NONE}. */
    public HostContext {
        ledger = ledger == null ? Ledger.NONE : ledger;
    }

    /** A context that keeps no ledger. */
    public HostContext(MeshStore store, ContainerRuntime docker, String host, ProcessRef process, WindowJournal journal,
                       Policy policy, SecretsDir secrets) {
        this(store, docker, host, process, journal, policy, secrets, Ledger.NONE);
    }

    /**
     * @return a context with the default policy ({@link Policy#DEFAULT}) and the default secrets dir
     *         ({@link SecretsDir#DEFAULT}, keyed from the journal's state dir)
     */
    public static HostContext of(MeshStore store, ContainerRuntime docker, String host, ProcessRef process,
                                 WindowJournal journal) {
        return new HostContext(store, docker, host, process, journal, Policy.DEFAULT,
                new SecretsDir(SecretsDir.DEFAULT, new DigestKey(journal.stateDir())));
    }

    /** @return this context with that policy */
    public HostContext withPolicy(Policy p) {
        return new HostContext(store, docker, host, process, journal, p, secrets, ledger);
    }

    /** @return this context with that secrets dir */
    public HostContext withSecrets(SecretsDir s) {
        return new HostContext(store, docker, host, process, journal, policy, s, ledger);
    }

    /** @return this context with that container runtime (a wrapped or cut engine, in tests) */
    public HostContext withDocker(ContainerRuntime d) {
        return new HostContext(store, d, host, process, journal, policy, secrets, ledger);
    }

    /** @return this context with that ledger */
    public HostContext withLedger(Ledger l) {
        return new HostContext(store, docker, host, process, journal, policy, secrets, l);
    }

    /** @return the recovery of this host's journalled windows */
    public WindowRecovery recovery() {
        return new WindowRecovery(store, docker, host, process, journal, secrets, ledger);
    }
}
