package io.mesh.manifest;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

/**
 * One entry of a container's {@code secrets} (SPEC.md, "Secrets"): where the value lives on each host, never the
 * value. Without {@code target} the value becomes the environment variable named by the entry's key; with it, the
 * file is mounted read-only at {@code target}. Decision 18 says how an agent reads, digests and delivers it.
 *
 * @param file   path of the file relative to the agent's {@code --secrets-dir}, without {@code ..} (the parser refuses
 *               anything else)
 * @param target absolute path in the container where the file is mounted read-only, or {@code null} to deliver it as
 *               an environment variable
 * @param digest {@code hmac-sha256:<16 hex>} of the file's bytes keyed by the host's digest key; set only by an agent
 *               in the {@code mesh.spec} label, never in a manifest or desired node (the parser refuses the field)
 */
@JsonPropertyOrder(alphabetic = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record SecretRef(String file, String target, String digest) {
    /**
     * @param file the file under the secrets dir
     * @return a secret delivered as an environment variable
     */
    public static SecretRef env(String file) {
        return new SecretRef(file, null, null);
    }

    /**
     * @param file   the file under the secrets dir
     * @param target absolute path in the container
     * @return a secret mounted read-only as a file
     */
    public static SecretRef mounted(String file, String target) {
        return new SecretRef(file, target, null);
    }

    /** @return true when the secret is mounted as a file, false when it is an environment variable (not named
     * {@code isMounted}: Jackson would write it as a field) */
    public boolean deliveredAsFile() {
        return target != null;
    }
}
