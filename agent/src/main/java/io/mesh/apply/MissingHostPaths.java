package io.mesh.apply;

import io.mesh.manifest.ContainerSpec;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code create-host-path} (SPEC.md, "Containers"; decision 17): a host-path volume whose source does not exist on this
 * host fails its container before any Docker call for it, unless the container says {@code create-host-path: true}
 * (then Docker creates it, an empty directory owned by root, as {@code docker run -v} does). A typo in a host path
 * must not become an empty directory that the container then fills, or reads as empty.
 */
final class MissingHostPaths {
    private MissingHostPaths() {}

    /**
     * @param spec a container spec about to be created
     * @return one reason per host-path volume whose source is missing (a dangling symbolic link counts as missing),
     *         naming it and the fix; empty when every source exists or the spec lets Docker create them
     */
    static List<String> of(ContainerSpec spec) {
        if (spec.createsHostPath()) return List.of();
        List<String> out = new ArrayList<>();
        for (String v : spec.volumes()) {
            String src = ContainerSpec.volumeSource(v);
            if (src.startsWith("/") && !Files.exists(Path.of(src))) {
                out.add("volume " + v + ": host path " + src + " does not exist on this host: create it, or set "
                        + "create-host-path: true to let Docker create it (an empty directory owned by root)");
            }
        }
        return out;
    }
}
