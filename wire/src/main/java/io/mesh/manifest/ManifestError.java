package io.mesh.manifest;

/**
 * One problem in a manifest, as the coordinator's {@code 400} lists it.
 *
 * @param document 1-based number of the YAML document ({@code ---} separates them)
 * @param field    field path inside that document, such as {@code containers.registry.image}; empty for the
 *                 document itself
 * @param message  what is wrong and how to fix it
 */
public record ManifestError(int document, String field, String message) {
    @Override
    public String toString() {
        return "document " + document + (field.isEmpty() ? "" : ", " + field) + ": " + message;
    }
}
