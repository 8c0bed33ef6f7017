package io.mesh.client;

import com.sun.net.httpserver.HttpServer;
import picocli.CommandLine;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@code deploy/bin/mesh} runs once per jar and JVM, with {@code -XX:DumpLoadedClassList} (then {@code -Xshare:dump}),
 * to make the class-data archive (AppCDS) that its later starts map instead of loading those classes one by one
 * (docs/benchmark-notes.md, B9). It runs the commands that only read ({@code status}, {@code held}, their {@code --json}) and
 * {@code --help}, in this JVM, against a stand-in coordinator on a free loopback port, so that the archive holds what
 * they load: the HTTP client, Jackson, the tables. Nothing leaves this process; it prints nothing.
 */
public final class Warmup {
    /**
     * One answer for every path: a fleet and the lookups with one entry of each kind, so that every line
     * {@code status} and {@code held} print runs (each string concatenation's shape is archived, not made at each run).
     */
    private static final byte[] ANSWER = ("{\"at\":\"2026-01-01T00:01:00Z\",\"hosts\":[{\"host\":\"warmup\",\"online\":true,\"modules\":["
            + "{\"module\":\"m\",\"revision\":\"r\",\"desiredRevision\":\"s\",\"outcome\":\"failed\",\"error\":\"e\","
            + "\"window\":{\"schedule\":\"s\",\"window\":\"window-0000000001\",\"since\":\"2026-01-01T00:00:00Z\"},\"held\":[\"m-c\"],"
            + "\"finishedAt\":\"2026-01-01T00:00:00Z\",\"images\":[{\"container\":\"m-c\",\"imageId\":\"sha256:0123456789abcdef0123\",\"imageDigest\":\"d\"}]}]},"
            + "{\"host\":\"idle\",\"online\":false,\"modules\":[]}],"
            + "\"windows\":[{\"host\":\"warmup\",\"module\":\"m\"}],"
            + "\"freezes\":[{\"module\":\"m\",\"until\":\"2026-01-01T00:00:00Z\",\"by\":\"u\",\"reason\":\"r\"}],"
            + "\"pendingPushes\":[{\"push\":\"push-0000000001\",\"revision\":\"r\",\"state\":\"pending\","
            + "\"counts\":{\"pending\":1,\"superseded\":1}}],"
            + "\"held\":[{\"host\":\"warmup\",\"container\":\"m-c\",\"module\":\"m\",\"schedule\":\"s\",\"window\":\"w\","
            + "\"since\":\"2026-01-01T00:00:00Z\",\"by\":{\"pid\":1,\"process\":\"p\"}}],"
            + "\"holds\":[{\"host\":\"warmup\",\"container\":\"m-d\",\"module\":\"m\",\"expired\":true,"
            + "\"hold\":{\"by\":\"u\",\"reason\":\"r\",\"until\":\"2026-01-01T00:00:00Z\",\"stop\":true}}],\"locks\":[]}")
            .getBytes(StandardCharsets.UTF_8);

    private Warmup() {}

    /**
     * Runs the commands, then returns (the JVM writes the archive as it exits).
     *
     * @param args none
     * @throws IOException when the stand-in cannot listen on loopback
     */
    public static void main(String[] args) throws IOException { run(); }

    /**
     * @return each command's exit code: all 0 while the commands and the stand-in's answer agree
     * @throws IOException when the stand-in cannot listen on loopback
     */
    static List<Integer> run() throws IOException {
        HttpServer coordinator = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        coordinator.createContext("/", exchange -> {
            exchange.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
            exchange.sendResponseHeaders(200, ANSWER.length);
            try (OutputStream body = exchange.getResponseBody()) {
                body.write(ANSWER);
            }
        });
        coordinator.start();
        try {
            String url = "--coordinator=http://" + coordinator.getAddress().getHostString() + ":" + coordinator.getAddress().getPort();
            List<Integer> codes = new ArrayList<>();
            for (List<String> command : List.of(List.of("status", url), List.of("status", "--json", url), List.of("held", url),
                    List.of("--help"))) {
                CommandLine cl = MeshCli.commandLine(command.toArray(String[]::new));
                cl.setOut(new PrintWriter(Writer.nullWriter()));
                cl.setErr(new PrintWriter(Writer.nullWriter()));
                codes.add(cl.execute(command.toArray(String[]::new)));
            }
            return codes;
        } finally {
            coordinator.stop(0);
        }
    }
}
