package io.mesh.manifest;

import io.mesh.wire.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** {@code secrets} (SPEC.md, "Secrets"; decision 18): what a manifest may say, and what is refused at push time. */
class SecretsParseTest {
    private final ManifestParser parser = new ManifestParser();

    /** A module whose container {@code web} carries these lines (each indented as a field of the container). */
    static String module(String... lines) {
        StringBuilder b = new StringBuilder("module: store\nhosts: [host-a]\ncontainers:\n  web:\n    image: busybox:1\n");
        for (String l : lines) b.append("    ").append(l).append('\n');
        return b.toString();
    }

    @Test
    void anEnvSecretAndAFileSecretAreReadAsReferences() throws Exception {
        ContainerSpec web = parser.parse(module("env: {MODE: prod}", "volumes: [\"data:/data\"]", "secrets:",
                "  DB_PASSWORD: {file: db/password}",
                "  tls-key: {file: db/tls.key, target: /run/secrets/tls.key}")).get(0).containers().get("web");
        assertThat(web.secrets()).isEqualTo(Map.of(
                "DB_PASSWORD", SecretRef.env("db/password"),
                "tls-key", SecretRef.mounted("db/tls.key", "/run/secrets/tls.key")));
        assertThat(web.secrets().get("DB_PASSWORD").deliveredAsFile()).isFalse();
        assertThat(web.secrets().get("tls-key").deliveredAsFile()).isTrue();
    }

    /** The desired node carries the references as written and nothing else: no digest, no value. */
    @Test
    void theDesiredNodeCarriesTheReferencesAndReadsBackTheSame() throws Exception {
        ModuleSpec m = parser.parse(module("secrets: {DB_PASSWORD: {file: db/password}, tls: {file: tls.key, target: /run/tls.key}}")).get(0);
        String json = Json.text(m);
        assertThat(json).contains("\"secrets\":{\"DB_PASSWORD\":{\"file\":\"db/password\"},\"tls\":{\"file\":\"tls.key\",\"target\":\"/run/tls.key\"}}")
                .doesNotContain("digest");
        assertThat(parser.parseJson(json)).isEqualTo(m);
    }

    /** Without secrets the spec's JSON is what it was before they existed (the spec hash of every container stays). */
    @Test
    void aContainerWithoutSecretsSaysNothingOfThem() throws Exception {
        ModuleSpec m = parser.parse(module("env: {A: b}")).get(0);
        assertThat(m.containers().get("web").secrets()).isEmpty();
        assertThat(Json.text(m)).doesNotContain("secrets");
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            "secrets: {DB: {file: /etc/shadow}}                            | containers.web.secrets.DB.file   | is absolute: give it relative to the agent's --secrets-dir",
            "secrets: {DB: {file: ../etc/shadow}}                          | containers.web.secrets.DB.file   | no '..'",
            "secrets: {DB: {file: db/../../x}}                             | containers.web.secrets.DB.file   | no '..'",
            "secrets: {DB: {file: db//x}}                                  | containers.web.secrets.DB.file   | clean relative path",
            "secrets: {DB: {file: db/}}                                    | containers.web.secrets.DB.file   | clean relative path",
            "secrets: {DB: {file: ''}}                                     | containers.web.secrets.DB.file   | relative to the agent's --secrets-dir",
            "secrets: {DB: {file: 3}}                                      | containers.web.secrets.DB.file   | relative to the agent's --secrets-dir",
            "secrets: {DB: {target: /run/x}}                               | containers.web.secrets.DB.file   | missing",
            "secrets: {DB: db/password}                                    | containers.web.secrets.DB        | {file: relative/path}",
            "secrets: [DB]                                                 | containers.web.secrets           | must be a mapping",
            "secrets: {DB: {file: a, digest: x}}                           | containers.web.secrets.DB.digest | unknown field 'digest'",
            "secrets: {DB: {file: a, value: hunter2}}                      | containers.web.secrets.DB.value  | unknown field 'value'",
            "secrets: {db-password: {file: a}}                             | containers.web.secrets.db-password | not a variable name",
            "secrets: {1DB: {file: a}}                                     | containers.web.secrets.1DB       | give a target to mount it as a file",
            "secrets: {tls: {file: a, target: run/x}}                      | containers.web.secrets.tls.target | absolute, clean path",
            "secrets: {tls: {file: a, target: /run/../etc/x}}              | containers.web.secrets.tls.target | absolute, clean path",
            "secrets: {tls: {file: a, target: /}}                          | containers.web.secrets.tls.target | other than /",
            "secrets: {a b: {file: a, target: /x}}                         | containers.web.secrets.a b       | not a secret name",
            "secrets: {a: {file: a, target: /x}, b: {file: b, target: /x}} | containers.web.secrets.b.target  | already mounted",
            })
    void refusedNamingTheFieldAndTheFix(String line, String field, String message) {
        assertRefused(module(line), field, message);
    }

    @Test
    void anEnvSecretNamedAsAnEnvKeyIsRefused() {
        assertRefused(module("env: {DB_PASSWORD: x}", "secrets: {DB_PASSWORD: {file: db/password}}"),
                "containers.web.secrets.DB_PASSWORD", "also set in env: give the variable once");
    }

    @Test
    void aFileSecretOnAVolumesPathIsRefused() {
        assertRefused(module("volumes: [\"data:/run/secrets\"]", "secrets: {tls: {file: a, target: /run/secrets}}"),
                "containers.web.secrets.tls.target", "already mounted by a volume");
    }

    /** Docker refuses it only at create ("Duplicate mount point"); a secret under a tmpfs mounts fine and is accepted. */
    @Test
    void aFileSecretAtATmpfsPathIsRefusedOneUnderATmpfsIsNot() throws Exception {
        assertRefused(module("tmpfs: [\"/run/tls:size=1m\"]", "secrets: {tls: {file: a, target: /run/tls}}"),
                "containers.web.secrets.tls.target", "also a tmpfs of this container");
        assertRefused(module("tmpfs: /run/tls", "secrets: {tls: {file: a, target: /run/tls}}"),
                "containers.web.secrets.tls.target", "mount the secret at another path");
        assertThat(parser.parse(module("tmpfs: [/run]", "secrets: {tls: {file: a, target: /run/tls}}"))).hasSize(1);
    }

    private void assertRefused(String text, String field, String message) {
        ManifestException e = catchThrowableOfType(ManifestException.class, () -> parser.parse(text));
        assertThat(e).as(text).isNotNull();
        assertThat(e.errors()).as(text).singleElement().satisfies(err -> {
            assertThat(err.document()).isEqualTo(1);
            assertThat(err.field()).isEqualTo(field);
            assertThat(err.message()).contains(message);
        });
    }
}
