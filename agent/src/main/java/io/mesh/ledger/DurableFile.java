package io.mesh.ledger;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * A file under {@code --state-dir} replaced whole and durably: written beside itself as {@code <name>.tmp}, fsync'd,
 * then renamed over the old one (atomically where the file system can), so that a crash leaves the old content or the
 * new, never a part. The window journal, the cron's last fired times and the failed tries of a push keep their state so.
 */
public final class DurableFile {
    private DurableFile() {}

    /**
     * @param file the file to replace (its folder is made when missing)
     * @param data its new content
     * @throws IOException when it cannot be written; the old content is left as it was
     */
    public static void replace(Path file, byte[] data) throws IOException {
        Files.createDirectories(file.getParent());
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.wrap(data);
            while (b.hasRemaining()) ch.write(b);
            ch.force(true);
        }
        try {
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException x) {
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
