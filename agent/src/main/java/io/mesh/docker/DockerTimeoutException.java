package io.mesh.docker;

import java.time.Duration;

/**
 * A Docker Engine API call that got no answer within its bound ({@link DockerEngine#CALL_TIMEOUT}, or the call's own
 * bound for a stop or a pull): dockerd is hung or overloaded. The call was abandoned on mesh's side; what dockerd does
 * with it is unknown, as with any failed call.
 */
public final class DockerTimeoutException extends RuntimeException {
    /**
     * @param host  the Docker host URI
     * @param call  what was asked, such as {@code list containers of module store}
     * @param limit the bound that passed
     * @param cause the error the abandoned call ended with, or {@code null}
     */
    public DockerTimeoutException(String host, String call, Duration limit, Throwable cause) {
        super("Docker engine at " + host + " did not answer " + call + " within " + seconds(limit)
                + " (dockerd hung or overloaded?; the bound is mesh-agent --docker-timeout)", cause);
    }

    private static String seconds(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
    }
}
