package io.mesh.client;

import io.mesh.client.compose.ComposeImport;
import io.mesh.client.compose.ComposeProblem;
import io.mesh.client.compose.ComposeRefusedException;
import io.mesh.coordinator.PrintingCommand;
import io.mesh.manifest.ManifestParser;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code mesh import-compose FILE --hosts H,...}: prints the module manifest for a compose file (SPEC.md, "Containers";
 * decision 21). Needs no coordinator: it reads the file, converts it with {@link ComposeImport} and prints; every
 * refusal goes to stderr with its path, and then nothing goes to stdout.
 */
@Command(name = "import-compose", mixinStandardHelpOptions = true,
        description = {"Print the module manifest for a compose file (the Compose Specification) on stdout.",
                "Fields mesh does not do (build, deploy, configs, secrets, profiles, extends, env_file ...) are refused, each with its path "
                        + "and the fix, all of them, on stderr, and nothing is printed on stdout. Notes on what the import chose (relative host "
                        + "paths, ports bound to 127.0.0.1, renamed services) go to stderr too. Decision 21 has the rules."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:the manifest is printed (notes, if any, on stderr)",
                "2:refused: the file cannot be read, or fields mesh does not do (each printed as 'path: why and the fix'); or a usage error"})
public final class ImportCompose extends PrintingCommand {
    @Parameters(index = "0", paramLabel = "FILE", description = "The compose file, such as compose.yaml.")
    Path file;

    @Option(names = "--module", paramLabel = "NAME",
            description = "The module's name (default: the file's top-level name, else its directory's name, as compose names the project).")
    String module;

    @Option(names = "--hosts", paramLabel = "HOST", split = ",", splitSynopsisLabel = ",", required = true,
            description = "The hosts the module runs on, such as host-a,host-b, or '*' for every host. Required: a manifest that runs everywhere should say so.")
    List<String> hosts;

    /** @return the exit code: {@value ExitCodes#OK} printed, {@value ExitCodes#BAD_INPUT} refused */
    @Override
    public Integer call() {
        PrintWriter out = out();
        PrintWriter err = err();
        String text;
        try {
            if (Files.size(file) > ManifestParser.MAX_CHARS) return fail(err, file + " is over " + ManifestParser.MAX_CHARS + " bytes: a compose file is smaller");
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(Files.readAllBytes(file))).toString();
        } catch (CharacterCodingException e) {
            return fail(err, file + " is not UTF-8 text: save it as UTF-8");
        } catch (IOException e) {
            return fail(err, file + " cannot be read: " + e.getMessage());
        }
        try {
            ComposeImport.Imported imported = ComposeImport.of(file, hosts).module(module).convert(text);
            for (ComposeProblem note : imported.notes()) err.println("mesh import-compose: note: " + note);
            err.flush();
            out.print(imported.manifest());
            out.flush();
            return ExitCodes.OK;
        } catch (ComposeRefusedException e) {
            err.println("mesh import-compose: " + file + ": refused, nothing printed (" + e.problems().size() + "):");
            for (ComposeProblem p : e.problems()) err.println("  " + p);
            err.flush();
            return ExitCodes.BAD_INPUT;
        }
    }

    private static int fail(PrintWriter err, String message) {
        err.println("mesh import-compose: " + message);
        err.flush();
        return ExitCodes.BAD_INPUT;
    }
}
