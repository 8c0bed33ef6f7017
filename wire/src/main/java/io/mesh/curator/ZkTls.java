package io.mesh.curator;

import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.common.ClientX509Util;
import org.apache.zookeeper.common.ZKConfig;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

/**
 * A mesh process's TLS to ZooKeeper ({@code --zk-tls FILE}, else {@value #ENV}): the file is ZooKeeper's own client
 * properties ({@code zookeeper.client.secure=true}, {@code zookeeper.clientCnxnSocket=}{@value #NETTY},
 * {@code zookeeper.ssl.keyStore.location}, {@code zookeeper.ssl.trustStore.location}, their passwords and types: PEM,
 * PKCS12 or JKS), as ZooKeeper's admin guide ("Client-Server mutual authentication") and its {@code zkCli.sh
 * -client-configuration} read them (docs/decisions/0040-tls.md).
 *
 * <p>The properties go into a {@link ZKClientConfig} per client ({@link #clientConfig()}), never into the JVM's
 * system properties: one JVM may hold clients of different settings (tests do). The file is checked whole when read:
 * a property ZooKeeper's client does not know (a typo would otherwise be ignored, and the client connect in plain
 * text or not at all), a store that is missing or does not open with its password, are refused naming them.
 */
public final class ZkTls {
    /** Environment variable naming the file when no {@code --zk-tls} is given. */
    public static final String ENV = "MESH_ZK_TLS";
    /** The only ZooKeeper client socket that speaks TLS. */
    public static final String NETTY = "org.apache.zookeeper.ClientCnxnSocketNetty";

    private final Path file;
    private final Map<String, String> properties;

    private ZkTls(Path file, Map<String, String> properties) {
        this.file = file;
        this.properties = properties;
    }

    /**
     * @param file the {@code --zk-tls} file, or {@code null}
     * @param env  the environment, where {@value #ENV} may name the file
     * @return the settings of {@code file}, else of the file {@value #ENV} names; {@code null} when neither is given
     * @throws IllegalArgumentException as {@link #read}
     */
    public static ZkTls resolve(Path file, Map<String, String> env) {
        if (file != null) return read(file, "--zk-tls");
        String named = env.get(ENV);
        if (named == null || named.isBlank()) return null;
        return read(Path.of(named.strip()), ENV);
    }

