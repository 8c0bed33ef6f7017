package io.mesh.testing;

import java.io.IOException;
import java.util.Arrays;

/**
 * Runs another class's {@code main} in a child JVM that the tests start, and halts that JVM as soon as its standard
 * input reaches end of file, which happens when the test JVM that holds the other end of the pipe dies. So a test
 * run that is killed never leaves ZooKeeper servers or mesh processes behind.
 *
 * <p>Usage: {@code java -cp CP io.mesh.testing.Orphanless MAIN-CLASS ARGS...}
 */
public final class Orphanless {
    private Orphanless() {}

    /**
     * @param args the main class, then its arguments
     * @throws Throwable whatever the wrapped main throws
     */
    public static void main(String[] args) throws Throwable {
        Thread watch = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // the test JVM never writes; wait for end of file
                }
            } catch (IOException ignored) {
                // closed: same as end of file
            }
            Runtime.getRuntime().halt(137);
        }, "orphanless");
        watch.setDaemon(true);
        watch.start();
        Class<?> main = Class.forName(args[0]);
        try {
            main.getMethod("main", String[].class).invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
