package io.mesh.agent;

import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.AuditViolationKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code mesh_audit_violations_total{host,module,kind}} (SPEC.md, "Audit"), as a scrape shows it. */
class AuditMetricTest {
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();

    @Test
    void eachViolationTheContinuousAuditFindsIsCountedByModuleAndKind() {
        try (AgentMetrics m = new AgentMetrics(zk.client(), zk.paths(), "host-a")) {
            m.start();
            m.auditViolation("shop", AuditViolationKind.TOUCHED_WHILE_HELD);
            m.auditViolation("shop", AuditViolationKind.TOUCHED_WHILE_HELD);
            m.auditViolation(null, AuditViolationKind.GAP);
            String text = m.render();
            assertThat(text).contains("# TYPE mesh_audit_violations_total counter");
            assertThat(text).contains("mesh_audit_violations_total{host=\"host-a\",module=\"shop\",kind=\"touched-while-held\"} 2");
            assertThat(text).contains("mesh_audit_violations_total{host=\"host-a\",module=\"-\",kind=\"gap\"} 1");
        }
    }
}
