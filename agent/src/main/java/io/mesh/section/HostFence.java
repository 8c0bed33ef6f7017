package io.mesh.section;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The host fence: a lock per module on this host that cannot lapse, so that a process whose ZooKeeper lock lapsed
 * (session expired, process paused past its session) cannot make a Docker call on the module while another process
 * does (docs/decisions/0008-host-fence.md).
 *
 * <p>Two locks make it: a JVM-local semaphore per lock file (threads of one process; the JDK refuses a second
 * {@link FileLock} on one file in one JVM) and a kernel lock ({@code fcntl}, through {@link FileChannel#tryLock()})
 * on {@code <state-dir>/fences/<module>.lock}, which the kernel drops when the process dies, and keeps while it is
 * stopped or frozen. Who holds it is written beside it, in {@code <module>.holder}: never read from the lock file
 * itself, because closing any descriptor of a file drops every {@code fcntl} lock this process has on it.
 *
 * <p>Every mesh process of a host must share {@code --state-dir} (SPEC, "Commands"), as they do for the window journal.
 */
public final class HostFence {
    /** One permit per lock file in this JVM, keyed by its absolute path. */
    private static final Map<Path, Semaphore> LOCAL = new ConcurrentHashMap<>();
    /** How often a wait tries the kernel lock again (it has no blocking wait with a timeout). */
    private static final long POLL_MILLIS = 20;

    private final Path dir;

    /** @param stateDir the agent's {@code --state-dir}; fences live in its {@code fences/} folder */
    public HostFence(Path stateDir) {
        this.dir = stateDir.toAbsolutePath().normalize().resolve("fences");
    }

    /** A held fence; {@link #close()} releases it (kernel lock first, then the JVM's). Closed once. */
    public static final class Held implements AutoCloseable {
        private final String module;
        private final Semaphore local;
        private final FileChannel channel;
        private final FileLock lock;
        private boolean closed;

        private Held(String module, Semaphore local, FileChannel channel, FileLock lock) {
            this.module = module;
            this.local = local;
            this.channel = channel;
            this.lock = lock;
        }

        /** @return the module this fence is for */
        public String module() { return module; }

        /** @return true until closed */
        public synchronized boolean valid() { return !closed && lock.isValid(); }

        @Override
        public synchronized void close() {
            if (closed) return;
            closed = true;
            try {
                lock.release();
            } catch (IOException ignored) {
                // closing the channel below drops it too
            } finally {
                try {
                    channel.close();
                } catch (IOException ignored) {
                    // the descriptor is gone either way
                }
                local.release();
            }
        }
    }

    /**
     * Takes the module's fence, waiting at most {@code wait}.
     *
     * @param module module name
     * @param holder who takes it, one line (written beside the lock for {@link #holder(String)})
     * @param wait   the longest wait; zero tries once
     * @return the held fence, or empty when another thread or process held it for the whole wait
     * @throws InterruptedException when interrupted while waiting (nothing is held then)
     * @throws UncheckedIOException  when the state directory cannot be written
     */
    public Optional<Held> acquire(String module, String holder, Duration wait) throws InterruptedException {
        long end = System.nanoTime() + Math.max(0, wait.toNanos());
        Path file = dir.resolve(module + ".lock");
        Semaphore local = LOCAL.computeIfAbsent(file, f -> new Semaphore(1, true));
        if (!local.tryAcquire(Math.max(0, wait.toNanos()), TimeUnit.NANOSECONDS)) return Optional.empty();
        FileChannel channel = null;
        try {
            // A stat first: createDirectories on a directory that exists fails inside with an exception, whose stack
            // was a few per cent of an apply's CPU (docs/benchmark-notes.md, B5).
            if (!Files.isDirectory(dir)) Files.createDirectories(dir);
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            while (true) {
                FileLock lock = channel.tryLock();
                if (lock != null) {
                    Held held = new Held(module, local, channel, lock);
                    writeHolder(module, holder);
                    return Optional.of(held);
                }
                if (System.nanoTime() >= end) break;
                Thread.sleep(POLL_MILLIS);
            }
        } catch (IOException e) {
            closeQuietly(channel);
            local.release();
            throw new UncheckedIOException("cannot take the host fence " + file + ": " + e.getMessage() + " (check --state-dir)", e);
        } catch (InterruptedException | RuntimeException e) {
            closeQuietly(channel);
            local.release();
            throw e;
        }
        closeQuietly(channel);
        local.release();
        return Optional.empty();
    }

    /**
     * Whether nobody holds the module's fence now: a probe that takes it for the time of one {@code tryLock} and gives
     * it back at once, writing nothing (not the holder). Never waits: a fence another thread of this JVM holds, or
     * another process, is not free. Used to tell that a journalled window is not running (its process would hold the
     * fence: docs/decisions/0008-host-fence.md, item 4).
     *
     * @param module module name
     * @return true when it is free (or was never taken: no lock file)
     */
    public boolean free(String module) {
        Path file = dir.resolve(module + ".lock");
        if (!Files.exists(file)) return true;
        Semaphore local = LOCAL.computeIfAbsent(file, f -> new Semaphore(1, true));
        if (!local.tryAcquire()) return false;
        // Holding the JVM's permit, no thread of this process holds the kernel lock: closing this descriptor (which
        // drops every fcntl lock of the process on the file) takes nothing from anyone.
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            FileLock lock = channel.tryLock();
            if (lock == null) return false;
            lock.release();
            return true;
        } catch (NoSuchFileException e) {
            return true;
        } catch (IOException | java.nio.channels.OverlappingFileLockException e) {
            return false;
        } finally {
            local.release();
        }
    }

    /**
     * @param module module name
     * @return who took the module's fence last (it may have been released since), or {@code "unknown"}
     */
    public String holder(String module) {
        try {
            return Files.readString(dir.resolve(module + ".holder"), StandardCharsets.UTF_8).strip();
        } catch (NoSuchFileException e) {
            return "unknown";
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    private void writeHolder(String module, String holder) {
        // Best effort, and a separate file: see the class comment. Torn reads only cost a garbled log line.
        try (FileChannel c = FileChannel.open(dir.resolve(module + ".holder"), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            c.write(ByteBuffer.wrap((holder + "\n").getBytes(StandardCharsets.UTF_8)));
        } catch (IOException ignored) {
            // who holds the fence is a courtesy for logs; the fence itself is held
        }
    }

    private static void closeQuietly(FileChannel c) {
        if (c == null) return;
        try {
            c.close();
        } catch (IOException ignored) {
            // nothing held through it
        }
    }
}
