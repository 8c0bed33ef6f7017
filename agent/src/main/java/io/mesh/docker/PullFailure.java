package io.mesh.docker;

import java.nio.file.Path;
import java.util.Locale;

/**
 * Says why a pull failed and what fixes it, from Docker's error (decision 20): a registry that refused the pull
 * without credentials or refused the ones sent (the fix is in {@code --docker-config}), an image the registry does not
 * have, or anything else. Docker's words are kept in the message; a credential never is (Docker's errors hold none).
 */
final class PullFailure {
    private PullFailure() {}

    /**
     * @param image  the reference pulled
     * @param ref    its parts
     * @param creds  the credentials the pull sent
     * @param config the agent's {@code --docker-config} directory
     * @param docker Docker's error, its first line
     * @param absent true when the image is not on the host ({@code pull: missing} pulled it for that reason)
     * @return the message of the container's {@code failed} reason
     */
    static String describe(String image, ImageReference ref, RegistryAuth.Credentials creds, Path config, String docker, boolean absent) {
        String host = ref.registry();
        String opening = "image " + image + (absent ? " is not on this host and" : "") + " could not be pulled";
        String file = config.resolve(RegistryAuth.CONFIG_FILE).toString();
        if (refusedCredentials(docker)) {
            if (creds.auth() == null) {
                return opening + ": registry " + host + " wants credentials and the agent has none for it ("
                        + docker + "): add them to " + file + " (an \"auths\" entry for " + ref.authKey()
                        + ", or a \"credHelpers\" entry naming a docker-credential-NAME program), or start the agent with"
                        + " --docker-config DIR naming a directory whose config.json has them";
            }
            return opening + ": registry " + host + " refused the agent's credentials from " + creds.source()
                    + " (" + docker + "): fix them there (docker --config " + config + " login " + host + " writes them), or start"
                    + " the agent with --docker-config DIR naming a directory whose config.json has the right ones";
        }
        if (notFound(docker)) {
            return opening + ": registry " + host + " has no such image (" + docker
                    + "): check the repository and the tag, and that the image was pushed there";
        }
        if (absent) {
            return opening + " from registry " + host + " (" + docker + "): load it with docker load or docker import, or fix the"
                    + " image reference";
        }
        return opening + " from registry " + host + " (" + docker + "): check that the registry answers from this host, or load"
                + " the image on the host (docker load) and set pull: missing";
    }

    /** Docker's words for a registry's 401 and 403, as dockerd 20.10 to 28 and Distribution give them. */
    static boolean refusedCredentials(String docker) {
        String m = docker.toLowerCase(Locale.ROOT);
        return m.contains("unauthorized") || m.contains("authentication required") || m.contains("no basic auth credentials")
                || m.contains("access denied") || m.contains("denied: ") || m.contains("401");
    }

    /** Docker's words for a tag or repository the registry does not have. */
    static boolean notFound(String docker) {
        String m = docker.toLowerCase(Locale.ROOT);
        return m.contains("manifest unknown") || m.contains("not found") || m.contains("name unknown");
    }
}
