package io.mesh.window;

import io.mesh.gate.Gate;
import io.mesh.manifest.GateSpec;
import io.mesh.manifest.SilenceSpec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * SPEC.md "The rest of the operator's stack": a gate's server and Alertmanager have 5 s to answer
 * (docs/decisions/0035-window-gates.md, 0036-window-silences.md). A server that sends its status line and headers and
 * then stalls in the body (a proxy in front of it, a server overloaded mid-answer) is one that did not answer: the
 * request's own timeout must cover the body too, else a window waits for it with no end, holding its lock and slot.
 * The stalled server is a loopback socket that answers the headers of a 200 and never the rest.
 */
@Tag("slow") // stalled servers answered after 5 s each: the full run, not --fast
class StalledAnswerTest {
    private ServerSocket server;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private Thread acceptor;

    @BeforeEach
    void stallAfterHeaders() throws Exception {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = new Thread(() -> {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    accepted.add(s);
                    InputStream in = s.getInputStream();
                    // the request's headers end at an empty line; a body (a silence's JSON) is not read: it fits the socket's buffer
                    int last4 = 0;
                    while (last4 != 0x0d0a0d0a) {
                        int b = in.read();
                        if (b < 0) break;
                        last4 = (last4 << 8) | b;
                    }
                    OutputStream out = s.getOutputStream();
                    out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"status\":")
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush(); // and nothing more
                } catch (Exception closed) {
                    return;
                }
            }
        }, "stalled-server");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @AfterEach
    void close() throws Exception {
        server.close();
        for (Socket s : accepted) s.close();
        acceptor.join(5000);
    }

    private String url() { return "http://127.0.0.1:" + server.getLocalPort(); }

    @Test
    void aGateWhoseServerStallsInItsAnswerBlocksWithinItsTimeout() {
        Gate gate = Gate.prometheus(HttpClient.newBuilder().connectTimeout(Gate.ASK_TIMEOUT).build(), new GateSpec.Prometheus(url(), "up"));
        Instant t0 = Instant.now();
        Gate.Answer a = assertTimeoutPreemptively(Duration.ofSeconds(20), gate::ask, "the gate's question did not end");
        assertThat(a.blocked()).isTrue();
        assertThat(Duration.between(t0, Instant.now())).isLessThan(Gate.ASK_TIMEOUT.plusSeconds(2));
    }

    @Test
    void anAlertmanagerThatStallsInItsAnswerStopsNeitherTheSilencingNorTheExpiry() {
        Instant t0 = Instant.now();
        List<WindowJournal.Silence> made = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> WindowSilences.create(
                new SilenceSpec(url(), Map.of("job", "x")), "h", List.of("m-web"), Instant.now().plusSeconds(600), "window w"),
                "the silencing did not end");
        assertThat(made).isEmpty();
        assertThat(Duration.between(t0, Instant.now())).isLessThan(WindowSilences.TIMEOUT.plusSeconds(2));
        Instant t1 = Instant.now();
        List<String> left = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> WindowSilences.expire(
                List.of(new WindowJournal.Silence(url(), "0b4d5e6f", "m-web")), "window w"), "the expiry did not end");
        assertThat(left).singleElement().asString().contains("was not expired");
        assertThat(Duration.between(t1, Instant.now())).isLessThan(WindowSilences.TIMEOUT.plusSeconds(2));
    }

    /**
     * An Alertmanager that did not answer one request in 5 s is not asked again within the same making or expiry:
     * else a window of N containers waits N times 5 s before its first stop, and its closing as long before it lets its
     * lock and slot go.
     */
    @Test
    void anAlertmanagerThatDidNotAnswerIsNotAskedForEachContainer() {
        Instant t0 = Instant.now();
        List<WindowJournal.Silence> made = assertTimeoutPreemptively(Duration.ofSeconds(40), () -> WindowSilences.create(
                new SilenceSpec(url(), Map.of("job", "x")), "h", List.of("m-a", "m-b", "m-c"), Instant.now().plusSeconds(600), "window w"));
        assertThat(made).isEmpty();
        assertThat(Duration.between(t0, Instant.now())).isLessThan(WindowSilences.TIMEOUT.plusSeconds(2));
        Instant t1 = Instant.now();
        List<String> left = assertTimeoutPreemptively(Duration.ofSeconds(40), () -> WindowSilences.expire(List.of(
                new WindowJournal.Silence(url(), "s1", "m-a"), new WindowJournal.Silence(url(), "s2", "m-b"),
                new WindowJournal.Silence(url(), "s3", "m-c")), "window w"));
        assertThat(left).as("each named in the window's notes").hasSize(3);
        assertThat(Duration.between(t1, Instant.now())).isLessThan(WindowSilences.TIMEOUT.plusSeconds(2));
    }
}
