package io.mesh.ledger;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

/**
 * Compresses the ledger's closed files to {@code .jsonl.gz} (decision 29), which {@link LedgerFiles} reads as it reads a
 * {@code .jsonl}; the daemon's keeper runs it before each pruning.
 */
public final class LedgerCompression {
    private static final Logger log = LoggerFactory.getLogger(LedgerCompression.class);
    private final LedgerFiles ledger;

    /** @param ledger the host's ledger files */
    public LedgerCompression(LedgerFiles ledger) {
        this.ledger = ledger;
    }

    /** @return the compression of the ledger of a {@code --state-dir} */
    public static LedgerCompression of(Path stateDir) {
        return new LedgerCompression(LedgerFiles.of(stateDir));
    }

    /**
     * Compresses every closed {@code .jsonl} file (decision 29): not the newest file of a process that lives, not written
     * within {@link LedgerFiles#IN_USE}. Each one as {@link #compress}; one that fails stays as it is, said in the log.
     *
     * @param now this host's clock
     * @return the files compressed, as their {@code .jsonl.gz}
     */
    public List<Path> compressClosed(Instant now) {
        List<Path> files = ledger.files();
        Set<Path> live = LedgerFiles.newestOfLiveWriters(files);
        List<Path> done = new ArrayList<>();
        for (Path f : files) {
            if (!f.getFileName().toString().endsWith(LedgerFiles.PLAIN) || live.contains(f)) continue;
            try {
                if (Files.getLastModifiedTime(f).toInstant().isAfter(now.minus(LedgerFiles.IN_USE))) continue;
                done.add(compress(f));
            } catch (NoSuchFileException e) {
                // pruned or compressed meanwhile
            } catch (IOException e) {
                log.warn("ledger: {} not compressed: {}", f.getFileName(), e.getMessage());
            }
        }
        try (Stream<Path> s = Files.list(ledger.dir())) { // what a crash mid-compression left: its .jsonl is still there
            for (Path t : s.filter(p -> p.getFileName().toString().contains(LedgerFiles.GZ + ".") && p.getFileName().toString().endsWith(".tmp")).toList()) {
                if (Files.getLastModifiedTime(t).toInstant().isBefore(now.minus(LedgerFiles.IN_USE))) Files.deleteIfExists(t);
            }
        } catch (IOException e) {
            // the next pass
        }
        if (!done.isEmpty()) log.info("ledger: compressed {} closed file(s)", done.size());
        return done;
    }

    /**
     * Compresses one closed file (decision 29): its bytes gzip'd to a temporary file of its own, fsync'd, given the
     * file's time (its age is what pruning reads), moved in place as {@code <name>.jsonl.gz}, then the {@code .jsonl}
     * deleted. A crash at any point leaves the {@code .jsonl} whole or the {@code .gz} whole: {@link LedgerFiles#files} reads one
     * of them. The file is locked meanwhile: a writer locks the file it appends to ({@link Ledger}), so a file some
     * process still writes, or another compressor compresses, is left as it is.
     *
     * @param f a {@code .jsonl} file no writer appends to any more
     * @return its {@code .jsonl.gz}
     * @throws IOException when it is locked, cannot be read, or the compressed file cannot be written (the {@code .jsonl}
     *                     stays); when a {@code .gz} of that name with other lines is there (both stay)
     */
    public Path compress(Path f) throws IOException {
        Path gz = LedgerFiles.gzOf(f);
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            java.nio.channels.FileLock lock;
            try {
                lock = ch.tryLock();
            } catch (java.nio.channels.OverlappingFileLockException e) {
                lock = null; // this JVM's own writer appends to it
            }
            if (lock == null) throw new IOException(f.getFileName() + " is locked: a writer appends to it, or another compressor has it");
            if (!Files.exists(f)) return gz; // compressed by the one that held the lock before
            FileTime time = Files.getLastModifiedTime(f);
            if (Files.exists(gz)) {
                // a crash between the move and the delete left both: the .jsonl goes once the .gz holds the same bytes
                if (!sameBytes(f, gz)) throw new IOException(gz.getFileName() + " is there with other lines than " + f.getFileName() + ": both kept");
            } else {
                Path tmp = Files.createTempFile(ledger.dir(), gz.getFileName() + ".", ".tmp");
                try {
                    try (OutputStream out = Files.newOutputStream(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
                         GZIPOutputStream z = new GZIPOutputStream(out, 1 << 16)) {
                        Files.copy(f, z);
                    }
                    try (java.nio.channels.FileChannel t = java.nio.channels.FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                        t.force(true);
                    }
                    Files.setLastModifiedTime(tmp, time);
                    Files.move(tmp, gz, StandardCopyOption.ATOMIC_MOVE);
                } finally {
                    Files.deleteIfExists(tmp);
                }
                try (java.nio.channels.FileChannel d = java.nio.channels.FileChannel.open(ledger.dir(), StandardOpenOption.READ)) {
                    d.force(true); // the rename on disk before the delete
                } catch (IOException e) {
                    // a file system that cannot fsync a directory: the rename is ordered before the delete anyway
                }
            }
            Files.delete(f);
        }
        return gz;
    }

    private static boolean sameBytes(Path plain, Path gz) throws IOException {
        try (InputStream a = new java.io.BufferedInputStream(Files.newInputStream(plain));
             InputStream raw = Files.newInputStream(gz); // its own resource: a header GZIPInputStream refuses must not leak it
             InputStream b = new java.io.BufferedInputStream(new GZIPInputStream(raw))) {
            while (true) {
                int x = a.read(), y = b.read();
                if (x != y) return false;
                if (x < 0) return true;
            }
        } catch (java.io.EOFException | java.util.zip.ZipException e) {
            return false;
        }
    }
}
