package io.mesh.coordinator;

import org.eclipse.jetty.util.ssl.SslContextFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.util.Date;
import java.util.List;

/**
 * The coordinator's HTTPS ({@code serve --tls-cert FILE --tls-key FILE [--tls-client-ca FILE]}; SPEC.md "Running it
 * for real"; docs/decisions/0040-tls.md): its certificate chain and key, read from PEM files into a key store held in
 * memory (nothing is written), and the CAs whose client certificates it requires, if any.
 *
 * <p>Checked when read, so that a coordinator that would answer no client does not start: the files are PEM, the key
 * is unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY}, RSA or EC), the first certificate is the key's, and it is valid
 * now. Each refusal names the flag, the file and the fix.
 */
public final class ServerTls {
    /** The in-memory key store's password: it guards nothing (the store is never written), Java's API wants one. */
    private static final char[] IN_MEMORY = "mesh".toCharArray();

    private final List<X509Certificate> chain;
    private final PrivateKey key;
    private final List<X509Certificate> clientCas;

    private ServerTls(List<X509Certificate> chain, PrivateKey key, List<X509Certificate> clientCas) {
        this.chain = chain;
        this.key = key;
        this.clientCas = clientCas;
    }

    /**
     * Reads and checks the files.
     *
     * @param certFile     {@code --tls-cert}: PEM, the coordinator's certificate first, then the CAs between it and a
     *                     root its clients trust (a chain, optional)
     * @param keyFile      {@code --tls-key}: PEM, the certificate's private key, unencrypted PKCS#8 ({@code BEGIN PRIVATE
     *                     KEY}), RSA or EC
     * @param clientCaFile {@code --tls-client-ca}: PEM, the CAs whose client certificates are required; {@code null}
     *                     for no client certificates
     * @param clock        now, for the certificate's validity
     * @return the settings
     * @throws IllegalArgumentException naming the flag, the file and the fix: a file missing or unreadable, not PEM, a
     *                                  key encrypted or not PKCS#8, a certificate that is not the key's, expired or not
     *                                  yet valid
     */
    public static ServerTls read(Path certFile, Path keyFile, Path clientCaFile, Clock clock) {
        if (certFile == null || keyFile == null) {
            throw new IllegalArgumentException("--tls-cert and --tls-key go together: give both (PEM files), or neither for plain HTTP");
        }
        List<X509Certificate> chain = Pem.certificates("--tls-cert", certFile);
        PrivateKey key = Pem.privateKey("--tls-key", keyFile);
        X509Certificate leaf = chain.get(0);
        if (!Pem.matches(key, leaf)) {
            throw new IllegalArgumentException("--tls-key " + keyFile + " is not the key of --tls-cert " + certFile + " (its first "
                    + "certificate, " + leaf.getSubjectX500Principal().getName() + "): give the key the certificate was issued for");
        }
        Date now = Date.from(clock.instant());
        try {
            leaf.checkValidity(now);
        } catch (CertificateExpiredException e) {
            throw new IllegalArgumentException("--tls-cert " + certFile + " expired on " + leaf.getNotAfter().toInstant()
                    + ": renew it (docs/runbook.md, \"Rotate certificates\")");
        } catch (CertificateNotYetValidException e) {
            throw new IllegalArgumentException("--tls-cert " + certFile + " is valid from " + leaf.getNotBefore().toInstant()
                    + " only: check this host's clock, or give a certificate valid now");
        }
        List<X509Certificate> cas = clientCaFile == null ? List.of() : Pem.certificates("--tls-client-ca", clientCaFile);
        return new ServerTls(List.copyOf(chain), key, List.copyOf(cas));
    }

    /** @return whether clients must present a certificate issued by one of {@code --tls-client-ca}'s CAs */
    public boolean clientCertificates() { return !clientCas.isEmpty(); }

    /** @return the coordinator's certificate */
    public X509Certificate certificate() { return chain.get(0); }

    /**
     * @return Jetty's server TLS settings: the key store (in memory) with the key and its chain; with client CAs, a
     *         trust store of them and client certificates required
     * @throws IllegalStateException when Java cannot make a key store (it always can: PKCS#12 is built in)
     */
    SslContextFactory.Server sslContextFactory() {
        SslContextFactory.Server f = new SslContextFactory.Server();
        try {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(null, null);
            ks.setKeyEntry("mesh", key, IN_MEMORY, chain.toArray(new Certificate[0]));
            f.setKeyStore(ks);
            f.setKeyStorePassword(new String(IN_MEMORY));
            f.setCertAlias("mesh");
            if (!clientCas.isEmpty()) {
                KeyStore ts = KeyStore.getInstance("PKCS12");
                ts.load(null, null);
                for (int i = 0; i < clientCas.size(); i++) ts.setCertificateEntry("client-ca-" + i, clientCas.get(i));
                f.setTrustStore(ts);
                f.setNeedClientAuth(true);
            }
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot hold the TLS key in memory: " + e.getMessage(), e);
        }
        return f;
    }
}
