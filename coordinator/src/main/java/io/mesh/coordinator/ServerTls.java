package io.mesh.coordinator;

import org.eclipse.jetty.util.ssl.SslContextFactory;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateFactory;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
    private static final Pattern PEM = Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \\1-----", Pattern.DOTALL);
    private static final String CONVERT = "convert it with: openssl pkey -in %s -out %s.pkcs8 (then give that file; keep it readable "
            + "by the coordinator's user only)";

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
        List<X509Certificate> chain = certificates("--tls-cert", certFile);
        PrivateKey key = privateKey(keyFile);
        X509Certificate leaf = chain.get(0);
        if (!matches(key, leaf)) {
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
        List<X509Certificate> cas = clientCaFile == null ? List.of() : certificates("--tls-client-ca", clientCaFile);
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

    /** @return every certificate of a PEM file, in order; at least one */
    private static List<X509Certificate> certificates(String flag, Path file) {
        String text = readPem(flag, file);
        List<X509Certificate> out = new ArrayList<>();
        Matcher m = PEM.matcher(text);
        CertificateFactory cf;
        try {
            cf = CertificateFactory.getInstance("X.509");
        } catch (CertificateException e) {
            throw new IllegalStateException(e);
        }
        while (m.find()) {
            if (!m.group(1).equals("CERTIFICATE")) {
                throw new IllegalArgumentException(flag + " " + file + " holds a '" + m.group(1) + "' block: it takes certificates "
                        + "only (BEGIN CERTIFICATE)" + (m.group(1).contains("PRIVATE KEY") ? "; the key goes to --tls-key" : ""));
            }
            try {
                out.add((X509Certificate) cf.generateCertificate(new ByteArrayInputStream(m.group(0).getBytes(StandardCharsets.US_ASCII))));
            } catch (CertificateException e) {
                throw new IllegalArgumentException(flag + " " + file + ": certificate " + (out.size() + 1) + " does not parse ("
                        + e.getMessage() + "): give PEM certificates as openssl writes them");
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(flag + " " + file + " holds no PEM certificate (-----BEGIN CERTIFICATE-----): "
                    + "give the certificate in PEM (openssl x509 -in CERT.der -inform der -out CERT.pem converts DER)");
        }
        return out;
    }

    /** @return the one unencrypted PKCS#8 key of the file */
    private static PrivateKey privateKey(Path file) {
        String text = readPem("--tls-key", file);
        Matcher m = PEM.matcher(text);
        if (!m.find()) {
            throw new IllegalArgumentException("--tls-key " + file + " holds no PEM key (-----BEGIN PRIVATE KEY-----): "
                    + String.format(CONVERT, file, file));
        }
        String label = m.group(1);
        if (label.equals("ENCRYPTED PRIVATE KEY") || m.group(2).contains("ENCRYPTED")) {
            throw new IllegalArgumentException("--tls-key " + file + " is encrypted: the coordinator takes an unencrypted key, "
                    + "readable by its user only; " + String.format(CONVERT, file, file) + " (it asks for the passphrase)");
        }
        if (!label.equals("PRIVATE KEY")) {
            throw new IllegalArgumentException("--tls-key " + file + " holds a '" + label + "' block: the coordinator takes PKCS#8 "
                    + "(BEGIN PRIVATE KEY); " + String.format(CONVERT, file, file));
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(m.group(2).strip());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--tls-key " + file + ": the key's base64 does not decode: give the file as openssl wrote it");
        }
        for (String algorithm : List.of("RSA", "EC")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException notThisOne) {
                // the next algorithm
            }
        }
        throw new IllegalArgumentException("--tls-key " + file + " is neither an RSA nor an EC key: issue the certificate for an "
                + "RSA (2048 bits or more) or an EC (P-256) key");
    }

    private static String readPem(String flag, Path file) {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new IllegalArgumentException(flag + " " + file + " cannot be read (" + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : ": " + e.getMessage()) + "): give a PEM file readable by the coordinator's user");
        }
    }

    /** @return whether {@code cert} holds the public half of {@code key}: a probe signed with one verifies with the other */
    private static boolean matches(PrivateKey key, X509Certificate cert) {
        if (!key.getAlgorithm().equals(cert.getPublicKey().getAlgorithm())) return false;
        try {
            String alg = key.getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
            byte[] probe = "mesh-coordinator --tls-key".getBytes(StandardCharsets.US_ASCII);
            Signature s = Signature.getInstance(alg);
            s.initSign(key);
            s.update(probe);
            byte[] signed = s.sign();
            Signature v = Signature.getInstance(alg);
            v.initVerify(cert.getPublicKey());
            v.update(probe);
            return v.verify(signed);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }
}
