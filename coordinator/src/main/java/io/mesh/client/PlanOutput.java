package io.mesh.client;

import com.fasterxml.jackson.databind.JsonNode;
import io.mesh.manifest.WireName;
import io.mesh.wire.PlanOutcome;
import io.mesh.wire.PlanState;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * {@code mesh push FILE --plan}: follows {@code GET /v1/plans/{plan}} until every host answered (or {@code --timeout}),
 * then prints one row per host, module and container: the module's outcome, the action and its reasons
 * (docs/decisions/0012-plans.md).
 */
final class PlanOutput {
    /** {@code --timeout} of {@code push --plan} when none is given. */
    static final String TIMEOUT = "30s";

    private PlanOutput() {}

    /**
     * @param client  the coordinator
     * @param created the answer of {@code POST /v1/plans}
     * @param polling {@code --timeout} and {@code --interval}
     * @param out     where the plan goes
     * @param warn    where problems go ({@code mesh push: ...} on stderr)
     * @return {@value ExitCodes#OK} when every host answered and nothing would fail or be refused; {@value ExitCodes#FAILED}
     *         when something would, a host could not plan or has no agent; {@value ExitCodes#TIMEOUT} when a host did not
     *         answer in time; {@value ExitCodes#UNREACHABLE} when the coordinator stopped answering
     */
    static int follow(CoordinatorClient client, JsonNode created, CoordinatorCommand.Polling polling, PrintWriter out, Consumer<String> warn)
            throws InterruptedException {
        String plan = created.path("plan").asText();
        out.println(plan + "  revision " + created.path("revision").asText() + "  modules " + join(created.path("modules"))
                + "  hosts " + join(created.path("hosts")) + "  (a plan: nothing is pushed)");
        printSchedules(created.path("schedules"), out);
        out.flush();
        long deadline = polling.deadline();
        Following following = new Following(client, "/v1/plans/" + plan, plan, warn);
        JsonNode view = null;
        while (true) {
            JsonNode answer = following.ask();
            if (following.gone()) return ExitCodes.FAILED;
            if (answer != null) view = answer;
            if (view != null && view.path("done").asBoolean()) break;
            if (!polling.pause(deadline)) break;
        }
        if (view == null) return following.unreachable() ? ExitCodes.UNREACHABLE : ExitCodes.TIMEOUT;
        print(view, out);
        List<String> pending = new ArrayList<>(), failing = new ArrayList<>(), noAgent = new ArrayList<>();
        for (JsonNode h : view.path("hosts")) {
            String host = h.path("host").asText();
            switch (WireName.of(PlanState.class, h.path("state").asText())) {
                case PENDING -> pending.add(host);
                case NO_AGENT -> noAgent.add(host);
                case ANSWERED -> {
                    for (JsonNode m : h.path("modules")) {
                        if (WireName.of(PlanOutcome.class, m.path("outcome").asText()) == PlanOutcome.WOULD_FAIL) failing.add(host + "/" + m.path("module").asText());
                    }
                }
                default -> failing.add(host);
            }
        }
        List<String> says = new ArrayList<>();
        if (!failing.isEmpty()) says.add("would fail or be refused on " + String.join(", ", failing));
        if (!noAgent.isEmpty()) says.add("no agent on " + String.join(", ", noAgent));
        if (!pending.isEmpty()) says.add("no answer within " + polling.timeout().toSeconds() + "s from " + String.join(", ", pending));
        out.println(plan + ": " + (says.isEmpty() ? "nothing would fail or be refused" : String.join("; ", says)));
        out.flush();
        if (!pending.isEmpty()) return ExitCodes.TIMEOUT;
        return failing.isEmpty() && noAgent.isEmpty() ? ExitCodes.OK : ExitCodes.FAILED;
    }

    /**
     * Prints each schedule the push would add, change or remove against the desired state now (the coordinator's
     * {@code schedules}: the same on every host of the module), or that none changes.
     */
    static void printSchedules(JsonNode schedules, PrintWriter out) {
        if (!schedules.isArray()) return; // an older coordinator: it does not say
        if (schedules.isEmpty()) {
            out.println("schedules: no change");
            return;
        }
        for (JsonNode s : schedules) {
            List<String> fields = new ArrayList<>();
            s.path("fields").forEach(f -> fields.add(f.asText()));
            out.println("schedule " + s.path("module").asText() + "/" + s.path("schedule").asText() + " " + s.path("change").asText()
                    + (fields.isEmpty() ? "" : ": " + String.join("; ", fields)));
        }
    }

    /** Prints the plan's table: one row per container, and one per host without an answer. */
    static void print(JsonNode view, PrintWriter out) {
        Table table = new Table("HOST", "MODULE", "OUTCOME", "CONTAINER", "ACTION", "DETAIL");
        for (JsonNode h : view.path("hosts")) {
            String host = h.path("host").asText();
            PlanState state = WireName.of(PlanState.class, h.path("state").asText());
            if (state != PlanState.ANSWERED) {
                table.add(host, "-", h.path("state").asText(), "-", "-", h.path("error").asText(state == PlanState.PENDING ? "no answer yet" : ""));
                continue;
            }
            if (h.path("modules").isEmpty()) table.add(host, "-", "nothing", "-", "-", "no module of the plan runs or has containers here");
            for (JsonNode m : h.path("modules")) {
                String module = m.path("module").asText();
                String outcome = m.path("outcome").asText();
                JsonNode w = m.path("window");
                if (w.isObject()) {
                    table.add(host, module, outcome, "-", "deferred", "would be deferred by window " + w.path("schedule").asText() + " "
                            + w.path("window").asText() + " (open since " + w.path("since").asText() + "; the apply runs when it ends)");
                }
                for (JsonNode c : m.path("containers")) {
                    List<String> reasons = new ArrayList<>();
                    c.path("reasons").forEach(r -> reasons.add(r.asText()));
                    table.add(host, module, outcome, c.path("container").asText(), c.path("action").asText(),
                            reasons.isEmpty() ? "" : String.join("; ", reasons));
                }
            }
        }
        table.print(out, "no host is targeted (a module for \"*\" plans on the hosts with an agent)");
    }

    private static String join(JsonNode array) {
        List<String> s = new ArrayList<>();
        array.forEach(n -> s.add(n.asText()));
        return s.isEmpty() ? "-" : String.join(",", s);
    }
}
