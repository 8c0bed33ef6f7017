package io.mesh.docker;

import ch.qos.logback.classic.Level;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * Keeps the Docker client's own DEBUG lines that print what a call sends out of every log (decision 18): docker-java
 * logs each command with all its fields ({@code Cmd: CreateContainerCmdImpl[... env={DB_PASSWORD=...}]}), and the
 * HTTP client's wire and header logs print request bodies and headers (a container's Env, registry credentials).
 * Those loggers are held at INFO whatever a logging configuration says for their parents, so raising
 * {@code com.github.dockerjava} or {@code org.apache.hc} to DEBUG to chase a problem cannot leak a secret.
 * SecretsTest turns both up to DEBUG and finds no value in any line.
 */
final class SecretSafeLogging {
    /** The loggers whose DEBUG lines carry what is sent to dockerd. */
    static final List<String> LOGGERS = List.of(
            "com.github.dockerjava.core.command.AbstrDockerCmd",
            "org.apache.hc.client5.http.wire",
            "org.apache.hc.client5.http.headers");

    private SecretSafeLogging() {}

    /**
     * Holds each logger at INFO. Called when a {@link DockerEngine} is made, after the process has chosen its log
     * format (which reloads the configuration); a backend other than Logback is left as it is.
     */
    static void hold() {
        for (String name : LOGGERS) {
            if (LoggerFactory.getLogger(name) instanceof ch.qos.logback.classic.Logger l
                    && (l.getLevel() == null || l.getLevel().toInt() < Level.INFO_INT)) {
                l.setLevel(Level.INFO);
            }
        }
    }
}
