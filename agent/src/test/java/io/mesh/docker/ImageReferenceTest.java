package io.mesh.docker;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Image references split as Docker splits them: registry host, repository as Docker shows it, tag, digest. */
class ImageReferenceTest {
    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(nullValues = "-", value = {
            "busybox,                                   docker.io,      busybox,                   -,      -,          latest",
            "busybox:1,                                 docker.io,      busybox,                   1,      -,          1",
            "library/busybox:1,                         docker.io,      busybox,                   1,      -,          1",
            "docker.io/library/busybox:1,               docker.io,      busybox,                   1,      -,          1",
            "index.docker.io/mesh-demo/busybox:1,       docker.io,      mesh-demo/busybox,         1,      -,          1",
            "mesh-demo/registry:2.8.2,                  docker.io,      mesh-demo/registry,        2.8.2,  -,          2.8.2",
            "127.0.0.1:5000/hm/busybox:1,               127.0.0.1:5000, 127.0.0.1:5000/hm/busybox, 1,      -,          1",
            "127.0.0.1:5000/hm/busybox,                 127.0.0.1:5000, 127.0.0.1:5000/hm/busybox, -,      -,          latest",
            "localhost/x:2,                             localhost,      localhost/x,               2,      -,          2",
            "ghcr.io/a/b@sha256:0123,                   ghcr.io,        ghcr.io/a/b,               -,      sha256:0123, sha256:0123",
            "ghcr.io/a/b:1@sha256:0123,                 ghcr.io,        ghcr.io/a/b,               1,      sha256:0123, sha256:0123"})
    void splitsAsDockerDoes(String image, String registry, String repository, String tag, String digest, String pullTag) {
        ImageReference r = ImageReference.parse(image);
        assertThat(r.registry()).isEqualTo(registry);
        assertThat(r.repository()).isEqualTo(repository);
        assertThat(r.tag()).isEqualTo(tag);
        assertThat(r.digest()).isEqualTo(digest);
        assertThat(r.pullTag()).isEqualTo(pullTag);
    }

    @Test
    void dockerHubsCredentialsLiveUnderItsV1AddressOthersUnderTheirHost() {
        assertThat(ImageReference.parse("busybox:1").authKey()).isEqualTo("https://index.docker.io/v1/");
        assertThat(ImageReference.parse("docker.io/library/busybox:1").authKey()).isEqualTo("https://index.docker.io/v1/");
        assertThat(ImageReference.parse("127.0.0.1:5000/hm/busybox:1").authKey()).isEqualTo("127.0.0.1:5000");
    }

    /**
     * The report names the digest of the container's own repository when the image was pulled from several, and none
     * when the image is known only under other repositories.
     */
    @Test
    void theDigestOfTheReferencesRepositoryIsChosen() {
        ImageInfo i = new ImageInfo("sha256:aa", List.of("127.0.0.1:5001/other/busybox@sha256:11", "127.0.0.1:5000/hm/busybox@sha256:22"));
        assertThat(i.digestFor(ImageReference.parse("127.0.0.1:5000/hm/busybox:1"))).isEqualTo("127.0.0.1:5000/hm/busybox@sha256:22");
        assertThat(i.digestFor(ImageReference.parse("127.0.0.1:5002/x/busybox:1"))).as("another repository's digest is not this one's").isNull();
        assertThat(new ImageInfo("sha256:aa", null).digestFor(ImageReference.parse("busybox"))).isNull();
        assertThat(new ImageInfo("sha256:aa", List.of("busybox@sha256:33")).digestFor(ImageReference.parse("docker.io/library/busybox:1")))
                .isEqualTo("busybox@sha256:33");
    }
}
