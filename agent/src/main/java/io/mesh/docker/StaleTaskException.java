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
     * containerd's words for an object of the container's own id (the JSON of the answer may escape its quotes): not,
     * say, a network endpoint that already exists, which a new container of the same name would meet again.
     */
    private static final Pattern ANSWER = Pattern.compile("(?:task|container) \\\\?\"?[0-9a-f]{64}\\\\?\"?: already exists|\\bid already in use");

    /**
     * @param message which container, and what to do
     * @param cause   the engine's answer
     */
    public StaleTaskException(String message, Throwable cause) { super(message, cause); }

    /**
     * @param e the failure of a start
     * @return true when Docker answered that a task (or containerd container) of its id already exists
     */
    static boolean is(RuntimeException e) {
        String m = e.getMessage();
        return e instanceof InternalServerErrorException && m != null && ANSWER.matcher(m).find();
    }
}
