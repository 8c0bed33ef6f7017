package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.manifest.Durations;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

import static io.mesh.client.ClientText.*;
import static io.mesh.client.ExitCodes.*;

/** {@code mesh drain}, {@code mesh undrain} (SPEC.md "The rest of the operator's stack"; decision 37). */
final class DrainCommands {
    private DrainCommands() {}

    /** {@code mesh drain HOST --reason TEXT [--for DURATION] [--stop]}. */
    @Command(name = "drain", description = {"Put HOST in maintenance (POST /v1/drains): every mesh container of it held, no window there, rollouts passing over it.",
            "Its agent places an operator's hold on each container (mesh held lists them, REASON 'drain: ...'). With --stop the holds stop their",
            "containers; mesh undrain starts the same containers again. It lasts until mesh undrain, or --for (at most 366 days, such as 72h).",
            "A drained host is drained once: mesh undrain it first to change the reason, --for or --stop."},
            exitCodeList = {"0:drained (the host's agent places the holds; mesh held shows them as it confirms each)",
                    "2:bad input: unknown host, missing reason, bad duration, drained already (mesh undrain it first), unauthorized",
                    "3:recorded, but the host has no running agent: nothing is held until it is back", "4:the coordinator cannot be reached"})
    public static final class Drain extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "HOST", description = "The host, such as host-a.")
        String host;

        @Option(names = "--reason", required = true, paramLabel = "TEXT", description = "Why, for whoever reads mesh held.")
        String reason;

        @Option(names = "--for", paramLabel = "DURATION", description = "End by itself after this, such as 2h or 72h (no days; default: until mesh undrain).")
        String lasts;

        @Option(names = "--stop", description = "Stop every container of the host while drained; mesh undrain starts the same containers again.")
        boolean stop;

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            if (lasts != null) {
                try {
                    Durations.parse(lasts);
                } catch (IllegalArgumentException e) {
                    return fail(BAD_INPUT, "--for: " + e.getMessage());
                }
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("host", host);
            body.put("reason", reason);
            if (lasts != null) body.put("for", lasts);
            if (stop) body.put("stop", true);
            CoordinatorClient.Response r = client().postJson("/v1/drains", body);
            Integer bad = failure(r, 201);
            if (bad != null) return bad;
            JsonNode d = r.json().path("drain");
            PrintWriter out = out();
            out.println(host + " drained by " + d.path("by").asText() + ": " + d.path("reason").asText()
                    + (d.hasNonNull("until") ? " until " + text(d.path("until")) : " until mesh undrain " + host)
                    + (stop ? "; its agent stops every container of it" : "; its containers keep running, untouched")
                    + " (mesh held shows each hold as its agent confirms it)");
            out.flush();
            if (r.json().path("agentDown").asBoolean()) {
                return fail(TIMEOUT, host + " has no running agent: the drain is recorded, and its holds are placed (and confirmed) when "
                        + "its agent is back; nothing is held until then");
            }
            return OK;
        }
    }

    /** {@code mesh undrain HOST}. */
    @Command(name = "undrain", description = {"End HOST's drain (DELETE /v1/drains/HOST): its holds go with it, and its agent applies each module.",
            "The same containers a --stop stopped are started again; a push the rollouts passed over lands there."},
            exitCodeList = {"0:undrained", "2:the host is not drained, unauthorized", "4:the coordinator cannot be reached"})
    public static final class Undrain extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "HOST", description = "The host, such as host-a.")
        String host;

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            CoordinatorClient.Response r = client().delete("/v1/drains/" + URLEncoder.encode(host, StandardCharsets.UTF_8));
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            JsonNode released = r.json().path("released");
            out().println(host + " undrained" + (released.size() == 0 ? "" : ": released " + released.size() + " hold"
                    + (released.size() == 1 ? "" : "s")) + "; its agent applies its modules now");
            out().flush();
            return OK;
        }
    }
}
