package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.mesh.client.ClientText.*;
import static io.mesh.client.CoordinatorCommand.*;
import static io.mesh.client.ExitCodes.*;

/** {@code mesh rollout status|resume|abort|promote}: a push's rollout (decision 13). */
final class RolloutCommands {
    private RolloutCommands() {}

    /** {@code mesh rollout status|resume|abort|promote MODULE}: a module's rollout (decision 13). */
    @Command(name = "rollout", mixinStandardHelpOptions = true,
            description = {"A module's rollout (/mesh/rollouts/MODULE): its status, resume, abort and promote.",
                    "mesh rollout status MODULE shows which hosts are done, applying, waiting and failed;",
                    "resume MODULE lets a paused rollout go on (the hosts that failed keep the previous revision); abort MODULE stops it for good",
                    "(hosts that have not applied it keep the previous revision); promote MODULE lets the hosts after the canaries of a",
                    "promote: manual rollout go."},
            subcommands = {RolloutCommands.RolloutStatus.class, RolloutCommands.RolloutResume.class, RolloutCommands.RolloutAbort.class,
                    RolloutCommands.RolloutPromote.class})
    public static final class RolloutCmd implements Runnable {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        /** Prints the usage. */
        @Override
        public void run() { throw missingCommand(spec); }

        /** @return one line: state, then the hosts done (of all), applying, waiting, failed, drained and the canaries */
        static String summary(JsonNode r) {
            Set<String> hosts = new HashSet<>();
            for (String f : List.of("hosts", "done", "applying", "waiting", "failed", "drained")) r.path(f).forEach(h -> hosts.add(h.asText()));
            int all = hosts.size();
            String s = r.path("state").asText() + "  done " + r.path("done").size() + "/" + all;
            if (!r.path("applying").isEmpty()) s += "  applying " + joinText(r.path("applying"));
            if (!r.path("waiting").isEmpty()) s += "  waiting " + joinText(r.path("waiting"));
            if (!r.path("failed").isEmpty()) s += "  failed " + joinText(r.path("failed"));
            if (!r.path("drained").isEmpty()) s += "  drained " + joinText(r.path("drained")) + " (passed over)";
            if (!r.path("canary").isEmpty()) s += "  canary " + joinText(r.path("canary"));
            if (r.hasNonNull("maxParallel")) s += "  max-parallel " + r.path("maxParallel").asInt();
            if (r.hasNonNull("maxFailed")) s += "  max-failed " + r.path("maxFailed").asInt();
            if (r.hasNonNull("soak")) s += "  soak " + r.path("soak").asText();
            if (r.hasNonNull("promote")) s += "  promote " + r.path("promote").asText() + (r.hasNonNull("promotedAt") ? " (promoted)" : "");
            return s;
        }
    }

    /** The shape of the rollout commands: one request about MODULE's rollout, the record printed. */
    abstract static class RolloutCommand extends CoordinatorCommand {
        @Parameters(index = "0", paramLabel = "MODULE", description = "The module, such as store.")
        String module;

        @Option(names = "--json", description = "Print the rollout node's JSON.")
        boolean json;

        /** Sends the request. */
        abstract CoordinatorClient.Response send(CoordinatorClient client, String path) throws IOException, InterruptedException;

        /**
         * Resumes, aborts or promotes the rollout of the push the module's rollout node names now, read just before: a
         * newer push that replaced it in between is not moved by mistake (409).
         */
        static CoordinatorClient.Response move(CoordinatorClient client, String path, String move) throws IOException, InterruptedException {
            CoordinatorClient.Response now = client.get(path);
            if (now.status() != 200 || now.json() == null) return now;
            return client.postJson(path + "/" + move, Map.of("push", now.json().path("push").asText()));
        }

        /** @return the exit code (see the command's exit codes) */
        @Override
        public Integer call() throws Exception {
            CoordinatorClient.Response r = send(client(), "/v1/rollouts/" + URLEncoder.encode(module, StandardCharsets.UTF_8));
            Integer bad = failure(r, 200);
            if (bad != null) return bad;
            JsonNode j = r.json();
            PrintWriter out = out();
            if (json) {
                out.println(pretty(j));
            } else {
                out.println("rollout of " + module + ": " + j.path("push").asText() + " revision " + j.path("revision").asText()
                        + "  since " + text(j.path("since")) + "  on-failure " + j.path("onFailure").asText());
                out.println(RolloutCmd.summary(j));
                if (j.hasNonNull("note")) out.println(j.path("note").asText());
            }
            out.flush();
            return OK;
        }
    }

    /** {@code mesh rollout status MODULE}. */
    @Command(name = "status", description = "Show MODULE's rollout: its push, state, and the hosts done, applying, waiting and failed (GET /v1/rollouts/MODULE).",
            exitCodeList = {"0:shown", "2:the module has no rollout, or a bad name", "4:the coordinator cannot be reached"})
    public static final class RolloutStatus extends RolloutCommand {
        @Override
        CoordinatorClient.Response send(CoordinatorClient client, String path) throws IOException, InterruptedException {
            return client.get(path);
        }
    }

    /** {@code mesh rollout resume MODULE}. */
    @Command(name = "resume", description = "Let MODULE's paused rollout go on (POST /v1/rollouts/MODULE/resume): the hosts that failed keep the previous revision.",
            exitCodeList = {"0:resumed", "2:no rollout, not paused, unauthorized", "4:the coordinator cannot be reached"})
    public static final class RolloutResume extends RolloutCommand {
        @Override
        CoordinatorClient.Response send(CoordinatorClient client, String path) throws IOException, InterruptedException {
            return move(client, path, "resume");
        }
    }

    /** {@code mesh rollout abort MODULE}. */
    @Command(name = "abort", description = "Stop MODULE's rollout for good (POST /v1/rollouts/MODULE/abort): hosts that have not applied it keep the previous revision.",
            exitCodeList = {"0:aborted", "2:no rollout, ended already, unauthorized", "4:the coordinator cannot be reached"})
    public static final class RolloutAbort extends RolloutCommand {
        @Override
        CoordinatorClient.Response send(CoordinatorClient client, String path) throws IOException, InterruptedException {
            return move(client, path, "abort");
        }
    }

    /** {@code mesh rollout promote MODULE}. */
    @Command(name = "promote", description = "Let the hosts after the canaries of MODULE's promote: manual rollout go (POST /v1/rollouts/MODULE/promote);"
            + " before the canaries are ready, they go once the canaries are.",
            exitCodeList = {"0:promoted", "2:no rollout, not promote: manual, promoted already, not rolling, unauthorized", "4:the coordinator cannot be reached"})
    public static final class RolloutPromote extends RolloutCommand {
        @Override
        CoordinatorClient.Response send(CoordinatorClient client, String path) throws IOException, InterruptedException {
            return move(client, path, "promote");
        }
    }
}
