package io.mesh.apply;

import io.mesh.docker.Labels;
import io.mesh.testing.ApplierExtension;
import io.mesh.testing.TestDocker;
import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyOutcome;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.ApplyReport.ContainerResult;
import io.mesh.wire.ContainerAction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.mesh.testing.TestDocker.BUSYBOX;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A create dockerd refuses (here a log option its driver does not know, which only dockerd checks) is a failed try of
 * the container: the report gives Docker's own text, and the next apply of the same push does not ask again before
 * its back-off (failure model row 81), on the real engine.
 */
class CreateRefusedBackoffTest {
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();
    @RegisterExtension
    final ApplierExtension here = new ApplierExtension(zk, "cr");

    @Test
    void aCreateDockerRefusesIsBackedOffLikeAStartItRefuses() throws Exception {
        String module = here.module();
        zk.setDesired("module: " + module + "\nhosts: [host-a]\ncontainers:\n  web:\n    image: " + BUSYBOX + "\n    network: none\n"
                + "    command: [sleep, \"600\"]\n    logging: {driver: json-file, options: {bogus-opt: \"1\"}}\n", "r1");
        ApplyReport first = here.applier().apply(module, () -> false);
        assertThat(first.outcome()).isEqualTo(ApplyOutcome.FAILED);
        ContainerResult web = first.containers().get(0);
        assertThat(web.action()).isEqualTo(ContainerAction.FAILED);
        assertThat(String.join("\n", web.reasons())).contains("unknown log opt 'bogus-opt' for json-file log driver");

        ApplyReport second = here.applier().apply(module, () -> false);
        assertThat(String.join("\n", second.containers().get(0).reasons())).as("%s", second)
                .contains("unknown log opt 'bogus-opt'", "not tried again before");
        assertThat(TestDocker.engine().containersWithLabel(Labels.MODULE, module)).isEmpty();
    }
}
