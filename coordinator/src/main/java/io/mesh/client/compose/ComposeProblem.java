package io.mesh.client.compose;

import io.mesh.manifest.Printable;

/**
 * One thing {@code mesh import-compose} says about a compose file: a refusal (nothing is printed on stdout then) or a
 * note (the manifest is printed, and the note tells what the import chose).
 *
 * @param path    where in the compose file, such as {@code services.web.build}; {@code --module} or {@code --hosts}
 *                for a command-line option; empty for the file itself
 * @param message what mesh does not do, or what it chose, and the fix
 */
public record ComposeProblem(String path, String message) {
    /** Both are printed on stderr, one line each: a name or value holding control characters is escaped ({@link Printable}). */
    public ComposeProblem {
        path = Printable.of(path);
        message = Printable.of(message);
    }

    @Override
    public String toString() { return path.isEmpty() ? message : path + ": " + message; }
}
