package io.mesh.manifest;

import java.util.List;
import java.util.stream.Collectors;

/** A manifest was refused; {@link #errors()} names each problem with its document and field. */
public class ManifestException extends Exception {
    private final List<ManifestError> errors;

    /** @param errors at least one problem */
    public ManifestException(List<ManifestError> errors) {
        super(errors.stream().map(ManifestError::toString).collect(Collectors.joining("; ")));
        this.errors = List.copyOf(errors);
    }

    /** @return every problem found, in document order */
    public List<ManifestError> errors() { return errors; }
}
