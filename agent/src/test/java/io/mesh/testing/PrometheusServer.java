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

/**
 * A real Prometheus server (Debian's {@code prometheus} package, which deploy/dev/test.sh installs) on a free loopback
 * port, with no scrape targets: queries over PromQL's own functions ({@code vector(1)}, {@code time()}) answer with
 * series or none as a test needs. Started once per test class, stopped after it.
 */
public final class PrometheusServer implements BeforeAllCallback, AfterAllCallback {
    /** The binary Debian's package installs. */
    public static final Path BINARY = Path.of("/usr/bin/prometheus");
    private Process process;
    private Path dir;
    private int port;

    /** @return its base URL, such as {@code http://127.0.0.1:40123} */
    public String url() { return "http://127.0.0.1:" + port; }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        if (!Files.isExecutable(BINARY)) {
            throw new IllegalStateException(BINARY + " is missing: deploy/dev/test.sh installs Debian's prometheus package (apt-get install prometheus)");
        }
        dir = Files.createTempDirectory("mesh-prometheus");
        Files.writeString(dir.resolve("prometheus.yml"), "global:\n  evaluation_interval: 1s\n");
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        process = new ProcessBuilder(BINARY.toString(), "--config.file=" + dir.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + dir.resolve("data"), "--web.listen-address=127.0.0.1:" + port)
                .redirectErrorStream(true).redirectOutput(dir.resolve("prometheus.log").toFile()).start();
        HttpClient client = HttpClient.newHttpClient();
        Instant deadline = Instant.now().plusSeconds(60);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) throw new IllegalStateException("prometheus exited: " + Files.readString(dir.resolve("prometheus.log")));
            try {
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(url() + "/-/ready")).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) return;
            } catch (IOException notYet) {
                // starting
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("prometheus did not become ready in 60 s: " + Files.readString(dir.resolve("prometheus.log")));
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
