package io.mesh.agent;

import io.mesh.manifest.ManifestParser;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code mesh-agent}'s {@code --allow-device}, {@code --allow-sysctl}, {@code --allow-security-opt} (decision 17) and
 * {@code --allow-host-network} make its policy.
 */
class AgentPolicyFlagsTest {
    private static AgentConfig config(String... args) {
        AgentMain.Run run = new AgentMain.Run();
        new CommandLine(run).parseArgs(args);
        return run.common.config(Duration.ofSeconds(60), Duration.ofSeconds(2));
    }

    @Test
    void theFlagsAllowWhatTheyName() throws Exception {
        AgentConfig c = config("--host", "host-a", "--allow-device", "/dev/fuse", "--allow-sysctl", "net.ipv4.*",
                "--allow-sysctl", "kernel.shm_rmid_forced", "--allow-security-opt", "no-new-privileges:true");
        assertThat(c.policy().toString()).contains("devices [/dev/fuse]", "sysctls [kernel.shm_rmid_forced, net.ipv4.*]",
                "security-opt [no-new-privileges:true]");
        var spec = new ManifestParser().parse("module: hc-flags\nhosts: [host-a]\ncontainers:\n  web:\n    image: mesh-demo/busybox:1\n"
                + "    network: none\n    devices: [/dev/fuse]\n    sysctls: {net.ipv4.ip_forward: 1, kernel.shm_rmid_forced: 1}\n"
                + "    security-opt: [\"no-new-privileges:true\"]\n").get(0).containers().get("web");
        assertThat(c.policy().refusals(spec)).isEmpty();
        assertThat(config("--host", "host-a").policy().refusals(spec)).hasSize(4);
    }

    @Test
    void allowHostNetworkLetsContainersAndStepsOnTheHostsNetwork() throws Exception {
        var parsed = new ManifestParser().parse("module: hc-net\nhosts: [host-a]\ncontainers:\n  web:\n    image: mesh-demo/busybox:1\n"
                + "schedules:\n  gc:\n    cron: \"30 3 * * *\"\n    while-stopped: [web]\n"
                + "    step: {image: mesh-demo/busybox:1, command: [\"true\"], network: host}\n").get(0);
        var web = parsed.containers().get("web"); // no network given: the host's
        var step = parsed.schedules().get("gc").step();
        AgentConfig byDefault = config("--host", "host-a");
        assertThat(byDefault.policy().refusals(web)).singleElement().asString().contains("network: host", "--allow-host-network");
        assertThat(byDefault.policy().refusals(step)).singleElement().asString().contains("step.network: host", "--allow-host-network");
        AgentConfig allowing = config("--host", "host-a", "--allow-host-network");
        assertThat(allowing.policy().refusals(web)).isEmpty();
        assertThat(allowing.policy().refusals(step)).isEmpty();
        assertThat(allowing.policy().toString()).contains("network host allowed");
    }

    @Test
    void aMalformedRuleIsRefusedNamingTheFlag() {
        assertThatThrownBy(() -> config("--host", "host-a", "--allow-sysctl", "net ipv4")).hasMessageContaining("--allow-sysctl 'net ipv4'");
        assertThatThrownBy(() -> config("--host", "host-a", "--allow-device", "dev/fuse")).hasMessageContaining("--allow-device 'dev/fuse'");
    }
}
