package io.mesh.docker;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A real unix-socket endpoint that looks like a hung dockerd: it accepts connections, reads requests and never
 * answers them. Optionally it answers {@code GET /_ping} (a dockerd whose API thread still runs while container calls
 * hang), so that a test can see the client go on working after it abandoned a call.
 */
final class HungDockerd implements AutoCloseable {
    private final Path dir;
    private final Path socket;
    private final ServerSocketChannel server;
    private final boolean answerPing;
    private final List<SocketChannel> connections = new CopyOnWriteArrayList<>();

    private HungDockerd(boolean answerPing) throws IOException {
        this.answerPing = answerPing;
        this.dir = Files.createTempDirectory("mesh-hung");
        this.socket = dir.resolve("docker.sock");
        this.server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        daemon("hung-dockerd-accept", this::accept).start();
    }

    /**
     * @param answerPing whether to answer {@code /_ping} requests (every other request hangs)
     * @return a listening endpoint
     */
    static HungDockerd start(boolean answerPing) throws IOException {
        return new HungDockerd(answerPing);
    }

    /** @return its URI for {@code --docker-host}, such as {@code unix:///tmp/mesh-hung123/docker.sock} */
    String uri() { return "unix://" + socket; }

    private void accept() {
        try {
            while (true) {
                SocketChannel c = server.accept();
                connections.add(c);
                if (answerPing) daemon("hung-dockerd-conn", () -> serve(c)).start();
                // else: never read, never answer
            }
        } catch (IOException closed) {
            // closed by close()
        }
    }

    /** Answers pings on a connection until a request that is not a ping comes: then goes silent. */
    private void serve(SocketChannel c) {
        StringBuilder in = new StringBuilder();
        ByteBuffer buf = ByteBuffer.allocate(8192);
        try {
            while (c.read(buf.clear()) > 0) {
                in.append(StandardCharsets.ISO_8859_1.decode(buf.flip()));
                int end;
                while ((end = in.indexOf("\r\n\r\n")) >= 0) {
                    String head = in.substring(0, end);
                    in.delete(0, end + 4);
                    String requestLine = head.lines().findFirst().orElse("");
                    if (!requestLine.contains("/_ping")) return; // hang: keep the connection, never answer
                    c.write(ByteBuffer.wrap(("HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n"
                            + "Api-Version: 1.41\r\nContent-Length: 2\r\n\r\nOK").getBytes(StandardCharsets.ISO_8859_1)));
                }
            }
        } catch (IOException closed) {
            // the client went
        }
    }

    private static Thread daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (SocketChannel c : connections) c.close();
        Files.deleteIfExists(socket);
        Files.deleteIfExists(dir);
    }
}
