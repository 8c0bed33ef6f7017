package io.mesh.docker;

import com.github.dockerjava.api.exception.InternalServerErrorException;

import java.util.regex.Pattern;

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
     * Whether Docker's answer to a start names a task or containerd container of the started container's own id (the
     * answer's JSON may escape the quotes around it), or says its id is in use: not, say, a network endpoint that
     * already exists, which a new container of the same name would meet again.
     *
     * @param e  the failure of a start
     * @param id the id of the container started (64 hex digits)
     * @return true when the start is refused for good
     */
    static boolean is(RuntimeException e, String id) {
        String m = e.getMessage();
        if (!(e instanceof InternalServerErrorException) || m == null) return false;
        return Pattern.compile("(?:task|container) \\\\?\"?" + Pattern.quote(id) + "\\\\?\"?: already exists|\\bid already in use").matcher(m).find();
    }
}
