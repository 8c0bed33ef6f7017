package io.mesh.docker;

/**
 * An image reference split as Docker reads it ({@code [registry/]repository[:tag][@digest]}): the first path component
 * is a registry host when it holds a {@code .} or a {@code :} or is {@code localhost}; otherwise the image is Docker
 * Hub's, whose one-component names live under {@code library/}. docker-java's {@code NameParser} splits tags but not
 * digests, and names Docker Hub two ways ({@code docker.io} or its v1 address) depending on how the image was written,
 * hence this small reader.
 *
 * @param registry   the registry host, such as {@code 127.0.0.1:5000}; {@link #DOCKER_HUB} for Docker Hub
 * @param repository the repository as Docker shows it (its "familiar" name: {@code busybox},
 *                   {@code mesh-demo/busybox}, {@code 127.0.0.1:5000/hm/busybox})
 * @param tag        the tag, or {@code null}
 * @param digest     the digest ({@code sha256:...}), or {@code null}
 */
public record ImageReference(String registry, String repository, String tag, String digest) {
    /** Docker Hub's registry host. */
    public static final String DOCKER_HUB = "docker.io";
    /** The key under which Docker's {@code config.json} and credential helpers keep Docker Hub's credentials. */
    public static final String DOCKER_HUB_AUTH_KEY = "https://index.docker.io/v1/";

    /**
     * @param image an image reference, such as {@code 127.0.0.1:5000/hm/busybox:1} (the manifest parser checked its
     *              characters)
     * @return its parts
     */
    public static ImageReference parse(String image) {
        String rest = image;
        String digest = null;
        int at = rest.indexOf('@');
        if (at >= 0) {
            digest = rest.substring(at + 1);
            rest = rest.substring(0, at);
        }
        String tag = null;
        int colon = rest.lastIndexOf(':');
        if (colon > rest.lastIndexOf('/')) { // a colon in the last component is the tag's, not a registry port
            tag = rest.substring(colon + 1);
            rest = rest.substring(0, colon);
        }
        int slash = rest.indexOf('/');
        String first = slash < 0 ? "" : rest.substring(0, slash);
        if (slash >= 0 && (first.contains(".") || first.contains(":") || first.equals("localhost"))) {
            String host = first.equals("index.docker.io") || first.equals("registry-1.docker.io") ? DOCKER_HUB : first;
            String path = rest.substring(slash + 1);
            if (!host.equals(DOCKER_HUB)) return new ImageReference(host, rest, tag, digest);
            rest = path;
        }
        String familiar = rest.startsWith("library/") && rest.indexOf('/', "library/".length()) < 0 ? rest.substring("library/".length()) : rest;
        return new ImageReference(DOCKER_HUB, familiar, tag, digest);
    }

    /** @return the key of this registry's credentials in {@code config.json} and for credential helpers */
    public String authKey() { return registry.equals(DOCKER_HUB) ? DOCKER_HUB_AUTH_KEY : registry; }

    /**
     * @return the tag or digest a pull asks for: Docker's API pulls every tag of a repository when given none, so
     *         a reference with neither pulls {@code latest}, as {@code docker pull} does
     */
    public String pullTag() { return digest != null ? digest : tag != null ? tag : "latest"; }
}
