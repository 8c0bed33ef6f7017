package io.mesh.testing;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;

/**
 * A real server of the operator's stack from Debian's packages, which deploy/dev/test.sh installs, on a free loopback
 * port: started once per test class, stopped after it; ready when its {@code /-/ready} answers 200.
 */
public final class LoopbackServer implements BeforeAllCallback, AfterAllCallback {
    private final Path binary;
    private final String config;
    private final BiFunction<Path, Integer, List<String>> args;
    private Process process;
    private Path dir;
    private int port;

    private LoopbackServer(Path binary, String config, BiFunction<Path, Integer, List<String>> args) {
        this.binary = binary;
        this.config = config;
        this.args = args;
    }

    /**
     * Prometheus (package {@code prometheus}) with no scrape targets: queries over PromQL's own functions
     * ({@code vector(1)}, {@code time()}) answer with series or none as a test needs.
     */
    public static LoopbackServer prometheus() {
        return new LoopbackServer(Path.of("/usr/bin/prometheus"), "global:\n  evaluation_interval: 1s\n", (dir, port) -> List.of(
                "--config.file=" + dir.resolve("config.yml"), "--storage.tsdb.path=" + dir.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port));
    }

    /** Alertmanager (package {@code prometheus-alertmanager}), alone: no cluster, one receiver that sends nothing. */
    public static LoopbackServer alertmanager() {
        return new LoopbackServer(Path.of("/usr/bin/prometheus-alertmanager"), "route:\n  receiver: none\nreceivers:\n  - name: none\n",
                (dir, port) -> List.of("--config.file=" + dir.resolve("config.yml"), "--storage.path=" + dir.resolve("data"),
                        "--web.listen-address=127.0.0.1:" + port, "--cluster.listen-address="));
    }

    /** @return its base URL, such as {@code http://127.0.0.1:40123} */
    public String url() { return "http://127.0.0.1:" + port; }

    /**
     * An Alertmanager's silences of one container, read from its own v2 API.
     *
     * @param container the Docker name its {@code mesh_container} matcher names
     * @return those silences, as Alertmanager answers them
     */
    public java.util.List<com.fasterxml.jackson.databind.JsonNode> silencesOf(String container) throws Exception {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create(url() + "/api/v2/silences")).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        java.util.List<com.fasterxml.jackson.databind.JsonNode> out = new java.util.ArrayList<>();
        for (com.fasterxml.jackson.databind.JsonNode s : io.mesh.wire.Json.MAPPER.readTree(r.body())) {
            if (container.equals(matcher(s, "mesh_container"))) out.add(s);
        }
        return out;
    }

    /** @return the value of a silence's matcher of that name, or {@code null} */
    public static String matcher(com.fasterxml.jackson.databind.JsonNode silence, String name) {
        for (com.fasterxml.jackson.databind.JsonNode m : silence.path("matchers")) if (m.path("name").asText().equals(name)) return m.path("value").asText();
        return null;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        if (!Files.isExecutable(binary)) {
            throw new IllegalStateException(binary + " is missing: deploy/dev/test.sh installs it from Debian's packages");
        }
        dir = Files.createTempDirectory("mesh-" + binary.getFileName());
        Files.writeString(dir.resolve("config.yml"), config);
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        List<String> command = new ArrayList<>(List.of(binary.toString()));
        command.addAll(args.apply(dir, port));
        process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("server.log").toFile()).start();
        HttpClient client = HttpClient.newHttpClient();
        Instant deadline = Instant.now().plusSeconds(60);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) throw new IllegalStateException(binary + " exited: " + Files.readString(dir.resolve("server.log")));
            try {
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(url() + "/-/ready")).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) return;
            } catch (IOException notYet) {
                // starting
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException(binary + " did not become ready in 60 s: " + Files.readString(dir.resolve("server.log")));
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (process != null) {
            process.destroy();
            if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) process.destroyForcibly();
        }
        if (dir != null) {
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }
}
