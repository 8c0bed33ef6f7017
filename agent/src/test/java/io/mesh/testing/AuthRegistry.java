package io.mesh.testing;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.AuthConfig;
import com.github.dockerjava.api.model.Bind;
import com.github.dockerjava.api.model.Event;
import com.github.dockerjava.api.model.EventType;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.PushResponseItem;
import org.bouncycastle.crypto.generators.OpenBSDBCrypt;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;

/**
 * The real Distribution registry ({@link TestDocker#REGISTRY}) with htpasswd authentication, on loopback: started on
 * a free port with {@code network: host}, one bcrypt user, its storage inside the container. It pushes images with
 * credentials and reads digests from the registry itself; {@link #close} removes the registry and every local tag
 * and digest reference of its repositories.
 */
public final class AuthRegistry implements AutoCloseable {
    /** The user the registry knows. */
    public static final String USER = "hm-user";
    /** Its password. */
    public static final String PASSWORD = "hm-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
    /** Label of the registry container, for clean-up by whoever finds it left. */
    public static final String LABEL = "mesh.test.registry";

    private final DockerClient docker = TestDocker.engine().client();
    private final int port;
    private final String containerId;
    private final Path htpasswdDir;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private AuthRegistry(int port, String containerId, Path htpasswdDir) {
        this.port = port;
        this.containerId = containerId;
        this.htpasswdDir = htpasswdDir;
    }

