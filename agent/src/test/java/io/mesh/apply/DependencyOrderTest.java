package io.mesh.apply;

import io.mesh.manifest.ContainerSpec;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The order of an apply's calls under {@code depends-on}, and when a dependency holds a dependent back. */
class DependencyOrderTest {
    static ContainerSpec needs(Map<String, ContainerSpec.DependsOn> deps) {
        return ContainerSpec.builder("img").dependsOn(deps).build();
    }

    static final ContainerSpec PLAIN = needs(null);

    @Test
    void dependenciesComeFirstOtherwisePlanOrder() {
        Map<String, ContainerSpec> want = Map.of(
                "web", needs(Map.of("db", new ContainerSpec.DependsOn("healthy"), "cache", new ContainerSpec.DependsOn("started"))),
                "cache", needs(Map.of("db", new ContainerSpec.DependsOn("started"))), "db", PLAIN, "side", PLAIN);
        List<PlannedAction> plan = List.of(PlannedAction.create("web", "m-web"), PlannedAction.create("side", "m-side"),
                PlannedAction.create("cache", "m-cache"), PlannedAction.create("db", "m-db"));
        assertThat(DependencyOrder.sort(plan, want)).extracting(PlannedAction::name).containsExactly("side", "db", "cache", "web");
    }

    @Test
    void aDependencyThatFailedOrIsNotHealthyHoldsTheDependentBack() {
        ContainerSpec web = needs(Map.of("db", new ContainerSpec.DependsOn("healthy")));
        ContainerSpec worker = needs(Map.of("db", new ContainerSpec.DependsOn("started")));
        ContainerResult healthy = new ContainerResult("db", "m-db", ContainerAction.RECREATED, List.of(), "1", "healthy", null);
        ContainerResult starting = new ContainerResult("db", "m-db", ContainerAction.UNCHANGED, List.of(), "1", "starting", null);
        ContainerResult reverted = new ContainerResult("db", "m-db", ContainerAction.REVERTED, List.of("not ready: unhealthy"), "1");
        ContainerResult held = new ContainerResult("db", "m-db", ContainerAction.HELD, List.of("held by window gc"), "1");
        assertThat(DependencyOrder.unmet(web, n -> healthy)).isNull();
        assertThat(DependencyOrder.unmet(web, n -> starting)).contains("being healthy", "starting");
        assertThat(DependencyOrder.unmet(worker, n -> starting)).isNull();
        assertThat(DependencyOrder.unmet(worker, n -> reverted)).contains("depends on db", "reverted", "not ready");
        assertThat(DependencyOrder.unmet(web, n -> held)).as("a window's hold holds nobody back").isNull();
        assertThat(DependencyOrder.unmet(web, n -> null)).as("not in this apply").isNull();
    }
}
