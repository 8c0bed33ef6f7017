package io.mesh.ledger;

import io.mesh.wire.Json;
import io.mesh.wire.LedgerEntry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * This process's writer of the host's ledger (SPEC.md, "Audit"; decision 28): appends chained JSON lines to its own
 * file {@code <state-dir>/ledger/<start>-<pid>.jsonl} from one daemon thread, fsync'ing each batch, and starts a new
 * file at {@link #ROTATE_BYTES} or after {@link #ROTATE_AGE}. {@link #write} never blocks and never throws: a line that
 * does not fit the bounded queue is dropped and later said as a {@code gap}, so that a stuck disk never holds up a
 * Docker call or grows the heap.
 */
public class Ledger implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Ledger.class);

    /** The ledger's directory under {@code --state-dir}. */
    public static final String DIR = "ledger";
    /** A file is closed and a new one begun at this size (decision 28). */
    public static final long ROTATE_BYTES = 64L * 1024 * 1024;
    /** ... or at this age (decision 28). */
    public static final Duration ROTATE_AGE = Duration.ofDays(1);
    /** Lines waiting for the writer, at most. */
    public static final int QUEUE = 8192;
    /** A batch is fsync'd at most this long after its first line (decision 28). */
    static final long BATCH_MS = 200;
    /** ... or at this many lines. */
    static final int BATCH_LINES = 512;
    /** How a file's name begins: when it was begun, UTC. */
    static final DateTimeFormatter FILE_TIME = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    /** The suffix every line ends with, before its 16 hex digits and {@code "}}. */
    static final String CHAIN = ",\"chain\":\"";

    /** {@link #writeAhead} waits for its line in slices of this ... */
    public static final Duration AHEAD_WAIT = Duration.ofMillis(200);
    /** ... at most this many (2 s in all) before the call goes on anyway. */
    static final int AHEAD_SLICES = 10;
    /** The longest {@link #writeAhead} waits before a call: what the ledger adds, at most, between a check and its call. */
    public static final Duration AHEAD_MAX = AHEAD_WAIT.multipliedBy(AHEAD_SLICES);
    /**
     * A difference between the engine's clock and this host's below this is the same clock read twice (one kernel),
     * and is not applied: stamps stay this host's clock, exact.
     */
    static final Duration CLOCK_FLOOR = Duration.ofMillis(500);
    /** The longest round trip of a reading of the engine's clock that is taken: its error is at most half of it. */
    static final Duration CLOCK_RTT = Duration.ofMillis(200);
    /** How often the engine's clock is read again. */
    static final Duration CLOCK_EVERY = Duration.ofMinutes(1);
    /**
     * Until a reading was taken, how often the engine's clock is read again: an agent that starts while its
     * engine restarts, or whose first calls are slow, would otherwise stamp a minute of lines (a window's recovery
     * among them) by a host clock that may be minutes off.
     */
    static final Duration CLOCK_RETRY = Duration.ofSeconds(1);
    /**
     * How long {@link #engineClock} waits at most for a first reading before it returns (the readings go on, on the
     * clock thread): the first reading of a cold process (its connection, its classes) takes longer than
     * {@link #CLOCK_RTT}, the next ones do not.
     */
    static final Duration CLOCK_FIRST = Duration.ofSeconds(2);

    /** A ledger that writes nothing: tests and callers that have none. */
    public static final Ledger NONE = new Ledger();

    private final Path dir;
    private final long pid;
    private final long rotateBytes;
    private final Duration rotateAge;
    private final BlockingQueue<LedgerEntry> queue;
    private final Thread writer;
    private final AtomicLong dropped = new AtomicLong();
    /** Of {@link #dropped}: lines the disk did not take (the rest found the queue full). */
    private final AtomicLong unwritten = new AtomicLong();
    private final AtomicReference<Instant> firstDrop = new AtomicReference<>();
    private final Object flushed = new Object();
    private volatile boolean closed;
    /** Callers waiting in {@link #writeAhead}: the writer then writes what it has without waiting for a fuller batch. */
    private final java.util.concurrent.atomic.AtomicInteger urgent = new java.util.concurrent.atomic.AtomicInteger();
    /** The engine's clock minus this host's, in ns, when it is at least {@link #CLOCK_FLOOR}; else 0. */
    private volatile long engineOffsetNanos;
    private volatile java.util.function.Supplier<Instant> engineTime;
    /** Whether a reading of the engine's clock was taken (its difference may be 0). */
    private volatile boolean clockKnown;
    /** Reads the engine's clock, off the writer thread: a Docker call may hang, a line's write must not. */
    private volatile Thread clock;
    private volatile long written;
    private volatile long accepted;

    // the writer thread's own
    private FileChannel channel;
    private Path file;
    private long fileBytes;
    private Instant fileBegun;
    /** The open file's identity (inode) as it was made: another at its path means it was removed or replaced. */
    private Object fileKey;
    /** How often a writer with nothing to write looks whether its file is still its own ({@link #lostFile}). */
    static final Duration LOOK = Duration.ofSeconds(2);
    private long lastLook = System.nanoTime();
    private String prevChain = "";
    private volatile boolean failing;

    private Ledger() {
        this.dir = null;
        this.pid = 0;
        this.rotateBytes = 0;
        this.rotateAge = null;
        this.queue = null;
        this.writer = null;
    }

    Ledger(Path stateDir, long rotateBytes, Duration rotateAge, int queueSize) {
        this.dir = stateDir.resolve(DIR);
        this.pid = ProcessHandle.current().pid();
        this.rotateBytes = rotateBytes;
        this.rotateAge = rotateAge;
        this.queue = new ArrayBlockingQueue<>(queueSize);
        this.writer = new Thread(this::drain, "mesh-ledger");
        writer.setDaemon(true);
    }

    /**
     * Opens this process's writer; its first file is made with its first line.
     *
     * @param stateDir the host's {@code --state-dir}
     * @return the writer, started
     */
    public static Ledger open(Path stateDir) {
        return open(stateDir, ROTATE_BYTES, ROTATE_AGE, QUEUE);
    }

    /** As {@link #open(Path)}, with a file size and age to rotate at and a queue size (tests). */
    static Ledger open(Path stateDir, long rotateBytes, Duration rotateAge, int queueSize) {
        Ledger l = new Ledger(stateDir, rotateBytes, rotateAge, queueSize);
        l.writer.start();
        return l;
    }

    /** @return the ledger's directory, or {@code null} for {@link #NONE} */
    public Path dir() { return dir; }

    /** @return false for {@link #NONE} */
    public boolean enabled() { return queue != null; }

    /**
     * Queues one line; never blocks, never throws. A line that does not fit is counted and said by a later {@code gap}.
     *
     * @param e the line
     */
    public void write(LedgerEntry e) {
        if (queue == null || e == null) return;
        if (closed || !queue.offer(e)) {
            firstDrop.compareAndSet(null, e.at() != null ? e.at() : Instant.now());
            dropped.incrementAndGet();
            return;
        }
        synchronized (flushed) {
            accepted++;
        }
    }

    /**
     * Stamps the ledger's lines by the engine's clock (decision 28: calls and events are compared on one clock, and
     * Docker stamps events by its own): the engine's time is read on a thread of its own (a Docker call may hang, a
     * line's write must not), until a reading is taken and every minute after, and the difference applied when it is
     * at least {@link #CLOCK_FLOOR} (an engine on another host, or a host clock faked). Waits at most
     * {@link #CLOCK_FIRST} for the first reading. Once per ledger; {@link #NONE} ignores it.
     *
     * @param engine reads the engine's time ({@code docker info}'s {@code SystemTime}); its failure leaves the last
     *               difference as it was
     * @return this ledger
     */
    public Ledger engineClock(java.util.function.Supplier<Instant> engine) {
        if (queue == null || engineTime != null) return this;
        this.engineTime = engine;
        Thread t = new Thread(this::readClock, "mesh-ledger-clock");
        t.setDaemon(true);
        clock = t;
        t.start();
        long until = System.nanoTime() + CLOCK_FIRST.toNanos();
        while (!clockKnown && System.nanoTime() < until && t.isAlive()) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return this;
    }

    /**
     * The clock thread: readings until one is taken (five at once, the first of a cold process being slow, then again
     * each {@link #CLOCK_RETRY}), then one each {@link #CLOCK_EVERY}; until {@link #close}.
     */
    private void readClock() {
        while (!closed) {
            boolean taken = false;
            for (int i = 0; i < 5 && !taken && !closed; i++) taken = measureClock();
            try {
                Thread.sleep((clockKnown ? CLOCK_EVERY : CLOCK_RETRY).toMillis());
            } catch (InterruptedException e) {
                return; // closed
            }
        }
    }

    /** @return now by the engine's clock, as this ledger stamps its lines (this host's clock until known) */
    public Instant now() {
        long o = engineOffsetNanos;
        Instant n = Instant.now();
        return o == 0 ? n : n.plusNanos(o);
    }

    /** @return whether a reading was taken */
    private boolean measureClock() {
        java.util.function.Supplier<Instant> e = engineTime;
        if (e == null) return false;
        try {
            long t0 = System.nanoTime();
            Instant before = Instant.now();
            Instant engine = e.get();
            long rtt = System.nanoTime() - t0;
            // A slow answer says little of the difference (a process stopped mid-read took the pause for an offset of
            // half of it, in the fleet history): only one within CLOCK_RTT is taken.
            if (engine == null || rtt > CLOCK_RTT.toNanos()) return false;
            long offset = Duration.between(before.plusNanos(rtt / 2), engine).toNanos();
            long was = engineOffsetNanos;
            engineOffsetNanos = Math.abs(offset) >= CLOCK_FLOOR.toNanos() ? offset : 0;
            if ((engineOffsetNanos == 0) != (was == 0)) {
                log.warn("ledger: the Docker engine's clock is {} ms from this host's; the ledger stamps its lines by the engine's",
                        offset / 1_000_000);
            }
            clockKnown = true;
            return true;
        } catch (RuntimeException ex) {
            log.debug("ledger: the engine's clock not read: {}", ex.toString());
            return false;
        }
    }

    /**
     * Writes a line and waits, at most {@link #AHEAD_MAX}, until it is on disk: a call's line written ahead of the
     * call (decision 28), so that a process killed in the call, or before the writer's next batch, still accounts for
     * what it did. Never throws; a disk slower than the wait leaves the line queued and the call goes on.
     *
     * @param e the line
     * @return true when it is on disk
     */
    public boolean writeAhead(LedgerEntry e) {
        if (queue == null || e == null) return true;
        urgent.incrementAndGet();
        try {
            write(e);
            // In slices: a process stopped (SIGSTOP) during a wait finds its deadline gone when it runs again, and
            // would let the call go on before its line is on disk; a failing disk ends the wait at once.
            for (int slice = 0; slice < AHEAD_SLICES; slice++) {
                if (flush(AHEAD_WAIT)) return true;
                if (failing || !writer.isAlive()) return false;
            }
            return false;
        } finally {
            urgent.decrementAndGet();
        }
    }

    /**
     * Waits until every line queued so far is on disk (tests, and a caller about to read its own lines).
     *
     * @param max the longest wait
     * @return true when they are
     */
    public boolean flush(Duration max) {
        if (queue == null) return true;
        long deadline = System.nanoTime() + max.toNanos();
        synchronized (flushed) {
            long target = accepted;
            while (written < target && writer.isAlive()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) return false;
                try {
                    flushed.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return written >= target;
        }
    }

    /** Writes what is queued and stops the writer; lines written afterwards are dropped. Idempotent. */
    @Override
    public void close() {
        if (queue == null || closed) return;
        flush(Duration.ofSeconds(5));
        closed = true; // the writer sees it within a batch's wait: an interrupt would close its channel mid-fsync
        Thread c = clock;
        if (c != null) c.interrupt();
        try {
            writer.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void drain() {
        // Jackson builds a type's serializer at its first use (a few hundred ms on a cold JVM): here, not in the first
        // call's written-ahead line.
        line("", LedgerEntry.follow(Instant.EPOCH, "warm-up"));
        List<LedgerEntry> batch = new ArrayList<>(BATCH_LINES);
        while (true) {
            try {
                LedgerEntry first = closed ? queue.poll() : queue.poll(BATCH_MS, TimeUnit.MILLISECONDS);
                if (first == null && closed) break;
                if (first != null) {
                    batch.add(first);
                    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BATCH_MS);
                    while (batch.size() < BATCH_LINES) {
                        long left = until - System.nanoTime();
                        LedgerEntry next = left <= 0 || urgent.get() > 0 ? queue.poll() : queue.poll(left, TimeUnit.NANOSECONDS);
                        if (next == null) break;
                        batch.add(next);
                    }
                }
            } catch (InterruptedException e) {
                if (!closed) continue; // nobody interrupts this thread but a dying JVM
                queue.drainTo(batch);
            }
            long lost = dropped.getAndSet(0);
            if (lost > 0) {
                long disk = Math.min(lost, unwritten.getAndSet(0));
                Instant from = firstDrop.getAndSet(null);
                Instant now = Instant.now();
                String why = disk == lost ? "the disk did not take them" : disk == 0
                        ? "the queue to the ledger's writer was full (a slow or stuck disk)"
                        : disk + " not taken by the disk, the rest with the queue to the writer full";
                batch.add(LedgerEntry.gap(from == null ? now : from, now, lost + " ledger line" + (lost == 1 ? "" : "s") + " dropped: " + why));
            }
            if (batch.isEmpty() && System.nanoTime() - lastLook > LOOK.toNanos()) {
                // A quiet writer still looks at its file: one removed, replaced or cut is said as a gap now, not at
                // the next line, which on a quiet host may be hours away
                lastLook = System.nanoTime();
                try {
                    if (lostFile() != null) writeBatch(batch);
                } catch (IOException e) {
                    log.debug("ledger: {} not looked at: {}", file, e.toString());
                }
            }
            if (!batch.isEmpty()) {
                long counted = batch.size() - (lost > 0 ? 1 : 0);
                writeBatch(batch);
                batch.clear();
                synchronized (flushed) {
                    written += counted;
                    flushed.notifyAll();
                }
            }
            if (closed && queue.isEmpty()) break;
            if (failing && !closed) {
                try {
                    Thread.sleep(1000); // a failing disk is tried again once a second, not at every batch
                } catch (InterruptedException e) {
                    // only a dying JVM interrupts this thread
                }
            }
        }
        closeFile();
        synchronized (flushed) {
            flushed.notifyAll();
        }
    }

    /** Writes and fsyncs a batch; a failing disk loses the batch, said by a gap in the next file that opens. */
    private void writeBatch(List<LedgerEntry> batch) {
        try {
            String lost = lostFile();
            if (lost != null) {
                // What it held is gone, and what this writer appends to an unlinked file would be lost unseen: a new
                // file, whose first line says what no file covers now (SPEC.md "Audit": a span not covered is a gap).
                log.warn("ledger: {}; the lines it held from {} on are lost: a new file begins, with a gap", lost, fileBegun);
                Instant from = fileBegun;
                rotate(); // closes the lost one first
                batch = new ArrayList<>(batch);
                batch.add(0, LedgerEntry.gap(from, Instant.now(), lost + " while this process wrote it"));
            }
            StringBuilder text = new StringBuilder();
            for (LedgerEntry e : batch) {
                if (channel == null || fileBytes >= rotateBytes || Duration.between(fileBegun, Instant.now()).compareTo(rotateAge) >= 0) {
                    if (text.length() > 0) {
                        append(text);
                        text.setLength(0);
                    }
                    rotate();
                }
                String line = line(prevChain, e);
                prevChain = chainOf(line);
                text.append(line).append('\n');
                fileBytes += line.length() + 1;
            }
            append(text);
            channel.force(false);
            if (failing) log.info("ledger: writing to {} again", file);
            failing = false;
        } catch (IOException | RuntimeException ex) {
            // once per failing spell: a full disk fails every batch, and each one's loss is said by the next gap
            if (!failing) log.warn("ledger: {} line(s) not written to {}: {}; said as a gap once the disk takes lines again", batch.size(),
                    file != null ? file : dir, ex.toString());
            failing = true;
            // The same file again if it is still open (a full disk would otherwise leave a new empty file per try);
            // what was half written reads as a gap, beside the gap that says what was dropped.
            if (channel != null && !channel.isOpen()) channel = null;
            Instant at = batch.get(0).at() != null ? batch.get(0).at() : Instant.now();
            firstDrop.compareAndSet(null, at);
            dropped.addAndGet(batch.size());
            unwritten.addAndGet(batch.size());
        }
    }

    /**
     * @return why the open file is no longer what this writer made (removed, replaced, or cut shorter than it wrote),
     *         or {@code null} while it is, or before the first file
     */
    private String lostFile() throws IOException {
        if (channel == null || file == null) return null;
        Object now;
        try {
            now = identity(file);
        } catch (NoSuchFileException e) {
            return "ledger file " + file.getFileName() + " was removed";
        }
        if (fileKey != null && !fileKey.equals(now)) return "ledger file " + file.getFileName() + " was replaced";
        long size = channel.size();
        if (!failing && size < fileBytes) return "ledger file " + file.getFileName() + " was cut from " + fileBytes + " to " + size + " bytes";
        return null;
    }

    private static Object identity(Path f) throws IOException {
        return Files.readAttributes(f, java.nio.file.attribute.BasicFileAttributes.class, java.nio.file.LinkOption.NOFOLLOW_LINKS).fileKey();
    }

    private void append(StringBuilder text) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(text.toString().getBytes(StandardCharsets.UTF_8));
        while (b.hasRemaining()) channel.write(b);
    }

    private void rotate() throws IOException {
        closeFile();
        Files.createDirectories(dir);
        Instant now = Instant.now();
        String base = FILE_TIME.format(now) + "-" + pid;
        Path f = dir.resolve(base + ".jsonl");
        // a name taken by a file compressed since (decision 29) is taken too: a clock stepped back may meet one
        for (int n = 1; Files.exists(f) || Files.exists(f.resolveSibling(f.getFileName() + ".gz")); n++) f = dir.resolve(base + "-" + n + ".jsonl");
        channel = FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        try {
            channel.tryLock(); // held while it is written to: it is not compressed under this writer (decision 29)
        } catch (IOException | java.nio.channels.OverlappingFileLockException e) {
            log.debug("ledger: {} not locked: {}", f, e.toString());
        }
        file = f;
        fileBytes = 0;
        fileBegun = now;
        fileKey = identity(f);
        prevChain = ""; // each file's chain begins anew: a reader verifies a file on its own
    }

    private void closeFile() {
        if (channel == null) return;
        try {
            channel.force(false);
            channel.close();
        } catch (IOException e) {
            log.warn("ledger: {} not closed cleanly: {}", file, e.toString());
        }
        channel = null;
    }

    /** @return the file this writer appends to now, or {@code null} before its first line (tests) */
    Path currentFile() { return file; }

    /**
     * @param prevChain the previous line's chain ({@code ""} for a file's first line)
     * @param e         the entry
     * @return its line, without the newline: its JSON with {@code "chain"} as its last field
     */
    static String line(String prevChain, LedgerEntry e) {
        String json = Json.text(e);
        return json.substring(0, json.length() - 1) + CHAIN + chain(prevChain, json) + "\"}";
    }

    /** @return the first 16 hex digits of SHA-256 of {@code prevChain} then {@code json} (decision 28) */
    static String chain(String prevChain, String json) {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            d.update(prevChain.getBytes(StandardCharsets.UTF_8));
            d.update(json.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d.digest()).substring(0, 16);
        } catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex); // every JVM has SHA-256
        }
    }

    /** @return a well-formed line's chain value, or {@code null} */
    static String chainOf(String line) {
        int i = line.lastIndexOf(CHAIN);
        if (i < 0 || !line.endsWith("\"}") || line.length() - i != CHAIN.length() + 16 + 2) return null;
        return line.substring(i + CHAIN.length(), i + CHAIN.length() + 16);
    }

    /** @return a well-formed line's entry JSON (without its chain), or {@code null} */
    static String jsonOf(String line) {
        if (chainOf(line) == null) return null;
        return line.substring(0, line.lastIndexOf(CHAIN)) + "}";
    }
}
