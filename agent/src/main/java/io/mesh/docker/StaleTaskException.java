package io.mesh.docker;

/**
 * Docker refuses to start a container because its containerd still keeps a task of it ({@code task ID: already
 * exists}, {@code id already in use}): left by a start that a dockerd restart cut halfway (moby/moby#36145,
 * docker/for-linux#211; seen in FleetHistoryIT, seed -1035554877928643886, refused for three minutes across a second
 * restart). Retrying the start does not help; a new container does, which is the apply's to make.
 */
public class StaleTaskException extends RuntimeException {
    /**
     * @param message which container, and what to do
     * @param cause   the engine's answer
     */
    public StaleTaskException(String message, Throwable cause) { super(message, cause); }

    /**
     * @param e the failure of a start
     * @return true when Docker answered that a task (or containerd container) of it already exists
     */
    static boolean is(RuntimeException e) {
        String m = e.getMessage();
        return e instanceof com.github.dockerjava.api.exception.InternalServerErrorException && m != null
                && (m.contains("already exists") || m.contains("already in use"));
    }
}
