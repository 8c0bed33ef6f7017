package io.mesh.client;

import io.mesh.coordinator.Pem;

import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * The {@code mesh} client's TLS to {@code https://} coordinators (SPEC.md "Running it for real";
 * docs/decisions/0040-tls.md): the CAs it trusts ({@code --ca FILE} or {@code MESH_CA}, else the system's), and its
 * own certificate for a coordinator that asks for one ({@code --cert}/{@code --key}, {@code MESH_CERT}/{@code MESH_KEY}).
 * Hostname verification stays on: the JDK checks the URL's host against the certificate's subjectAltName.
 *
 * <p>Its trust and key managers wrap the JDK's and note what the handshake met (the coordinator's certificate, whether
 * it asked for the client's), so that a refusal is told as its fix ({@link #explain}) instead of the JDK's words
 * ("PKIX path building failed", "No subject alternative names matching"). One command's requests go one at a time, so
 * one note is kept: {@link #reset} before each request.
 */
final class ClientTls {
    /** Environment variable naming the CA file when no {@code --ca} is given. */
    static final String ENV_CA = "MESH_CA";
    /** Environment variable naming the client certificate file when no {@code --cert} is given. */
    static final String ENV_CERT = "MESH_CERT";
    /** Environment variable naming the client key file when no {@code --key} is given. */
    static final String ENV_KEY = "MESH_KEY";
    private static final String ALIAS = "mesh";

    private final SSLContext context;
    private final Path caFile;
    private final List<X509Certificate> chain;
    private final PrivateKey key;
    /** Why the last handshake's server certificate was refused, in the words an operator acts on; else null. */
    private volatile String refusal;
    /** Whether the last handshake's server asked for a client certificate. */
    private volatile boolean asked;

    private ClientTls(Path caFile, List<X509Certificate> cas, List<X509Certificate> chain, PrivateKey key) {
        this.caFile = caFile;
        this.chain = chain;
        this.key = key;
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            if (cas == null) {
                tmf.init((KeyStore) null); // the system's CAs
            } else {
                KeyStore ts = KeyStore.getInstance("PKCS12");
                ts.load(null, null);
                for (int i = 0; i < cas.size(); i++) ts.setCertificateEntry("ca-" + i, cas.get(i));
                tmf.init(ts);
            }
            X509ExtendedTrustManager jdk = Arrays.stream(tmf.getTrustManagers()).filter(t -> t instanceof X509ExtendedTrustManager)
                    .map(t -> (X509ExtendedTrustManager) t).findFirst().orElseThrow();
            this.context = SSLContext.getInstance("TLS");
            context.init(new javax.net.ssl.KeyManager[]{new Keys()}, new TrustManager[]{new Trust(jdk)}, null);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot set up TLS: " + e.getMessage(), e);
        }
    }

    /**
     * @param ca   {@code --ca}: PEM certificates of the CAs to trust (old and new during a CA's change), or {@code null}
     *             for the system's
     * @param cert {@code --cert}: PEM client certificate (then its chain), or {@code null} for none
     * @param key  {@code --key}: its unencrypted PKCS#8 PEM key; given exactly when {@code cert} is
     * @return the client's TLS
     * @throws IllegalArgumentException naming the option, the file and the fix when a file cannot be used, when only
     *                                  one of {@code --cert}/{@code --key} is given, or the key is not the certificate's
     */
    static ClientTls of(Path ca, Path cert, Path key) {
        if ((cert == null) != (key == null)) {
            throw new IllegalArgumentException("--cert and --key go together (MESH_CERT and MESH_KEY): give both, the client "
                    + "certificate and its key, or neither");
        }
        List<X509Certificate> cas = ca == null ? null : Pem.certificates("--ca", ca);
        List<X509Certificate> chain = cert == null ? List.of() : Pem.certificates("--cert", cert);
        PrivateKey k = key == null ? null : Pem.privateKey("--key", key);
        if (k != null && !Pem.matches(k, chain.get(0))) {
            throw new IllegalArgumentException("--key " + key + " is not the key of --cert " + cert + ": give the key the "
                    + "certificate was issued for");
        }
        return new ClientTls(ca, cas, chain, k);
    }

    /** @return the context {@code HttpClient} and {@code HttpsURLConnection} make their connections with */
    SSLContext context() { return context; }

    /** Forgets what the last handshake met: called before each request. */
    void reset() {
        refusal = null;
        asked = false;
    }

    /**
     * @param e    a request's failure
     * @param base the coordinator asked
     * @return what to do about it when it is TLS's (the coordinator's certificate refused, a client certificate asked
     *         for and none given or refused, a coordinator that does not speak TLS), else {@code null}
     */
    String explain(IOException e, URI base) {
        String r = refusal;
        if (r != null) return r;
        if (!"https".equals(base.getScheme())) return null;
        SSLException ssl = find(e, SSLException.class);
        String text = messages(e);
        if (asked && chain.isEmpty()) {
            return "the coordinator at " + base + " asks for a client certificate: give --cert FILE --key FILE (MESH_CERT, "
                    + "MESH_KEY), a certificate issued by a CA of its --tls-client-ca";
        }
        if (asked) {
            // TLS 1.3 ends the client's half of the handshake before the server has judged its certificate: a refusal
            // then comes as an alert, or only as the connection closed under the request (broken pipe, reset), before any
            // answer.
            X509Certificate mine = chain.get(0);
            String of = "the client certificate of --cert (" + mine.getSubjectX500Principal().getName() + ", issued by "
                    + mine.getIssuerX500Principal().getName() + ", valid until " + mine.getNotAfter().toInstant() + ")";
            if (text.contains("bad_certificate") || text.contains("unknown_ca") || text.contains("certificate_unknown")
                    || text.contains("certificate_expired") || text.contains("access_denied")) {
                return "the coordinator at " + base + " refused " + of + ": give one issued by a CA of its --tls-client-ca, and valid now";
            }
            if (text.contains("Broken pipe") || text.contains("Connection reset") || e instanceof java.io.EOFException
                    || text.contains("closed")) {
                return "the coordinator at " + base + " closed the connection after it asked for " + of + ": it takes only "
                        + "certificates issued by a CA of its --tls-client-ca, and valid now";
            }
        }
        if (ssl != null && text.contains("Unsupported or unrecognized SSL message")) {
            return "the coordinator at " + base + " does not speak HTTPS: use http://" + base.getRawAuthority()
                    + ", or start it with --tls-cert/--tls-key";
        }
        return null;
    }

    /**
     * @param e what a request met, which {@link #explain} told as a refusal
     * @return false when the refusal is only inferred from a connection closed or reset after the coordinator asked for
     *         a client certificate: it may also have taken the request and then lost the connection, so a request that
     *         may not be sent twice is not sent to another coordinator
     */
    boolean surelyNotSent(IOException e) {
        if (refusal != null || !asked || chain.isEmpty()) return true;
        String text = messages(e);
        return text.contains("bad_certificate") || text.contains("unknown_ca") || text.contains("certificate_unknown")
                || text.contains("certificate_expired") || text.contains("access_denied");
    }

    /** The JDK's trust manager, with each refusal told as its fix. */
    private final class Trust extends X509ExtendedTrustManager {
        private final X509ExtendedTrustManager jdk;

        Trust(X509ExtendedTrustManager jdk) { this.jdk = jdk; }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            try {
                jdk.checkServerTrusted(chain, authType, engine);
            } catch (CertificateException e) {
                throw refused(chain, authType, engine == null ? null : engine.getPeerHost(), e);
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            try {
                jdk.checkServerTrusted(chain, authType, socket);
            } catch (CertificateException e) {
                String host = socket instanceof SSLSocket s && s.getHandshakeSession() != null ? s.getHandshakeSession().getPeerHost() : null;
                throw refused(chain, authType, host, e);
            }
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            try {
                jdk.checkServerTrusted(chain, authType);
            } catch (CertificateException e) {
                throw refused(chain, authType, null, e);
            }
        }

        /**
         * Which of the usual refusals this is: the chain is good but not for this host (the JDK's check without the host
         * passes), the certificate expired or is not yet valid (under a CA this client trusts), or no CA this client
         * trusts signed it (self-signed, a private CA without {@code --ca}, or another CA than {@code --ca}'s).
         */
        private CertificateException refused(X509Certificate[] chain, String authType, String host, CertificateException e) {
            X509Certificate leaf = chain[0];
            boolean chainGood;
            try {
                jdk.checkServerTrusted(chain, authType); // the same checks but the host's
                chainGood = true;
            } catch (CertificateException other) {
                chainGood = false;
            }
            X509Certificate top = chain[chain.length - 1];
            boolean knownIssuer = Arrays.stream(jdk.getAcceptedIssuers()).anyMatch(a -> a.equals(top)
                    || a.getSubjectX500Principal().equals(top.getIssuerX500Principal()));
            Instant now = Instant.now();
            String why;
            if (chainGood) {
                why = "the coordinator's certificate is for " + names(leaf) + ", not " + (host == null ? "the URL's host" : host)
                        + ": use a URL with one of those names, or reissue it with " + (host == null ? "that host" : host)
                        + " in its subjectAltName";
            } else if (knownIssuer && now.isAfter(leaf.getNotAfter().toInstant())) {
                why = "the coordinator's certificate expired on " + leaf.getNotAfter().toInstant() + ": renew it (docs/runbook.md, "
                        + "\"Rotate certificates\")";
            } else if (knownIssuer && now.isBefore(leaf.getNotBefore().toInstant())) {
                why = "the coordinator's certificate is valid from " + leaf.getNotBefore().toInstant() + " only: check this host's "
                        + "clock and the coordinator's";
            } else if (knownIssuer) {
                why = "the coordinator's certificate (" + leaf.getSubjectX500Principal().getName() + ") was refused: " + e.getMessage();
            } else {
                Principal issuer = top.getIssuerX500Principal();
                why = "the coordinator's certificate (" + leaf.getSubjectX500Principal().getName() + ", issued by " + issuer.getName()
                        + (top.getIssuerX500Principal().equals(top.getSubjectX500Principal()) ? ", self-signed" : "") + ") is not signed by "
                        + (caFile == null ? "a CA this system trusts" : "a CA of --ca " + caFile)
                        + ": give --ca FILE (MESH_CA) with the CA that signed the coordinator's certificate";
            }
            refusal = why;
            return new CertificateException(why, e);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            jdk.checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            jdk.checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            jdk.checkClientTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() { return jdk.getAcceptedIssuers(); }
    }

    /** The client's certificate, when it has one, offered when the coordinator asks; notes that it asked. */
    private final class Keys extends X509ExtendedKeyManager {
        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) { return chain.isEmpty() ? null : new String[]{ALIAS}; }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) { return choose(); }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) { return choose(); }

        private String choose() {
            asked = true;
            return chain.isEmpty() ? null : ALIAS;
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) { return null; }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) { return null; }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return ALIAS.equals(alias) && !chain.isEmpty() ? chain.toArray(new X509Certificate[0]) : null;
        }

        @Override
        public PrivateKey getPrivateKey(String alias) { return ALIAS.equals(alias) ? key : null; }
    }

    /** @return the certificate's subjectAltName DNS names and IP addresses, such as {@code [coord-1.example, 10.0.0.5]} */
    private static String names(X509Certificate cert) {
        List<String> out = new ArrayList<>();
        try {
            Collection<List<?>> sans = cert.getSubjectAlternativeNames();
            if (sans != null) {
                for (List<?> san : sans) {
                    int type = (Integer) san.get(0);
                    if (type == 2 || type == 7) out.add(String.valueOf(san.get(1))); // dNSName, iPAddress
                }
            }
        } catch (CertificateParsingException e) {
            // no names to show
        }
        return out.isEmpty() ? "no name (it has no subjectAltName; " + cert.getSubjectX500Principal().getName() + ")" : String.join(", ", out);
    }

    private static <T extends Throwable> T find(Throwable e, Class<T> type) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) return type.cast(t);
        }
        return null;
    }

    private static String messages(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) b.append(t).append('\n');
        return b.toString();
    }
}
