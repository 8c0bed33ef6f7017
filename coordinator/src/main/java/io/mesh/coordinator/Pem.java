package io.mesh.coordinator;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PEM files of certificates and keys, as the coordinator's {@code --tls-*} and the client's {@code --ca},
 * {@code --cert} and {@code --key} take them (docs/decisions/0040-tls.md): certificates in {@code BEGIN CERTIFICATE}
 * blocks, a key as unencrypted PKCS#8 ({@code BEGIN PRIVATE KEY}), RSA or EC. Read with the JDK alone; nothing is
 * written. Every refusal names the option, the file and the fix.
 */
public final class Pem {
    private static final Pattern PEM = Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \\1-----", Pattern.DOTALL);
    private static final String CONVERT = "convert it with: openssl pkey -in %s -out %s.pkcs8 (then give that file; keep it readable "
            + "by its user only)";

    private Pem() {}

    /**
     * @param flag the option that named the file, for messages
     * @param file a PEM file of certificates
     * @return every certificate of the file, in order; at least one
     * @throws IllegalArgumentException naming {@code flag}, the file and the fix when it cannot be read, holds another
     *                                  block than certificates, or none
     */
    public static List<X509Certificate> certificates(String flag, Path file) {
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
                        + "only (BEGIN CERTIFICATE)" + (m.group(1).contains("PRIVATE KEY") ? "; the key goes to its own option" : ""));
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

    /**
     * @param flag the option that named the file, for messages
     * @param file a PEM file holding one unencrypted PKCS#8 key ({@code BEGIN PRIVATE KEY}), RSA or EC
     * @return the key
     * @throws IllegalArgumentException naming {@code flag}, the file and the fix (the {@code openssl} command that
     *                                  converts it) when it cannot be read, is encrypted, is not PKCS#8 or of
     *                                  another algorithm
     */
    public static PrivateKey privateKey(String flag, Path file) {
        String text = readPem(flag, file);
        Matcher m = PEM.matcher(text);
        if (!m.find()) {
            throw new IllegalArgumentException(flag + " " + file + " holds no PEM key (-----BEGIN PRIVATE KEY-----): "
                    + String.format(CONVERT, file, file));
        }
        String label = m.group(1);
        if (label.equals("ENCRYPTED PRIVATE KEY") || m.group(2).contains("ENCRYPTED")) {
            throw new IllegalArgumentException(flag + " " + file + " is encrypted: mesh takes an unencrypted key, "
                    + "readable by its user only; " + String.format(CONVERT, file, file) + " (it asks for the passphrase)");
        }
        if (!label.equals("PRIVATE KEY")) {
            throw new IllegalArgumentException(flag + " " + file + " holds a '" + label + "' block: mesh takes PKCS#8 "
                    + "(BEGIN PRIVATE KEY); " + String.format(CONVERT, file, file));
        }
        byte[] der;
        try {
            der = Base64.getMimeDecoder().decode(m.group(2).strip());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + " " + file + ": the key's base64 does not decode: give the file as openssl wrote it");
        }
        for (String algorithm : List.of("RSA", "EC")) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException notThisOne) {
                // the next algorithm
            }
        }
        throw new IllegalArgumentException(flag + " " + file + " is neither an RSA nor an EC key: issue the certificate for an "
                + "RSA (2048 bits or more) or an EC (P-256) key");
    }

    private static String readPem(String flag, Path file) {
        try {
            // Any byte: comments around the blocks may be UTF-8 (an issuer's name); only the base64 between the markers is read.
            return Files.readString(file, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw new IllegalArgumentException(flag + " " + file + " cannot be read (" + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : ": " + e.getMessage()) + "): give a PEM file readable by this process's user");
        }
    }

    /** @return whether {@code cert} holds the public half of {@code key}: a probe signed with one verifies with the other */
    public static boolean matches(PrivateKey key, X509Certificate cert) {
        if (!key.getAlgorithm().equals(cert.getPublicKey().getAlgorithm())) return false;
        try {
            String alg = key.getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
            byte[] probe = "mesh: does this key match?".getBytes(StandardCharsets.US_ASCII);
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
