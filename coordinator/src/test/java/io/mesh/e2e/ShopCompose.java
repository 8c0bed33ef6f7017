package io.mesh.e2e;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.command.ExecCreateCmdResponse;
import com.github.dockerjava.api.model.Frame;

import java.util.concurrent.TimeUnit;

/**
 * The compose app a new user brought (three services reaching each other by name, a named volume, a bind mount, a
 * healthcheck, {@code depends_on: condition: service_healthy}, a second network with an alias), and a command run
 * inside one of its containers: shared by the one-engine test and the fleet's ({@code ComposeAppIT}).
 */
public final class ShopCompose {
    private ShopCompose() {}

    private static final String SERVE = "trap 'exit 0' TERM; while true; do sleep 1; done";

    /**
     * @param busybox the image every service runs
     * @return the compose file; {@code db} bind-mounts {@code ./conf} (its {@code db.conf} is the healthcheck's)
     */
    public static String compose(String busybox) {
        return """
                name: shop
                services:
                  web:
                    image: %1$s
                    command: ["sh", "-c", "%2$s"]
                    stop_grace_period: 2s
                    depends_on:
                      worker: {condition: service_started}
                      db: {condition: service_healthy}
                  worker:
                    image: %1$s
                    command: ["sh", "-c", "%2$s"]
                    stop_grace_period: 2s
                    networks: [default, back]
                    depends_on:
                      db: {condition: service_healthy}
                  db:
                    image: %1$s
                    command: ["sh", "-c", "%2$s"]
                    stop_grace_period: 2s
                    healthcheck: {test: ["CMD", "test", "-f", "/conf/db.conf"], interval: 1s, retries: 5}
                    volumes: ["data:/data", "./conf:/conf:ro"]
                    networks:
                      default: {}
                      back: {aliases: [postgres]}
                volumes:
                  data: {}
                networks:
                  back: {}
                """.formatted(busybox, SERVE);
    }

    /** @return the exit code of {@code cmd} run in container {@code id} through {@code docker}'s API, bounded by 20 s */
    public static int exec(DockerClient docker, String id, String... cmd) throws Exception {
        ExecCreateCmdResponse e = docker.execCreateCmd(id).withCmd(cmd).withAttachStdout(true).withAttachStderr(true).exec();
        docker.execStartCmd(e.getId()).exec(new com.github.dockerjava.api.async.ResultCallback.Adapter<Frame>()).awaitCompletion(20, TimeUnit.SECONDS);
        Long code = docker.inspectExecCmd(e.getId()).exec().getExitCodeLong();
        return code == null ? -1 : code.intValue();
    }
}
