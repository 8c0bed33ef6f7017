package io.mesh.client;

import io.mesh.manifest.ManifestParser;
import io.mesh.manifest.ModuleSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code mesh import-compose} in-process: exit codes, stdout and stderr. No coordinator runs: the command needs none. */
class ImportComposeTest {
    @TempDir
    Path dir;

    Path compose(String yaml) throws Exception {
        Path d = Files.createDirectories(dir.resolve("shop"));
        return Files.writeString(d.resolve("compose.yaml"), yaml);
    }

    @Test
    void printsTheManifestOnStdoutAndItsNotesOnStderrExit0() throws Exception {
        Path f = compose("services:\n  web:\n    image: nginx:1.25\n    ports: ['8080:80']\n    volumes: ['./html:/usr/share/nginx/html:ro']\n");
        ClientRun r = ClientRun.local("import-compose", f.toString(), "--hosts", "host-a,host-b");
        assertThat(r.code()).isEqualTo(ExitCodes.OK);
        ModuleSpec m = new ManifestParser().parse(r.out()).get(0);
        assertThat(m.module()).isEqualTo("shop");
        assertThat(m.hosts()).containsExactly("host-a", "host-b");
        assertThat(m.containers().get("web").ports()).containsExactly("127.0.0.1:8080:80");
        assertThat(m.containers().get("web").volumes()).containsExactly(dir.resolve("shop/html") + ":/usr/share/nginx/html:ro");
        assertThat(r.err()).contains("note: services.web.ports[0]: published without an address", "note: services.web.volumes[0]: './html' is relative");
    }

    @Test
    void moduleOptionNamesTheModule() throws Exception {
        Path f = compose("name: ignored\nservices:\n  web: {image: nginx:1.25, network_mode: host}\n");
        ClientRun r = ClientRun.local("import-compose", f.toString(), "--hosts", "*", "--module", "edge");
        assertThat(r.code()).isEqualTo(ExitCodes.OK);
        ModuleSpec m = new ManifestParser().parse(r.out()).get(0);
        assertThat(m.module()).isEqualTo("edge");
        assertThat(m.hosts()).containsExactly("*");
        assertThat(r.err()).isEmpty();
    }

    @Test
    void refusalsAllGoToStderrWithTheirPathsNothingToStdoutExit2() throws Exception {
        Path f = compose("services:\n  api:\n    build: .\n    image: api:1\n    deploy: {replicas: 2}\n    env_file: .env\n    mem_limit: lots\n"
                + "configs: {c: {file: ./c}}\n");
        ClientRun r = ClientRun.local("import-compose", f.toString(), "--hosts", "host-a");
        assertThat(r.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.out()).isEmpty();
        List<String> lines = r.err().lines().toList();
        assertThat(lines.get(0)).contains("refused, nothing printed (5)");
        assertThat(lines.subList(1, lines.size())).extracting(l -> l.strip().substring(0, l.strip().indexOf(": ")))
                .containsExactly("configs", "services.api.build", "services.api.deploy", "services.api.env_file", "services.api.mem_limit");
    }

    @Test
    void withoutHostsOrWithAMissingFileItIsAUsageErrorExit2() throws Exception {
        Path f = compose("services:\n  web: {image: nginx:1.25, network_mode: host}\n");
        ClientRun noHosts = ClientRun.local("import-compose", f.toString());
        assertThat(noHosts.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(noHosts.out()).isEmpty();
        assertThat(noHosts.err()).contains("Missing required option: '--hosts");
        ClientRun missing = ClientRun.local("import-compose", dir.resolve("nope.yaml").toString(), "--hosts", "host-a");
        assertThat(missing.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(missing.out()).isEmpty();
        assertThat(missing.err()).contains("nope.yaml cannot be read");
        Files.write(dir.resolve("latin1.yaml"), new byte[]{'a', ':', ' ', (byte) 0xe9, '\n'});
        assertThat(ClientRun.local("import-compose", dir.resolve("latin1.yaml").toString(), "--hosts", "h").err()).contains("not UTF-8");
    }

    @Test
    void theHelpListsItsExitCodes() {
        ClientRun r = ClientRun.local("import-compose", "--help");
        assertThat(r.code()).isEqualTo(ExitCodes.OK);
        assertThat(r.out()).contains("--hosts=HOST[,HOST...]", "Exit codes:", "2   refused");
        assertThat(ClientRun.local("--help").out()).contains("import-compose");
    }
}