    /**
     * Starts the registry and waits until it answers (401 without credentials).
     *
     * @param namePrefix the test's prefix for the container's name
     * @return the running registry
     */
    public static AuthRegistry start(String namePrefix) throws Exception {
        DockerClient d = TestDocker.engine().client();
        Path dir = Files.createTempDirectory("hm-htpasswd");
        byte[] salt = new byte[16];
        new SecureRandom().nextBytes(salt);
        // Distribution takes bcrypt entries only; cost 5 keeps each check quick (Go's minimum is 4)
        Files.writeString(dir.resolve("htpasswd"), USER + ":" + OpenBSDBCrypt.generate("2y", PASSWORD.toCharArray(), salt, 5) + "\n");
        dir.toFile().setReadable(true, false);
        dir.resolve("htpasswd").toFile().setReadable(true, false);
        int port = freePort();
        String id = d.createContainerCmd(TestDocker.REGISTRY)
                .withName(namePrefix + "-registry-" + port)
                .withLabels(Map.of(LABEL, namePrefix))
                .withEnv("REGISTRY_HTTP_ADDR=127.0.0.1:" + port, "REGISTRY_AUTH=htpasswd",
                        "REGISTRY_AUTH_HTPASSWD_REALM=mesh-test", "REGISTRY_AUTH_HTPASSWD_PATH=/auth/htpasswd")
                .withHostConfig(HostConfig.newHostConfig().withNetworkMode("host").withBinds(Bind.parse(dir + ":/auth:ro")))
                .exec().getId();
        AuthRegistry r = new AuthRegistry(port, id, dir);
        try {
            d.startContainerCmd(id).exec();
            await("the registry answering on 127.0.0.1:" + port).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
                    .ignoreExceptions().until(() -> r.get("/v2/", false).statusCode() == 401);
        } catch (RuntimeException | Error e) {
            r.close();
            throw e;
        }
        return r;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** @return {@code 127.0.0.1:<port>} */
    public String host() { return "127.0.0.1:" + port; }

    /** @return the registry container's id */
    public String containerId() { return containerId; }

    /** @return credentials as a pull or push sends them */
    public AuthConfig auth(String password) {
        return new AuthConfig().withUsername(USER).withPassword(password).withRegistryAddress(host());
    }

    /** @return a {@code config.json} with an {@code auths} entry for this registry */
    public String configJsonWithAuths(String password) {
        return "{\"auths\":{\"" + host() + "\":{\"auth\":\"" + base64(USER + ":" + password) + "\"}}}";
    }

    private static String base64(String s) { return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8)); }

    /**
     * Tags a local image as {@code <host>/<repository>:<tag>}, pushes it with credentials, and removes the local tag
     * and the digest reference the push left, so that the image under that name is on this host no more.
     *
     * @param localImage an image on this host, such as {@code mesh-demo/busybox:1}
     * @param repository such as {@code hm/busybox}
     * @param tag        such as {@code 1}
     * @return the manifest digest the registry gives the pushed tag ({@code sha256:...})
     */
    public String push(String localImage, String repository, String tag) throws Exception {
        String repo = host() + "/" + repository;
        docker.tagImageCmd(localImage, repo, tag).withForce(true).exec();
        List<String> errors = new ArrayList<>();
        docker.pushImageCmd(repo).withTag(tag).withAuthConfig(auth(PASSWORD)).exec(new ResultCallback.Adapter<PushResponseItem>() {
            @Override
            public void onNext(PushResponseItem item) {
                if (item.isErrorIndicated()) errors.add(String.valueOf(item.getErrorDetail() == null ? item.getError() : item.getErrorDetail().getMessage()));
            }
        }).awaitCompletion(2, TimeUnit.MINUTES);
        if (!errors.isEmpty()) throw new IllegalStateException("push of " + repo + ":" + tag + " failed: " + errors);
        String digest = manifestDigest(repository, tag);
        removeLocal(repo + ":" + tag);
        removeLocal(repo + "@" + digest);
        return digest;
    }

    /** Untags one local reference (the image stays while another reference or a container has it). */
    public void removeLocal(String reference) {
        try {
            docker.removeImageCmd(reference).withNoPrune(true).exec();
        } catch (com.github.dockerjava.api.exception.NotFoundException ignored) {
            // not here
        }
    }

    /** @return the digest the registry answers for a tag's manifest, asked with credentials */
    public String manifestDigest(String repository, String tag) throws Exception {
        HttpResponse<String> r = get("/v2/" + repository + "/manifests/" + tag, true);
        if (r.statusCode() != 200) throw new IllegalStateException("the registry answered " + r.statusCode() + " for " + repository + ":" + tag);
        return r.headers().firstValue("Docker-Content-Digest").orElseThrow();
    }

    private HttpResponse<String> get(String path, boolean withCredentials) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + host() + path)).timeout(Duration.ofSeconds(5))
                .header("Accept", "application/vnd.docker.distribution.manifest.v2+json");
        if (withCredentials) b.header("Authorization", "Basic " + base64(USER + ":" + PASSWORD));
        return http.send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * @return the ids ({@code <host>/<repository>:<tag>}) of Docker's image {@code pull} events for this registry
     *         between two instants, as dockerd recorded them
     */
    public List<String> pulls(Instant from, Instant to) throws InterruptedException {
        List<String> out = new ArrayList<>();
        long fromNanos = from.getEpochSecond() * 1_000_000_000L + from.getNano();
        long toNanos = to.getEpochSecond() * 1_000_000_000L + to.getNano();
        docker.eventsCmd().withSince(String.valueOf(from.getEpochSecond() - 1)).withUntil(String.valueOf(to.getEpochSecond() + 1))
                .withEventTypeFilter(EventType.IMAGE).withEventFilter("pull")
                .exec(new ResultCallback.Adapter<Event>() {
                    @Override
                    public void onNext(Event e) {
                        // the query is by whole seconds: the nanosecond time decides
                        long nanos = e.getTimeNano() == null ? 0 : e.getTimeNano();
                        if (e.getId() != null && e.getId().startsWith(host() + "/") && nanos >= fromNanos && nanos <= toNanos) {
                            synchronized (out) {
                                out.add(e.getId());
                            }
                        }
                    }
                }).awaitCompletion(30, TimeUnit.SECONDS);
        return out;
    }

    /** Removes the registry container and every local reference of this registry's images. */
    @Override
    public void close() {
        try {
            for (var i : docker.listImagesCmd().withShowAll(true).exec()) {
                List<String> refs = new ArrayList<>();
                if (i.getRepoTags() != null) refs.addAll(List.of(i.getRepoTags()));
                if (i.getRepoDigests() != null) refs.addAll(List.of(i.getRepoDigests()));
                for (String ref : refs) if (ref.startsWith(host() + "/")) removeLocal(ref);
            }
        } finally {
            try {
                docker.removeContainerCmd(containerId).withForce(true).withRemoveVolumes(true).exec();
            } catch (com.github.dockerjava.api.exception.NotFoundException ignored) {
                // gone
            }
            try (var files = Files.list(htpasswdDir)) {
                for (Path f : files.toList()) Files.deleteIfExists(f);
                Files.deleteIfExists(htpasswdDir);
            } catch (IOException ignored) {
                // a temporary directory
            }
        }
    }
}
