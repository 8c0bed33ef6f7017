package io.mesh.wire;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.time.Instant;
import java.util.List;

/**
 * Data of {@code /mesh/plans/<plan>/<host>}: {@code pending} as the coordinator writes it, then the answer of that
 * host's agent, written with a {@code setData} at the version it read (so two answers never overwrite each other).
 *
 * @param plan        the plan's name
 * @param host        the host
 * @param state       {@link PlanState}
 * @param requestedAt when the plan was written
 * @param answeredAt  when the agent answered
 * @param by          the agent process that answered
 * @param modules     per module of the request that the host's apply would touch: what it would do
 * @param error       why the agent could not plan ({@code failed}), else {@code null}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PlanAnswer(String plan, String host, PlanState state, Instant requestedAt, Instant answeredAt, ProcessRef by,
                         List<ModulePlan> modules, String error) {
    /** @return the node the coordinator writes */
    public static PlanAnswer pending(String plan, String host, Instant requestedAt) {
        return new PlanAnswer(plan, host, PlanState.PENDING, requestedAt, null, null, null, null);
    }

    /** @return this plan answered with {@code modules} */
    public PlanAnswer answered(ProcessRef agent, Instant at, List<ModulePlan> modules) {
        return new PlanAnswer(plan, host, PlanState.ANSWERED, requestedAt, at, agent, List.copyOf(modules), null);
    }

    /** @return this plan not answerable, for {@code why} */
    public PlanAnswer failed(ProcessRef agent, Instant at, String why) {
        return new PlanAnswer(plan, host, PlanState.FAILED, requestedAt, at, agent, null, why);
    }

    /** @return true when an agent answered and every module would apply or be deferred */
    public boolean clean() {
        return state == PlanState.ANSWERED && modules != null && modules.stream().noneMatch(m -> m.outcome() == PlanOutcome.WOULD_FAIL);
    }

    /**
     * What an apply of one module on this host would do.
     *
     * @param module     module name
     * @param revision   the revision it has on this host now (from its containers' labels), or {@code null}
     * @param outcome    {@link PlanOutcome}
     * @param window     the open window that would defer it, or {@code null}
     * @param containers per container, in the apply's plan order
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ModulePlan(String module, String revision, PlanOutcome outcome, ApplyReport.WindowRef window,
                             List<ContainerPlan> containers) {}

    /**
     * What an apply would do to one container.
     *
     * @param name      container name in the spec
     * @param container Docker name
     * @param action    what the apply would report: {@code unchanged | created | recreated | removed | held | failed}
     * @param reasons   why, as the apply's report would say (recreate reasons, policy refusals, held by ...)
     * @param image     the image a create or recreate needs, else {@code null}
     * @param problems  what would make the apply fail: a policy refusal, a missing image, a crash loop; empty when none
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ContainerPlan(String name, String container, ContainerAction action, List<String> reasons, String image,
                                List<String> problems) {}
}
