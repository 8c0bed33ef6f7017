package io.mesh.curator;

import io.mesh.testing.ZooKeeperExtension;
import io.mesh.wire.ApplyReport;
import io.mesh.wire.Json;
import io.mesh.wire.Times;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ApplyReports#readAll} against a real ZooKeeper: every host's report of the modules asked, read node by node,
 * so that reports together far larger than ZooKeeper's 1 MB answer still read; a report whose data names another host
 * than its path is left out.
 */
class ApplyReportsTest {
    @RegisterExtension
    final ZooKeeperExtension zk = new ZooKeeperExtension();

    private void write(String host, String module, ApplyReport r) throws Exception {
        zk.client().create().orSetData().creatingParentsIfNeeded().forPath(zk.paths().report(host, module), Json.bytes(r));
    }

    @Test
    void readsEveryHostsReportOfTheModulesAskedEvenWhenTogetherTheyPassOneMegabyte() throws Exception {
        CuratorFramework c = zk.client();
        // Three reports of ~600 KB each (a long error): one multi of them would pass jute.maxbuffer
        String longError = "x".repeat(600_000);
        for (String host : List.of("h1", "h2", "h3")) {
            write(host, "reg", ApplyReport.failed(host, "reg", "r1", "push-0000000001", Times.now(), longError).withDown(List.of("reg-app")));
        }
        write("h1", "web", ApplyReport.failed("h1", "web", "r1", "push-0000000001", Times.now(), "no"));
        write("h4", "reg", ApplyReport.failed("h1", "reg", "r1", "push-0000000001", Times.now(), "forged: h4 speaks for h1"));

        List<ApplyReport> read = ApplyReports.readAll(c, zk.paths(), Set.of("reg", "gone"));
        assertThat(read).extracting(ApplyReport::host).containsExactly("h1", "h2", "h3");
        assertThat(read).allSatisfy(r -> assertThat(r.down()).containsExactly("reg-app"));
        assertThat(ApplyReports.readAll(c, zk.paths(), Set.of())).isEmpty();
    }
}
