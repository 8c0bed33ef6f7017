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
 * What {@code deploy/bin/mesh} runs once per jar and JVM, with {@code -XX:ArchiveClassesAtExit}, to make the class-data
 * archive (AppCDS) that its later starts map instead of loading those classes one by one (docs/benchmarks.md, "Client
 * start"). It runs the commands that only read ({@code status}, {@code held}, their {@code --json}) and
 * {@code --help}, in this JVM, against a stand-in coordinator on a free loopback port, so that the archive holds what
 * they load: the HTTP client, Jackson, the tables. Nothing leaves this process; it prints nothing.
 */
public final class Warmup {
    /** One answer for every path: a fleet, and the empty lists of the other lookups. */
    private static final byte[] ANSWER = ("{\"hosts\":[{\"host\":\"warmup\",\"online\":true,\"modules\":[{\"module\":\"m\",\"revision\":\"r\","
            + "\"desiredRevision\":\"r\",\"outcome\":\"applied\",\"window\":null,\"held\":[],\"ageSeconds\":1.5}]}],"
            + "\"windows\":[],\"pendingPushes\":[],\"held\":[],\"locks\":[]}").getBytes(StandardCharsets.UTF_8);

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
                CommandLine cl = MeshCli.commandLine();
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
