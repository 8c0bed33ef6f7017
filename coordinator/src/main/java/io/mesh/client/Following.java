package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;

import java.io.IOException;
import java.util.function.Consumer;

/**
 * What a command follows on the coordinator ({@code mesh push --wait} a push, {@code mesh push --plan} a plan): one
 * {@code GET} of it per {@link #ask()}. Another status than 200 is said and asked again; a coordinator that cannot be
 * reached is said once, until it answers again; a 404 means the coordinator no longer knows it ({@link #gone()}).
 */
final class Following {
    private final CoordinatorClient client;
    private final String path;
    private final String name;
    private final Consumer<String> warn;
    private boolean unreachable;
    private boolean gone;

    /**
     * @param client the coordinator
     * @param path   such as {@code /v1/pushes/push-0000000002}
     * @param name   what is followed, for the warnings, such as {@code push-0000000002}
     * @param warn   where the warnings go ({@code mesh push: ...} on stderr)
     */
    Following(CoordinatorClient client, String path, String name, Consumer<String> warn) {
        this.client = client;
        this.path = path;
        this.name = name;
        this.warn = warn;
    }

    /**
     * @return the answer's JSON; {@code null} when this ask got none (another status, no coordinator, or {@link #gone()})
     * @throws InterruptedException when interrupted
     */
    JsonNode ask() throws InterruptedException {
        try {
            CoordinatorClient.Response r = client.get(path);
            if (r.status() == 200 && r.json() != null) {
                unreachable = false;
                return r.json();
            }
            if (r.status() == 404) {
                gone = true;
                warn.accept("the coordinator no longer knows " + name + ": " + r.error());
            } else {
                warn.accept("status of " + name + ": " + r.status() + " " + r.error() + " (retrying)");
            }
        } catch (IOException e) {
            if (!unreachable) warn.accept(e.getMessage() + " (retrying)");
            unreachable = true;
        }
        return null;
    }

    /** @return true once the coordinator answered 404: it no longer knows what is followed, so the command ends */
    boolean gone() { return gone; }

    /** @return true when the coordinator could not be reached since it last answered 200 */
    boolean unreachable() { return unreachable; }
}
