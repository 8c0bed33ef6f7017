package io.mesh.docker;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.dockerjava.api.model.AuthConfig;
import com.github.dockerjava.core.DockerConfigFile;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The credentials a pull sends to an image's registry, from a Docker configuration directory (the agent's
 * {@code --docker-config}; SPEC.md, "Images"), looked up as the {@code docker} CLI does: the registry's
 * {@code credHelpers} entry, else {@code credsStore}, each a {@code docker-credential-<name>} program on the agent's
 * {@code PATH} asked with Docker's credential-helper protocol; when there is none, or the helper has nothing for the
 * registry, the {@code auths} entry (docker-java's {@link DockerConfigFile} reads and decodes it). docker-java 3.7.1
 * knows no credential helpers, hence {@link #helper}. {@code config.json} is read at each pull, so a changed file needs
 * no restart. Decision 20.
 */
public final class RegistryAuth {
    /** The file Docker keeps in its configuration directory. */
    public static final String CONFIG_FILE = "config.json";
    /** The longest a credential helper may take to answer. */
    public static final Duration HELPER_TIMEOUT = Duration.ofSeconds(30);
    /** What a helper prints when it has no credentials for the registry (docker-credential-helpers' message). */
    static final String NOT_FOUND = "credentials not found";
    /** A helper's name: it becomes part of a program name, so no path. */
    private static final Pattern HELPER_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
    private static final ObjectMapper JSON = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private final Path dir;
    private final List<Path> helperPath;

    /**
     * @param dir        the configuration directory (holding {@link #CONFIG_FILE}); a directory without the file means
     *                   no credentials
     * @param helperPath where {@code docker-credential-<name>} programs are looked for, in order (the agent's
     *                   {@code PATH})
     */
    public RegistryAuth(Path dir, List<Path> helperPath) {
        this.dir = dir;
        this.helperPath = List.copyOf(helperPath);
    }

    /**
     * @param dir {@code --docker-config}, or {@code null} for Docker's default: {@code $DOCKER_CONFIG}, else
     *            {@code ~/.docker}
     * @return credentials from that directory, helpers found on this process's {@code PATH}
     */
    public static RegistryAuth of(Path dir) {
        Path d = dir;
        if (d == null) {
            String env = System.getenv("DOCKER_CONFIG");
            d = env != null && !env.isBlank() ? Path.of(env) : Path.of(System.getProperty("user.home"), ".docker");
        }
        return new RegistryAuth(d, pathDirs(System.getenv("PATH")));
    }

    /** @return the directories of a {@code PATH} value, in order */
    static List<Path> pathDirs(String path) {
        List<Path> out = new ArrayList<>();
        if (path == null) return out;
        for (String p : path.split(":")) if (!p.isBlank()) out.add(Path.of(p));
        return out;
    }

    /** @return the configuration directory */
    public Path dir() { return dir; }

    /**
     * Reads {@code config.json} once, so that an agent started with a broken one says so at start, not at its first
     * pull.
     *
     * @throws IllegalArgumentException naming the file and the fix when it cannot be read or a helper's name is no
     *                                  program name
     */
    public void check() {
        config();
    }

    /**
     * Credentials for one registry, and where they came from.
     *
     * @param auth   what the pull sends (docker-java's {@code X-Registry-Auth}), or {@code null} for none
     * @param source where they came from, such as {@code auths in /etc/mesh/docker/config.json} or
     *               {@code credential helper docker-credential-pass}; {@code null} with no credentials
     */
    public record Credentials(AuthConfig auth, String source) {
        /** No credentials: the pull is anonymous. */
        public static final Credentials NONE = new Credentials(null, null);
    }

    /**
     * @param image the image to pull
     * @return the credentials for its registry; {@link Credentials#NONE} when the configuration has none
     * @throws IllegalArgumentException naming the file when {@code config.json} cannot be read
     * @throws IllegalStateException naming the helper and the fix when a credential helper fails
     */
    public Credentials forImage(ImageReference image) {
        Config c = config();
        String key = image.authKey();
        String helper = c.json.path("credHelpers").path(key).asText(null);
        if (helper == null) helper = c.json.path("credsStore").asText(null);
        if (helper != null) {
            AuthConfig fromHelper = helper(helper, key);
            if (fromHelper != null) return new Credentials(fromHelper, "credential helper docker-credential-" + helper);
        }
        AuthConfig a = c.file.resolveAuthConfig(key);
        if (a == null && image.registry().equals(ImageReference.DOCKER_HUB)) a = c.file.resolveAuthConfig(ImageReference.DOCKER_HUB);
        if (a == null || (a.getUsername() == null && a.getIdentitytoken() == null && a.getRegistrytoken() == null)) return Credentials.NONE;
        return new Credentials(a.withRegistryAddress(key), "auths in " + file());
    }

    private Path file() { return dir.resolve(CONFIG_FILE); }

    /** {@code config.json} as a tree (for the helpers) and as docker-java reads its {@code auths}. */
    private record Config(JsonNode json, DockerConfigFile file) {}

    private Config config() {
        Path f = file();
        if (!Files.isRegularFile(f)) return new Config(JSON.createObjectNode(), new DockerConfigFile());
        JsonNode json;
        DockerConfigFile file;
        try {
            json = JSON.readTree(f.toFile());
            if (json == null || !json.isObject()) throw new IOException("not a JSON object");
            file = DockerConfigFile.loadConfig(JSON, dir.toString());
        } catch (IOException | RuntimeException e) {
            // Never the parser's message: Jackson quotes the offending token, which may be a credential (an unquoted auth).
            throw new IllegalArgumentException("cannot read " + f + " (" + where(e) + "): fix it as Docker's config.json,"
                    + " {\"auths\": {\"HOST\": {\"auth\": \"<base64 of user:password>\"}}, \"credHelpers\": {\"HOST\": \"NAME\"}},"
                    + " or point --docker-config at another directory");
        }
        for (JsonNode h : json.path("credHelpers")) checkHelperName(h.asText(), "credHelpers");
        if (json.hasNonNull("credsStore")) checkHelperName(json.path("credsStore").asText(), "credsStore");
        return new Config(json, file);
    }

    /** Where {@code config.json} is broken, as line and column when the parser knows them; nothing from the file's content. */
    private static String where(Exception e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof JsonProcessingException j && j.getLocation() != null && j.getLocation() != JsonLocation.NA) {
                return "not valid JSON at line " + j.getLocation().getLineNr() + ", column " + j.getLocation().getColumnNr();
            }
        }
        return "not a JSON object of Docker's config.json form";
    }

    private void checkHelperName(String name, String field) {
        if (!HELPER_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(field + " names '" + name + "', which is no credential helper name: give NAME of a"
                    + " docker-credential-NAME program on the agent's PATH");
        }
    }

    /**
     * Asks {@code docker-credential-<name> get} for a registry's credentials (Docker's credential-helper protocol: the
     * server address on stdin, {@code {"ServerURL","Username","Secret"}} on stdout; a {@code Username} of
     * {@code <token>} makes {@code Secret} an identity token).
     *
     * @return the credentials; {@code null} when the helper has none for the registry
     * @throws IllegalStateException naming the helper and the fix when it is missing, fails, hangs or answers nonsense
     */
    AuthConfig helper(String name, String serverAddress) {
        String program = "docker-credential-" + name;
        Path exe = helperPath.stream().map(d -> d.resolve(program)).filter(Files::isExecutable).findFirst().orElse(null);
        if (exe == null) {
            throw new IllegalStateException("credential helper " + program + " (named in " + file() + ") is not on the agent's PATH "
                    + helperPath + ": install it there, or remove it from " + CONFIG_FILE);
        }
        Process p;
        try {
            p = new ProcessBuilder(exe.toString(), "get").redirectErrorStream(false).start();
        } catch (IOException e) {
            throw new IllegalStateException("credential helper " + exe + " cannot be run (" + e.getMessage() + "): make it executable", e);
        }
        try {
            CompletableFuture<byte[]> out = readAll(p.getInputStream());
            CompletableFuture<byte[]> err = readAll(p.getErrorStream());
            try (OutputStream in = p.getOutputStream()) {
                in.write(serverAddress.getBytes(StandardCharsets.UTF_8));
            } catch (IOException e) {
                // the helper may exit without reading its input; its exit code says what happened
            }
            if (!p.waitFor(HELPER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("credential helper " + exe + " did not answer within " + HELPER_TIMEOUT.toSeconds()
                        + "s for " + serverAddress + ": check it by hand with: echo " + serverAddress + " | " + exe + " get");
            }
            String stdout = new String(out.get(5, TimeUnit.SECONDS), StandardCharsets.UTF_8).strip();
            String stderr = new String(err.get(5, TimeUnit.SECONDS), StandardCharsets.UTF_8).strip();
            if (p.exitValue() != 0) {
                if (stdout.contains(NOT_FOUND) || stderr.contains(NOT_FOUND)) return null;
                // Its output may hold a secret (even its error output): only the exit code is shown, and how to see the rest.
                throw new IllegalStateException("credential helper " + exe + " failed for " + serverAddress + " (exit " + p.exitValue()
                        + "): check it by hand with: echo " + serverAddress + " | " + exe + " get");
            }
            JsonNode a;
            try {
                a = JSON.readTree(stdout);
            } catch (IOException e) {
                a = null;
            }
            if (a == null || !a.isObject() || !a.hasNonNull("Secret")) {
                throw new IllegalStateException("credential helper " + exe + " answered no {\"Username\", \"Secret\"} JSON for "
                        + serverAddress + ": check it by hand with: echo " + serverAddress + " | " + exe + " get");
            }
            String user = a.path("Username").asText("");
            String secret = a.path("Secret").asText();
            AuthConfig auth = new AuthConfig().withRegistryAddress(serverAddress);
            return "<token>".equals(user) ? auth.withIdentityToken(secret) : auth.withUsername(user).withPassword(secret);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while asking credential helper " + exe, e);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("credential helper " + exe + "'s output could not be read: " + e.getMessage(), e);
        } finally {
            p.destroyForcibly();
        }
    }

    private static CompletableFuture<byte[]> readAll(InputStream s) {
        return CompletableFuture.supplyAsync(() -> {
            try (s) {
                return s.readNBytes(1 << 20);
            } catch (IOException e) {
                return new byte[0];
            }
        });
    }
}
