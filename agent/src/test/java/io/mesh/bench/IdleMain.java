package io.mesh.bench;

/**
 * B8's floor: a {@code main} that says it started and then only sleeps, run by {@link AgentIdleBench} through the
 * agent's own launcher and flags, so that the threads and memory every JVM of that kind has are measured beside the
 * agent's.
 */
public final class IdleMain {
    /** The line it prints once started. */
    static final String STARTED = "idle";

    private IdleMain() {}

    public static void main(String[] args) throws InterruptedException {
        System.out.println(STARTED);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
