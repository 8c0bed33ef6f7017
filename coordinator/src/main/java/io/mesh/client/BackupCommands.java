package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

import static io.mesh.client.ExitCodes.*;

/**
 * {@code mesh backup FILE} and {@code mesh restore FILE [--force]} (SPEC.md "Running it for real"): the coordinator
 * takes and checks the document (docs/decisions/0039-backups-and-an-empty-ensemble.md); these move it between the
 * coordinator and a file.
 */
final class BackupCommands {
    private BackupCommands() {}

    /** {@code mesh backup FILE}: {@code GET /v1/backup}, written to FILE whole or not at all. */
    @Command(name = "backup", description = {"Write the desired state, history, holds, freezes, drains and rollouts to FILE as one JSON document (an admin's token: the coordinator's --admin NAME).",
            "FILE is written whole or not at all (mode 0600: specs may hold environment values); restore it with mesh restore."},
            exitCodeList = {"0:written", "1:FILE could not be written", "2:unauthorized (not an admin's token)", "4:the coordinator cannot be reached"})
    public static final class Backup extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "FILE", description = "Where to write the backup, such as /var/lib/mesh/backups/mesh-2026-12-07.json.")
        Path file;

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            CoordinatorClient.Response r = client().getWithToken("/v1/backup");
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            Path dir = file.toAbsolutePath().getParent();
            Path tmp;
            try {
                tmp = Files.createTempFile(dir, "." + file.getFileName() + ".", ".part",
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            } catch (IOException e) {
                return fail(FAILED, "cannot write in " + dir + " (" + e + "): give a FILE in a directory that exists and this user may write");
            }
            try {
                Files.writeString(tmp, r.body(), StandardCharsets.UTF_8);
                try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
                    ch.force(true);
                }
                try {
                    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
                }
            } catch (IOException e) {
                Files.deleteIfExists(tmp);
                return fail(FAILED, "cannot write " + file + ": " + e);
            }
            JsonNode doc = r.json();
            PrintWriter out = out();
            out.println("backup of " + doc.path("nodes").size() + " nodes (mesh " + doc.path("mesh").asText() + ", taken "
                    + doc.path("takenAt").asText() + ") written to " + file);
            out.flush();
            return OK;
        }
    }

    /** {@code mesh restore FILE [--force]}: {@code POST /v1/restore}. */
    @Command(name = "restore", description = {"Put back what mesh backup wrote to FILE: into an empty ensemble, or over what is there with --force (an admin's token).",
            "Holds, freezes, drains and rollouts are written before the desired state, so no agent applies a module before what restrains it is back; agents adopt their containers without recreating those whose spec matches."},
            exitCodeList = {"0:restored", "1:FILE could not be read", "2:refused, nothing written: the file is not whole, edited, from a newer mesh, or the ensemble is not empty (without --force); unauthorized",
                    "4:the coordinator cannot be reached"})
    public static final class Restore extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "FILE", description = "A file mesh backup wrote.")
        Path file;

        @Option(names = "--force", description = "Restore into an ensemble that already holds desired state, history, holds, freezes, drains or rollouts: the backup's nodes are written over those (the others stay).")
        boolean force;

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            byte[] body;
            try {
                body = Files.readAllBytes(file);
            } catch (NoSuchFileException e) {
                return fail(FAILED, file + " does not exist: give the file mesh backup wrote");
            } catch (IOException e) {
                return fail(FAILED, "cannot read " + file + ": " + e);
            }
            CoordinatorClient.Response r = client().postDocument("/v1/restore" + (force ? "?force=true" : ""), body);
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            JsonNode j = r.json();
            PrintWriter out = out();
            out.println("restored from " + file + ": " + j.path("created").asInt() + " nodes created, " + j.path("updated").asInt()
                    + " updated, " + j.path("unchanged").asInt() + " unchanged (" + j.path("desired").asInt() + " modules' desired state, "
                    + j.path("holds").asInt() + " holds); agents apply it now, recreating only containers whose spec differs");
            out.flush();
            return OK;
        }
    }
}