    /**
     * Reads and checks the file: every property is one ZooKeeper's client knows, {@code zookeeper.client.secure} is
     * {@code true}, the client socket is {@value #NETTY}, and the key and trust stores it names open (ZooKeeper's own
     * {@link ClientX509Util} builds the TLS context from them, as it will at each connection).
     *
     * @param file  a Java properties file
     * @param named how the file was given, for messages ({@code --zk-tls} or {@value #ENV})
     * @return the settings
     * @throws IllegalArgumentException naming {@code named}, the file and the fix when the file cannot be read, holds a
     *                                  property ZooKeeper's client does not know, does not turn TLS on, or names a
     *                                  store that cannot be opened
     */
    public static ZkTls read(Path file, String named) {
        String where = named + " " + file;
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException(where + " cannot be read (" + e.getMessage() + "): give ZooKeeper's client TLS "
                    + "properties file (docs/runbook.md, \"Rotate certificates\")");
        }
        Set<String> known = knownProperties();
        Map<String, String> props = new LinkedHashMap<>();
        for (String name : new TreeSet<>(p.stringPropertyNames())) {
            if (!known.contains(name)) {
                throw new IllegalArgumentException(where + ": '" + name + "' is not a property of ZooKeeper's client: check its "
                        + "spelling (such as zookeeper.ssl.trustStore.location; ZooKeeper's admin guide, \"Client-Server mutual "
                        + "authentication\")");
            }
            props.put(name, p.getProperty(name).strip());
        }
        // ZooKeeper reads every other word as false: a typo in hostnameVerification would turn the check off unsaid.
        for (String flag : booleanProperties()) {
            String v = props.get(flag);
            if (v != null && !v.equalsIgnoreCase("true") && !v.equalsIgnoreCase("false")) {
                throw new IllegalArgumentException(where + ": " + flag + "=" + v + " is neither true nor false (ZooKeeper would read it "
                        + "as false): write true or false");
            }
        }
        if (!"true".equalsIgnoreCase(props.get(ZKClientConfig.SECURE_CLIENT))) {
            throw new IllegalArgumentException(where + " does not set " + ZKClientConfig.SECURE_CLIENT + "=true: add that line "
                    + "(without it the client speaks plain text, which an ensemble's secureClientPort refuses)");
        }
        if (!NETTY.equals(props.get(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET))) {
            throw new IllegalArgumentException(where + " sets " + ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET + "="
                    + props.getOrDefault(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, "(nothing)") + ": only ZooKeeper's Netty client "
                    + "speaks TLS; set " + ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET + "=" + NETTY);
        }
        ZkTls tls = new ZkTls(file, Map.copyOf(props));
        try (ClientX509Util x509 = new ClientX509Util()) {
            for (String location : Set.of(x509.getSslKeystoreLocationProperty(), x509.getSslTruststoreLocationProperty(),
                    x509.getSslKeystorePasswdPathProperty(), x509.getSslTruststorePasswdPathProperty())) {
                String f = props.get(location);
                if (f != null && !Files.isReadable(Path.of(f))) {
                    throw new IllegalArgumentException(where + ": " + location + "=" + f + " is not a readable file: give the "
                            + "path of the store, readable by this process's user");
                }
            }
            x509.createNettySslContextForClient(tls.clientConfig());
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalArgumentException(where + ": ZooKeeper cannot make its TLS context from it (" + rootMessage(e)
                    + "): check the stores' locations, types (PEM, PKCS12, JKS) and passwords");
        }
        return tls;
    }

    /**
     * @return a new client configuration holding the file's properties (and nothing from the JVM's system properties
     *         beyond what ZooKeeper's own {@link ZKClientConfig} reads), for one Curator client
     */
    public ZKClientConfig clientConfig() {
        ZKClientConfig c = new ZKClientConfig();
        properties.forEach(c::setProperty);
        return c;
    }

    /** @return the file the settings came from */
    public Path file() { return file; }

    /** The properties of {@link #knownProperties} that ZooKeeper reads as booleans ({@code Boolean.parseBoolean}). */
    static Set<String> booleanProperties() {
        Set<String> b = new TreeSet<>(Set.of(ZKClientConfig.SECURE_CLIENT, ZKClientConfig.ENABLE_CLIENT_SASL_KEY,
                ZKClientConfig.ZK_SASL_CLIENT_CANONICALIZE_HOSTNAME, ZKClientConfig.DISABLE_AUTO_WATCH_RESET));
        try (ClientX509Util x = new ClientX509Util()) {
            b.addAll(Set.of(x.getSslHostnameVerificationEnabledProperty(), x.getSslClientHostnameVerificationEnabledProperty(),
                    x.getSslAllowReverseDnsLookupProperty(), x.getSslCrlEnabledProperty(), x.getSslOcspEnabledProperty(), x.getFipsModeProperty()));
        }
        return b;
    }

    /**
     * The properties ZooKeeper 3.9's client reads: its {@link ZKClientConfig} and {@link ZKConfig} keys and the
     * {@code zookeeper.ssl.*} keys of its {@link ClientX509Util}.
     */
    static Set<String> knownProperties() {
        Set<String> k = new TreeSet<>(Set.of(ZKClientConfig.SECURE_CLIENT, ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET,
                ZKClientConfig.ZOOKEEPER_REQUEST_TIMEOUT, ZKClientConfig.ZOOKEEPER_SERVER_PRINCIPAL, ZKClientConfig.ZOOKEEPER_SERVER_REALM,
                ZKClientConfig.ENABLE_CLIENT_SASL_KEY, ZKClientConfig.LOGIN_CONTEXT_NAME_KEY, ZKClientConfig.ZK_SASL_CLIENT_USERNAME,
                ZKClientConfig.ZK_SASL_CLIENT_CANONICALIZE_HOSTNAME, ZKClientConfig.DISABLE_AUTO_WATCH_RESET, ZKConfig.JUTE_MAXBUFFER));
        try (ClientX509Util x = new ClientX509Util()) {
            k.addAll(Set.of(x.getSslProtocolProperty(), x.getSslEnabledProtocolsProperty(), x.getSslCipherSuitesProperty(),
                    x.getSslKeystoreLocationProperty(), x.getSslKeystorePasswdProperty(), x.getSslKeystorePasswdPathProperty(),
                    x.getSslKeystoreTypeProperty(), x.getSslTruststoreLocationProperty(), x.getSslTruststorePasswdProperty(),
                    x.getSslTruststorePasswdPathProperty(), x.getSslTruststoreTypeProperty(), x.getSslContextSupplierClassProperty(),
                    x.getSslHostnameVerificationEnabledProperty(), x.getSslClientHostnameVerificationEnabledProperty(),
                    x.getSslAllowReverseDnsLookupProperty(), x.getSslCrlEnabledProperty(), x.getSslOcspEnabledProperty(),
                    x.getSslHandshakeDetectionTimeoutMillisProperty(), x.getFipsModeProperty(), x.getSslProviderProperty(), x.getSslAuthProviderProperty()));
        }
        return k;
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) t = t.getCause();
        String m = t.getMessage();
        return m == null || m.isBlank() ? t.getClass().getSimpleName() : m;
    }

    /**
     * {@code java -cp mesh-agent.jar io.mesh.curator.ZkTls FILE}: checks FILE as {@link #read} does ({@code zkcli
     * --zk-tls} runs it before ZooKeeper's own client, which ignores what it does not know).
     *
     * @param args the file
     */
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: ZkTls FILE");
            System.exit(2);
        }
        try {
            read(Path.of(args[0]), "--zk-tls");
        } catch (IllegalArgumentException e) {
            System.err.println("zkcli: " + e.getMessage());
            System.exit(2);
        }
    }

    @Override
    public String toString() { return "ZooKeeper TLS of " + file; }
}
