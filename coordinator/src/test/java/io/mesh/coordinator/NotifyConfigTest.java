package io.mesh.coordinator;

import io.mesh.wire.EventType;
import io.mesh.wire.MeshEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code --notify-config} (SPEC.md, "The rest of the operator's stack"): what it takes, and each mistake named with its fix. */
class NotifyConfigTest {
    @TempDir
    Path dir;

    private NotifyConfig parse(String yaml) { return NotifyConfig.parse(yaml, dir, "--notify-config f.yaml"); }

    @Test
    void specsExampleIsReadWithEveryEventTypeAndItsSecret() throws IOException {
        Files.writeString(dir.resolve("ops.secret"), "s3cret\n");
        NotifyConfig c = parse("""
                webhooks:
                  - name: ops
                    url: http://127.0.0.1:9000/mesh
                    secret-file: ops.secret
                    events: [window.started, window.ended, window.failed, window.skipped, push.failed, push.reverted,
                             rollout.paused, rollout.done, hold.placed, hold.ended, freeze.started, freeze.ended, audit.violation]
                    format: json
                  - name: chat
                    url: https://hooks.example.org/x
                    events: [window.failed]
                    format: slack
                """);
        assertThat(c.webhooks()).hasSize(2);
        Webhook ops = c.webhooks().get(0);
        assertThat(ops.events()).hasSize(EventType.values().length - 1).doesNotContain(EventType.UNKNOWN);
        assertThat(ops.format()).isEqualTo(NotifyFormat.JSON);
        byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
        assertThat(ops.signature(body)).isEqualTo(WebhookSecret.of("s3cret").sign(body)).startsWith("sha256=");
        Webhook chat = c.webhooks().get(1);
        assertThat(chat.signature(body)).as("no secret-file: unsigned").isNull();
        MeshEvent e = MeshEvent.of(EventType.WINDOW_FAILED, Instant.parse("2026-12-07T03:30:00Z"), "host-a", "store")
                .withWindow("gc", "w-1").withOutcome("step-failed", 1).withId("host-a/e-0000000003");
        assertThat(new String(chat.body(e), StandardCharsets.UTF_8)).startsWith("{\"text\":\"[mesh] window.failed store on host-a (schedule gc")
                .contains("step-failed (exit 1)").contains("[host-a/e-0000000003]");
        assertThat(new String(ops.body(e), StandardCharsets.UTF_8)).startsWith("{\"id\":\"host-a/e-0000000003\",\"type\":\"window.failed\"")
                .doesNotContain("null");
        assertThat(parse("webhooks:\n").webhooks()).isEmpty();
    }

    @Test
    void eachMistakeNamesItsFieldAndTheFix() throws IOException {
        String ok = "    url: http://127.0.0.1:9/x\n    events: [window.failed]\n";
        assertThatThrownBy(() -> parse("webhooks:\n  - name: ops\n    url: http://127.0.0.1:9/x\n    events: [window.started, window.exploded]\n"))
                .hasMessageContaining("webhooks[0].events[1]: unknown event type 'window.exploded'").hasMessageContaining("use one of window.started");
        assertThatThrownBy(() -> parse("webhooks:\n  - name: ops\n    url: ftp://127.0.0.1/x\n    events: [window.failed]\n"))
                .hasMessageContaining("webhooks[0].url: 'ftp://127.0.0.1/x' is not an http:// or https:// URL").hasMessageContaining("such as http://");
        assertThatThrownBy(() -> parse("webhooks:\n  - name: ops\n    url: 'http://a b/'\n    events: [window.failed]\n"))
                .hasMessageContaining("webhooks[0].url: 'http://a b/' is not a URL");
        assertThatThrownBy(() -> parse("webhooks:\n  - name: ops\n" + ok + "    secret-file: missing.secret\n"))
                .hasMessageContaining("webhooks[0].secret-file: " + dir.resolve("missing.secret") + " cannot be read")
                .hasMessageContaining("give a file this coordinator's user can read");
        Files.writeString(dir.resolve("empty.secret"), "\n");
        assertThatThrownBy(() -> parse("webhooks:\n  - name: ops\n" + ok + "    secret-file: empty.secret\n"))
                .hasMessageContaining("webhooks[0].secret-file").hasMessageContaining("holds no secret");
        assertThatThrownBy(() -> parse("webhooks:\n  - name: ops\n" + ok + "    format: xml\n"))
                .hasMessageContaining("webhooks[0].format: unknown format 'xml'; use json or slack");
        assertThatThrownBy(() -> parse("webhooks:\n  - name: ops\n" + ok + "    retries: 3\n"))
                .hasMessageContaining("webhooks[0].retries: unknown field");
        assertThatThrownBy(() -> parse("webhooks:\n  - name: ops\n" + ok + "  - name: ops\n" + ok))
                .hasMessageContaining("webhooks[1].name 'ops' is used twice");
        assertThatThrownBy(() -> parse("webhooks:\n  - name: Ops!\n" + ok)).hasMessageContaining("webhooks[0].name: 'Ops!' is not a name");
        assertThatThrownBy(() -> parse("webhooks:\n  - name: ops\n    url: http://127.0.0.1:9/x\n"))
                .hasMessageContaining("webhooks[0].events: missing");
        assertThatThrownBy(() -> parse("hooks: []\n")).hasMessageContaining("unknown field 'hooks'");
        assertThatThrownBy(() -> NotifyConfig.read(dir.resolve("nope.yaml"))).hasMessageContaining("--notify-config").hasMessageContaining("does not exist");
    }

    @Test
    void theCoordinatorRefusesToStartWithAMistakeInIt() throws IOException {
        Path f = dir.resolve("notify.yaml");
        Files.writeString(f, "webhooks:\n  - name: ops\n    url: http://127.0.0.1:9/x\n    events: [window.exploded]\n");
        java.io.StringWriter err = new java.io.StringWriter();
        picocli.CommandLine cl = new picocli.CommandLine(new CoordinatorMain());
        cl.setErr(new java.io.PrintWriter(err));
        int code = cl.execute("serve", "--zk", "127.0.0.1:1", "--listen", "127.0.0.1:0", "--notify-config", f.toString());
        assertThat(code).isEqualTo(picocli.CommandLine.ExitCode.USAGE);
        assertThat(err.toString()).contains("webhooks[0].events[0]: unknown event type 'window.exploded'");
    }
}
