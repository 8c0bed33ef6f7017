package io.mesh.docker;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Executors whose threads exist only while there is work: an agent at rest keeps no thread per module or per task
 * kind (docs/benchmark-notes.md, B8). Plain {@link ThreadPoolExecutor}s; their threads are daemon threads and end
 * after {@link #IDLE} without a task, a new one starts with the next task.
 */
public final class IdleThreads {
    /**
     * How long a thread waits for its next task before it ends. Shorter than the reconcile interval (60 s by default),
     * so that the threads of one reconcile are gone before the next one.
     */
    public static final Duration IDLE = Duration.ofSeconds(5);

    private IdleThreads() {}

    /**
     * One thread at most, tasks run one at a time in the order submitted, as
     * {@link java.util.concurrent.Executors#newSingleThreadExecutor} does.
     *
     * @param name the thread's name
     * @return the executor; the caller shuts it down
     */
    public static ExecutorService serial(String name) {
        ThreadPoolExecutor e = new ThreadPoolExecutor(1, 1, IDLE.toMillis(), TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), r -> daemon(r, name));
        e.allowCoreThreadTimeOut(true);
        return e;
    }

    /**
     * A thread per task running at once, none kept while idle, as {@link java.util.concurrent.Executors#newCachedThreadPool}
     * does (which keeps its threads 60 s).
     *
     * @param name the threads' name, numbered {@code name-1}, {@code name-2} ...
     * @return the executor; the caller shuts it down
     */
    public static ExecutorService onDemand(String name) {
        AtomicInteger n = new AtomicInteger();
        ThreadFactory f = r -> daemon(r, name + "-" + n.incrementAndGet());
        return new ThreadPoolExecutor(0, Integer.MAX_VALUE, IDLE.toMillis(), TimeUnit.MILLISECONDS, new SynchronousQueue<>(), f);
    }

    /**
     * One thread at most for delayed tasks, kept only while a task waits or runs: a worker whose queue is empty ends
     * after {@link #IDLE}, and {@link ThreadPoolExecutor} keeps one while a delayed task is queued.
     *
     * @param name the thread's name
     * @return the executor; cancelled tasks leave its queue at once
     */
    public static ScheduledThreadPoolExecutor timer(String name) {
        ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> daemon(r, name));
        e.setKeepAliveTime(IDLE.toMillis(), TimeUnit.MILLISECONDS);
        e.allowCoreThreadTimeOut(true);
        e.setRemoveOnCancelPolicy(true);
        return e;
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
