package io.mesh.docker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.dockerjava.api.exception.DockerException;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Docker's own answer to a failed call, as a report shows it: dockerd's message (not docker-java's
 * {@code Status 404: {"message": ...}} wrapping, and never a guess at what a status means), followed by the fix where
 * one is known.
 */
public final class DockerAnswer {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern NETWORK_NOT_FOUND = Pattern.compile("network ([A-Za-z0-9][A-Za-z0-9_.-]*) not found");
    private static final Pattern NO_SUCH_CONTAINER = Pattern.compile("(?i)no such container");
    /**
     * What dockerd answers while it shuts down (seen in the fleet history's engine restarts): its stores closed
     * ({@code get <volume>: database not open}) or containerd's connection going ({@code transport is closing}).
     */
    private static final Pattern ENGINE_STOPPING = Pattern.compile("database not open|transport is closing");

    private DockerAnswer() {}

    /**
     * @param e a failed call
     * @return dockerd's message when dockerd answered; else the first line of the error's own message
     */
    public static String text(Throwable e) {
        String m = e.getMessage();
        if (e instanceof DockerException && m != null) {
            int brace = m.indexOf('{');
            if (brace >= 0) {
                try {
                    JsonNode body = JSON.readTree(m.substring(brace));
                    if (body.hasNonNull("message")) return oneLine(body.get("message").asText());
                } catch (Exception notJson) {
                    // not dockerd's JSON body: its text as it is
                }
            }
            m = m.replaceFirst("^Status \\d+: ", "");
        }
        if (m == null || m.isBlank()) return e.getClass().getSimpleName();
        return oneLine(m);
    }

    /**
     * @param e a failed call
     * @return {@link #text} with the fix for the answers whose fix is known, such as a network that is not there
     */
    public static String explained(Throwable e) {
        String text = text(e);
        String fix = fix(text);
        return fix == null ? text : text + ": " + fix;
    }

    /**
     * @param text dockerd's message
     * @return the fix an operator can make for it, or {@code null} when none is known
     */
    public static String fix(String text) {
        Matcher m = NETWORK_NOT_FOUND.matcher(text);
        if (m.find()) {
            return "declare the network under the module's networks (a container joins it with networks: [NAME]), or create it"
                    + " on this host (docker network create " + m.group(1) + ") and declare it external: true";
        }
        return null;
    }

    /**
     * @param e a 404 from dockerd
     * @return true when dockerd said the container is missing, not something the call needed (a network, an image)
     */
    public static boolean noSuchContainer(Throwable e) {
        return NO_SUCH_CONTAINER.matcher(text(e)).find();
    }

    /**
     * @param e a failed call
     * @return true when dockerd answered that it is shutting down: the answer says nothing of the call's container
     */
    public static boolean engineStopping(Throwable e) {
        return ENGINE_STOPPING.matcher(text(e)).find();
    }

    /**
     * @param e a failed call
     * @return true when {@code e} is the engine's failure, not the container's or the revision's: the call timed out
     *         ({@link DockerTimeoutException}), Docker keeps a task a restart cut ({@link StaleTaskException}), a
     *         connection's {@code IOException} is among its causes with no answer of Docker's before it, or Docker
     *         answered that it is shutting down ({@link #engineStopping}). Docker's answer wrapped in mesh's own
     *         exception is an answer, and mesh's own refusal with no cause (an image not on the host under
     *         {@code pull: never}) is the revision's (decision 13, Consequences; failure model row 110)
     */
    public static boolean theEngines(Throwable e) {
        if (engineStopping(e) || e instanceof DockerTimeoutException || e instanceof StaleTaskException) return true;
        for (Throwable t = e; t != null && t.getCause() != t; t = t.getCause()) {
            if (t instanceof DockerException d && d.getHttpStatus() > 0) return engineStopping(d);
            if (t instanceof DockerTimeoutException || t instanceof java.io.IOException) return true;
        }
        return false;
    }

    private static String oneLine(String s) {
        return s.lines().map(String::strip).filter(l -> !l.isEmpty()).findFirst().orElse(s).replaceAll("\\s+", " ");
    }
}
