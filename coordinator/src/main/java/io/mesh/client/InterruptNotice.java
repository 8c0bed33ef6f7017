package io.mesh.client;

import java.util.function.Consumer;

/**
 * What a following command says when it is stopped (Ctrl-C, SIGINT or SIGTERM) while it waits: that what it follows
 * goes on without it, and how to follow it again. A JVM shutdown hook, registered for the wait only: once the wait has
 * ended ({@link #close()}) nothing is said. The hook cannot keep the JVM from stopping, and need not: the push, or the
 * hold, lives in ZooKeeper, not in the client.
 */
final class InterruptNotice implements AutoCloseable {
    private final Thread hook;
    private volatile boolean closed;

    private InterruptNotice(Consumer<String> warn, String message) {
        this.hook = new Thread(() -> {
            if (!closed) warn.accept(message);
        }, "mesh-interrupt-notice");
    }

    /**
     * @param warn    where the notice goes (the command's {@code mesh <command>: ...} on stderr)
     * @param message such as {@code interrupted: push-0000000002 goes on; follow it with mesh status push-0000000002}
     * @return the notice, in force until closed
     */
    static InterruptNotice during(Consumer<String> warn, String message) {
        InterruptNotice n = new InterruptNotice(warn, message);
        Runtime.getRuntime().addShutdownHook(n.hook);
        return n;
    }

    /** Ends the wait: nothing is said from now on. */
    @Override
    public void close() {
        closed = true;
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // The JVM is already stopping: the hook runs, and says nothing since closed is set.
        }
    }
}
