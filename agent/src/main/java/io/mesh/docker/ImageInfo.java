package io.mesh.docker;

import java.util.List;

/**
 * An image on this host, from one image inspect.
 *
 * @param id          Docker's image id ({@code sha256:...}), what a container's {@code Image} names
 * @param repoDigests the image as registries name it, {@code <repository>@sha256:...}, one per repository it was pulled
 *                    from or pushed to; empty for an image that only was loaded or built here
 */
public record ImageInfo(String id, List<String> repoDigests) {
    /** Copies the list; a missing one is empty. */
    public ImageInfo {
        repoDigests = repoDigests == null ? List.of() : List.copyOf(repoDigests);
    }

    /**
     * @param reference the reference the container was created from
     * @return the repo digest of the reference's repository when the image has one, else its first one (the same
     *         content under another repository); {@code null} when it has none
     */
    public String digestFor(ImageReference reference) {
        for (String d : repoDigests) {
            int at = d.indexOf('@');
            if (at > 0 && ImageReference.parse(d).repository().equals(reference.repository())) return d;
        }
        return repoDigests.isEmpty() ? null : repoDigests.get(0);
    }
}
