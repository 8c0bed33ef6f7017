package io.mesh.docker;

import java.util.List;
import java.util.Map;

/**
 * An image on this host, from one image inspect.
 *
 * @param id          Docker's image id ({@code sha256:...}), what a container's {@code Image} names
 * @param repoDigests the image as registries name it, {@code <repository>@sha256:...}, one per repository it was pulled
 *                    from or pushed to; empty for an image that only was loaded or built here
 * @param labels      the image's own labels ({@code LABEL} in its Dockerfile)
 */
public record ImageInfo(String id, List<String> repoDigests, Map<String, String> labels) {
    /** Copies the list and map; a missing one is empty. */
    public ImageInfo {
        repoDigests = repoDigests == null ? List.of() : List.copyOf(repoDigests);
        labels = labels == null ? Map.of() : Map.copyOf(labels);
    }

    /** An image whose labels are not known (none). */
    public ImageInfo(String id, List<String> repoDigests) {
        this(id, repoDigests, Map.of());
    }

    /**
     * Docker copies an image's labels onto every container made from it, so an image labelled {@code mesh.window} or
     * {@code mesh.journal} would make its container look like a window's step to mesh.
     *
     * @return the first of the image's labels in mesh's namespace ({@link Labels}), or {@code null} when it has none
     */
    public String meshLabel() {
        return labels.keySet().stream().filter(k -> k.startsWith(Labels.PREFIX)).sorted().findFirst().orElse(null);
    }

    /**
     * @param reference the reference the container was created from
     * @return the repo digest of the reference's own repository; {@code null} when the image has none there (one
     *         loaded or built here, or known only under other repositories: a digest of another repository names
     *         content the operator never pushed under this name, and {@code docker pull} of it would pull elsewhere)
     */
    public String digestFor(ImageReference reference) {
        for (String d : repoDigests) {
            int at = d.indexOf('@');
            if (at > 0 && ImageReference.parse(d).repository().equals(reference.repository())) return d;
        }
        return null;
    }
}
