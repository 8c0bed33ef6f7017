package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static io.mesh.client.ClientText.*;
import static io.mesh.client.CoordinatorCommand.*;
import static io.mesh.client.ExitCodes.*;

/** {@code mesh audit}, {@code why}: the ledger judged by the one checker (SPEC.md, "Audit"; decision 28). */
final class AuditCommands {
    private AuditCommands() {}

    /**
     * {@code mesh audit [--since DURATION|TIME] [--until TIME] [--host H] [--module M] [--json]} (SPEC.md "Audit";
     * decision 28): each host's ledger over the span, judged by the one checker in the coordinator.
     */
    @Command(name = "audit",
            description = {"Show, from each host's ledger (Docker's own events and mesh's calls), every window, hold, freeze and apply in the span",
                    "and whether mesh kept its promise (GET /v1/audit): touched-while-held, outside-mesh, left-stopped, changed-while-frozen, gap,",
                    "each with the Docker event that shows it. The coordinator waits up to 10s for the hosts' agents to answer."},
            exitCodeList = {"0:clean", "1:violations", "2:bad usage (a bad --since or --until, an unknown host or module)",
                    "3:only gaps, or hosts that did not answer", "4:the coordinator cannot be reached, or runs 4 audits already (ask again)"})
    public static final class Audit extends CoordinatorCommand {
        /** The exit code of an audit with gaps only, or hosts that did not answer (SPEC.md, "Audit"). */
        public static final int GAPS = 3;

        @Option(names = "--since", paramLabel = "DURATION|TIME", defaultValue = "24h",
                description = "The span's start: a duration back from now, such as 1h or 24h, or an ISO-8601 UTC time (default: ${DEFAULT-VALUE}).")
        String since;

        @Option(names = "--until", paramLabel = "TIME", description = "The span's end, an ISO-8601 UTC time (default: now).")
        String until;

        @Option(names = "--host", paramLabel = "HOST", description = "Only this host (repeatable; default: every host).")
        List<String> hosts = new ArrayList<>();

        @Option(names = "--module", paramLabel = "MODULE", description = "Only this module (repeatable; default: every module).")
        List<String> modules = new ArrayList<>();

        @Option(names = "--timeout", paramLabel = "DURATION",
                description = "How long the coordinator waits for the hosts' agents, such as 5s (default: 10s; at most 25s).")
        String timeout;

        @Option(names = "--json", description = "Print the coordinator's JSON instead of text (the exit code is the same).")
        boolean json;

        /** @return the API path with the query these options make */
        String path() {
            StringBuilder q = new StringBuilder("/v1/audit?since=").append(URLEncoder.encode(since, StandardCharsets.UTF_8));
            if (until != null) q.append("&until=").append(URLEncoder.encode(until, StandardCharsets.UTF_8));
            for (String h : hosts) q.append("&host=").append(URLEncoder.encode(h, StandardCharsets.UTF_8));
            for (String m : modules) q.append("&module=").append(URLEncoder.encode(m, StandardCharsets.UTF_8));
            if (timeout != null) q.append("&timeout=").append(URLEncoder.encode(timeout, StandardCharsets.UTF_8));
            return q.toString();
        }

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            CoordinatorClient.Response r = client().get(path());
            if (r.status() == 400 && r.json() != null && r.json().path("errors").isArray()) {
                for (JsonNode e : r.json().path("errors")) warn("--" + e.path("field").asText() + ": " + e.path("message").asText());
                return BAD_INPUT;
            }
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            PrintWriter out = out();
            if (json) out.println(pretty(r.json()));
            else AuditOutput.print(r.json(), out);
            out.flush();
            int exit = r.json().path("exit").asInt(FAILED);
            return exit == 0 || exit == 1 || exit == GAPS ? exit : FAILED;
        }
    }

    /** {@code mesh why HOST CONTAINER}: why the container is in its state now, as a chain of reasons (SPEC.md "Audit"). */
    @Command(name = "why",
            description = {"Why CONTAINER (its Docker name, <module>-<name>) on HOST is in its state now (GET /v1/why/HOST/CONTAINER): held by a window",
                    "or an operator, pushes deferred behind it, its rollout's wave, a freeze, the slot queue, the last apply's outcome and reasons,",
                    "and today's audit violations on it (asked of the host's ledger)."},
            exitCodeList = {"0:shown", "2:unknown host or container", "4:the coordinator cannot be reached, or runs 4 audits already (ask again)"})
    public static final class Why extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "HOST", description = "The host, such as host-a.")
        String host;

        @Parameters(index = "1", paramLabel = "CONTAINER", description = "The container's Docker name, such as store-registry.")
        String container;

        @Option(names = "--json", description = "Print the coordinator's JSON instead of text.")
        boolean json;

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            CoordinatorClient.Response r = client().get("/v1/why/" + URLEncoder.encode(host, StandardCharsets.UTF_8) + "/"
                    + URLEncoder.encode(container, StandardCharsets.UTF_8));
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            PrintWriter out = out();
            if (json) out.println(pretty(r.json()));
            else AuditOutput.printWhy(r.json(), out);
            out.flush();
            return OK;
        }
    }
}
