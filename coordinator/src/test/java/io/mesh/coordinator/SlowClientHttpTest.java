package io.mesh.coordinator;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.Json;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The coordinator's HTTP server survives slow and oversized clients. The real
 * {@link HttpApi} with a real ZooKeeper, driven over real loopback sockets ({@link Socket}, byte by byte where the
 * test needs it) and the JDK's HTTP client (what {@code mesh} uses). Nothing is ever written to ZooKeeper.
 *
 * <p>{@code quick}: read timeout {@value #QUICK_SECONDS}s, for the timeouts. {@code patient}: read timeout 30s, so
 * that an answer within a few seconds cannot be a timeout: it came without the body. A test of another limit
 * {@link CoordinatorExtension#restart(HttpLimits) restarts} {@code patient} with it.
 */
@Tag("slow") // waits out the HTTP server's read timeouts: the full run, not --fast
class SlowClientHttpTest {
    static final int QUICK_SECONDS = 2;
    static final String TOKEN = "s3cret-token";
    @RegisterExtension
    static final ZooKeeperExtension zk = new ZooKeeperExtension().resetBeforeEach();
    @RegisterExtension
    final CoordinatorExtension quick = new CoordinatorExtension(zk).withToken(TOKEN)
            .withLimits(HttpLimits.DEFAULTS.withReadTimeout(Duration.ofSeconds(QUICK_SECONDS)));
    @RegisterExtension
    final CoordinatorExtension patient = new CoordinatorExtension(zk).withToken(TOKEN);
    final List<Socket> sockets = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        for (Socket s : sockets) s.close();
        quick.close();
        patient.close();
        // Nothing any of these clients sent was written.
        for (String p : List.of("/mesh/pushes", "/mesh/desired")) {
            if (zk.client().checkExists().forPath(p) != null) assertThat(zk.client().getChildren().forPath(p)).as(p).isEmpty();
        }
    }

    @Test
    void aConnectionThatSendsNothingIsClosedAfterTheReadTimeout() throws Exception {
        Socket s = connect(quick.api());
        long t0 = System.nanoTime();

        assertThat(readToEnd(s.getInputStream())).isEmpty();

        assertThat(since(t0)).isBetween(Duration.ofMillis(QUICK_SECONDS * 1000L - 500), Duration.ofSeconds(QUICK_SECONDS + 5));
    }

    @Test
    void aHeadSentAByteAtATimeIsCutAfterTheReadTimeout() throws Exception {
        // A byte every 200 ms: Jetty's idle timeout alone (reset by every byte) would never close it.
        Socket s = connect(quick.api());
        AtomicLong sent = new AtomicLong();
        Thread writer = drip(s, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n".getBytes(StandardCharsets.US_ASCII),
                "X-Slow: ".repeat(1000).getBytes(StandardCharsets.US_ASCII), sent);
        long t0 = System.nanoTime();

        byte[] answer = readToEnd(s.getInputStream());

        Duration took = since(t0);
        assertThat(new String(answer, StandardCharsets.US_ASCII)).doesNotContain("200");
        assertThat(took).isBetween(Duration.ofMillis(QUICK_SECONDS * 1000L - 500), Duration.ofSeconds(QUICK_SECONDS + 5));
        assertThat(sent.get()).as("header bytes dripped before the cut").isGreaterThan(3);
        writer.join(10_000);
        assertThat(writer.isAlive()).isFalse();
    }

    @Test
    void aBodySentAByteAtATimeIs408AfterTheReadTimeout() throws Exception {
        Socket s = connect(quick.api());
        String head = "POST /v1/pushes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN
                + "\r\nContent-Type: application/yaml\r\nContent-Length: 1000\r\n\r\n";
        AtomicLong sent = new AtomicLong();
        Thread writer = drip(s, head.getBytes(StandardCharsets.US_ASCII), "#".repeat(1000).getBytes(StandardCharsets.US_ASCII), sent);
        long t0 = System.nanoTime();

        Answer a = readAnswer(s.getInputStream());

        assertThat(a.status).isEqualTo(408);
        assertThat(a.json.get("error").asText()).contains("did not arrive within " + QUICK_SECONDS + "s", "--http-read-timeout");
        assertThat(a.headers.get("connection")).isEqualTo("close");
        assertThat(since(t0)).isBetween(Duration.ofMillis(QUICK_SECONDS * 1000L - 500), Duration.ofSeconds(QUICK_SECONDS + 5));
        assertThat(readToEnd(s.getInputStream())).isEmpty();
        writer.join(10_000);
        assertThat(writer.isAlive()).isFalse();
    }

    @Test
    void moreIdleConnectionsThanTheLimitDoNotKeepHealthzFromAnswering() throws Exception {
        int limit = 4;
        // A read timeout of 30s: what frees room here is the limit's own rule (idle 1s at the limit), not the timeout.
        patient.restart(HttpLimits.DEFAULTS.withMaxConnections(limit));
        HttpApi limited = patient.api();
        AtomicInteger most = new AtomicInteger();
        AtomicBoolean watching = new AtomicBoolean(true);
        Thread watcher = new Thread(() -> {
            while (watching.get()) {
                most.accumulateAndGet(limited.openConnections(), Math::max);
                Thread.onSpinWait();
            }
        });
        watcher.start();
        try {
            List<Socket> idle = new ArrayList<>();
            for (int i = 0; i < limit + 1; i++) idle.add(connect(limited));
            await().atMost(Duration.ofSeconds(10)).until(() -> limited.openConnections() == limit);
            long t0 = System.nanoTime();

            Socket s = connect(limited);
            s.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            Answer a = readAnswer(s.getInputStream());

            assertThat(a.status).isEqualTo(200);
            assertThat(a.json.get("status").asText()).isEqualTo("ok");
            assertThat(since(t0)).isLessThan(Duration.ofSeconds(8));
            // Idle ones were closed to make room.
            int closed = 0;
            for (Socket i : idle) {
                i.setSoTimeout(100);
                try {
                    if (readToEnd(i.getInputStream()).length == 0) closed++;
                } catch (java.net.SocketTimeoutException stillOpen) {
                    // accepted after the others went: idle, open
                }
            }
            assertThat(closed).isGreaterThanOrEqualTo(1);
        } finally {
            watching.set(false);
            watcher.join();
        }
        assertThat(most.get()).as("connections open at once").isLessThanOrEqualTo(limit);
    }

    @Test
    void anUnauthenticatedPushOf5MiBIs401WithoutItsBodyBeingRead() throws Exception {
        int announced = 5 << 20;
        Socket s = connect(patient.api());
        OutputStream out = s.getOutputStream();
        out.write(("POST /v1/pushes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/yaml\r\nContent-Length: " + announced
                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(new byte[64 << 10]);
        out.flush();
        long t0 = System.nanoTime();

        // 64 KiB of 5 MiB sent, and the client waits: the answer comes all the same, long before the read timeout.
        Answer a = readAnswer(s.getInputStream());

        assertThat(a.status).isEqualTo(401);
        assertThat(a.json.get("error").asText()).contains("missing credentials", "Authorization: Bearer");
        assertThat(a.headers.get("connection")).isEqualTo("close");
        assertThat(since(t0)).isLessThan(Duration.ofSeconds(5));
        assertThat(patient.api().metrics().rejectedCount(Metrics.UNAUTHORIZED)).isEqualTo(1);
        // The rest of the body does not keep the connection: it ends once the client stops.
        s.shutdownOutput();
        assertThat(readToEnd(s.getInputStream())).isEmpty();
    }

    @Test
    void aPushThatAsksToContinueIsRefusedInsteadOfContinued() throws Exception {
        Socket s = connect(patient.api());
        s.getOutputStream().write(("POST /v1/pushes HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: " + (5 << 20)
                + "\r\nAuthorization: Bearer wrong\r\n\r\n").getBytes(StandardCharsets.US_ASCII));

        Answer a = readAnswer(s.getInputStream());

        assertThat(a.status).as("the first answer: the body was never asked for").isEqualTo(403);
        assertThat(a.json.get("error").asText()).contains("wrong credentials");
    }

    @Test
    void aRightTokenAfterAWrongOneOnOneConnectionIsRight() throws Exception {
        // Jetty's header cache, on by default, compares values ignoring case: the second request would read as the first.
        Socket s = connect(patient.api());
        s.getOutputStream().write(("POST /v1/pushes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN.toUpperCase(Locale.ROOT)
                + "\r\nContent-Length: 0\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        assertThat(readAnswer(s.getInputStream()).status).isEqualTo(403);
        byte[] body = "nope: 1\n".getBytes(StandardCharsets.US_ASCII);
        s.getOutputStream().write(("POST /v1/pushes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN
                + "\r\nContent-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().write(body);

        Answer a = readAnswer(s.getInputStream());

        assertThat(a.status).as("authenticated: the manifest is what is wrong").isEqualTo(400);
        assertThat(a.json.at("/errors/0/field").asText()).isEqualTo("nope");
    }

    @Test
    void aPushOverTheLimitIs413WithTheLimitAndTheFixAndTheClientReadsIt() throws Exception {
        Map<String, String> auth = Map.of("Authorization", "Bearer " + TOKEN);
        // Through the JDK client, as mesh push sends it: 2 MiB, and 32 MiB, far past the socket buffers, several times.
        for (int size : new int[] {2 << 20, 2 << 20, 2 << 20, 32 << 20, 32 << 20, 32 << 20}) {
            byte[] body = new byte[size];
            Arrays.fill(body, (byte) '#');
            CoordinatorExtension.Answer r = patient.post("/v1/pushes", body, auth);
            assertThat(r.status()).isEqualTo(413);
            JsonNode json = r.json();
            assertThat(json.get("limit").asInt()).isEqualTo(HttpLimits.MAX_PUSH_BYTES);
            assertThat(json.get("error").asText()).contains("is " + size + " bytes", "limit of 1048576 bytes", "--max-push-bytes",
                    "split it into several pushes");
        }

        // Content-Length over the limit and no byte of the body: answered at once, nothing read.
        Socket s = connect(patient.api());
        s.getOutputStream().write(("POST /v1/pushes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN
                + "\r\nContent-Length: " + (2 << 20) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        long t0 = System.nanoTime();
        Answer a = readAnswer(s.getInputStream());
        assertThat(a.status).isEqualTo(413);
        assertThat(a.json.get("limit").asInt()).isEqualTo(HttpLimits.MAX_PUSH_BYTES);
        assertThat(since(t0)).isLessThan(Duration.ofSeconds(5));

        // Chunked, streaming on past the limit (up to 64 MiB): the client still reads the 413.
        Socket c = connect(patient.api());
        c.getOutputStream().write(("POST /v1/pushes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN
                + "\r\nTransfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        AtomicLong streamed = new AtomicLong();
        Thread writer = new Thread(() -> {
            byte[] chunk = new byte[64 << 10];
            Arrays.fill(chunk, (byte) '#');
            byte[] size = (Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
            try {
                OutputStream o = c.getOutputStream();
                while (streamed.get() < (64L << 20)) {
                    o.write(size);
                    o.write(chunk);
                    o.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                    streamed.addAndGet(chunk.length);
                }
                o.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                c.shutdownOutput();
            } catch (IOException e) {
                // the server closed its side
            }
        });
        writer.start();
        Answer chunked = readAnswer(c.getInputStream());
        assertThat(chunked.status).isEqualTo(413);
        assertThat(chunked.json.get("error").asText()).contains("more than 1048576 bytes", "split it into several pushes");
        assertThat(chunked.json.get("limit").asInt()).isEqualTo(HttpLimits.MAX_PUSH_BYTES);
        writer.join(30_000);
        assertThat(writer.isAlive()).isFalse();
        assertThat(patient.api().metrics().rejectedCount(Metrics.TOO_LARGE)).isEqualTo(8);

        // At the limit exactly is a push like any other (here: not a manifest, so 400, not 413).
        byte[] atLimit = new byte[HttpLimits.MAX_PUSH_BYTES];
        Arrays.fill(atLimit, (byte) '#');
        assertThat(patient.post("/v1/pushes", atLimit, auth).status()).isEqualTo(400);
    }

    @Test
    void theLimitIsConfigurable() throws Exception {
        patient.restart(HttpLimits.DEFAULTS.withMaxPushBytes(4096));
        byte[] body = (Manifests.store("[host-a]") + "#".repeat(4096)).getBytes(StandardCharsets.UTF_8);
        CoordinatorExtension.Answer r = patient.post("/v1/pushes", body, Map.of("Authorization", "Bearer " + TOKEN));
        assertThat(r.status()).isEqualTo(413);
        JsonNode json = r.json();
        assertThat(json.get("limit").asInt()).isEqualTo(4096);
        assertThat(json.get("error").asText()).contains("limit of 4096 bytes", "--max-push-bytes");
    }

    @Test
    void theReadTimeoutDoesNotCutASlowAnswerOrAnIdleKeepAliveBetweenRequests() throws Exception {
        // Two requests on one connection, the second sent after more than half the read timeout: both answered.
        Socket s = connect(quick.api());
        for (int i = 0; i < 2; i++) {
            s.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            Answer a = readAnswer(s.getInputStream());
            assertThat(a.status).isEqualTo(200);
            assertThat(a.headers).doesNotContainKey("connection");
            Thread.sleep(QUICK_SECONDS * 600L); // deliberate: a client's pause between requests, shorter than the timeout
        }
    }

    @Test
    void jettysOwnErrorsAreJson() throws Exception {
        Socket s = connect(patient.api());
        s.getOutputStream().write(("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + "x".repeat(64 << 10) + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        Answer a = readAnswer(s.getInputStream());
        assertThat(a.status).isEqualTo(431);
        assertThat(a.json.get("error").asText()).contains("431");
    }

    // ---- a raw HTTP/1.1 client over a loopback socket ----

    record Answer(int status, Map<String, String> headers, JsonNode json) {}

    private Socket connect(HttpApi api) throws IOException {
        Socket s = new Socket();
        sockets.add(s);
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), api.port()), 5_000);
        s.setSoTimeout(30_000);
        return s;
    }

    /** Writes {@code head}, then {@code slow} a byte every 200 ms, until all is sent or the server closes. */
    private static Thread drip(Socket s, byte[] head, byte[] slow, AtomicLong sent) throws IOException {
        s.getOutputStream().write(head);
        Thread t = new Thread(() -> {
            try {
                OutputStream o = s.getOutputStream();
                for (byte b : slow) {
                    o.write(b);
                    o.flush();
                    sent.incrementAndGet();
                    Thread.sleep(200); // deliberate: the drip's pace
                }
            } catch (IOException | InterruptedException e) {
                // closed by the server
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Reads an answer: status line, headers (names lower-case), {@code Content-Length} bytes of JSON. */
    private static Answer readAnswer(InputStream in) throws IOException {
        String status = line(in);
        assertThat(status).as("status line").startsWith("HTTP/1.1 ");
        Map<String, String> headers = new LinkedHashMap<>();
        for (String l = line(in); !l.isEmpty(); l = line(in)) {
            int colon = l.indexOf(':');
            headers.put(l.substring(0, colon).trim().toLowerCase(Locale.ROOT), l.substring(colon + 1).trim());
        }
        byte[] body = in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0")));
        return new Answer(Integer.parseInt(status.substring(9, 12)), headers, Json.MAPPER.readTree(body));
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int c = in.read(); c != '\n'; c = in.read()) {
            if (c < 0) throw new IOException("the connection ended mid-answer after: " + b);
            if (c != '\r') b.write(c);
        }
        return b.toString(StandardCharsets.US_ASCII);
    }

    /** @return what came until the server closed the connection (a reset counts as closed) */
    private static byte[] readToEnd(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        try {
            in.transferTo(b);
        } catch (SocketException e) {
            assertThat(e.getMessage()).containsIgnoringCase("reset");
        }
        return b.toByteArray();
    }

    private static Duration since(long t0) { return Duration.ofNanos(System.nanoTime() - t0); }
}
