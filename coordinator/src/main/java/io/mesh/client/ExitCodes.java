package io.mesh.client;

/**
 * The exit codes of {@code mesh} (README, "Exit codes"; what each means for each command: {@link MeshCli} and the
 * command's help). Beside the command list rather than in it: the commands return them, and a command needs nothing of
 * the list that names it.
 */
public final class ExitCodes {
    /** Success. */
    public static final int OK = 0;
    /** A host failed the push, or an unexpected error. */
    public static final int FAILED = 1;
    /** Bad input: invalid manifest or arguments, unauthorized, unknown push, too large. */
    public static final int BAD_INPUT = 2;
    /** {@code push --wait} timed out before every host was done; {@code hold}: recorded, not yet confirmed by its host. */
    public static final int TIMEOUT = 3;
    /** The coordinator cannot be reached or answers 5xx. */
    public static final int UNREACHABLE = 4;

    private ExitCodes() {}
}
