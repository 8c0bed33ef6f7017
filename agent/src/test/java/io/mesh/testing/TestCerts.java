package io.mesh.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates made by this machine's {@code openssl} for TLS tests, as PEM files in a directory: CAs, and certificates
 * they issue (or self-signed ones) with chosen names and validity, each with its unencrypted PKCS#8 key
 * ({@code BEGIN PRIVATE KEY}, OpenSSL 3's default). Issued through {@code openssl ca}, which alone takes a start date
 * in the past (an expired certificate).
 */
public final class TestCerts {
    private static final DateTimeFormatter ASN1 = DateTimeFormatter.ofPattern("yyyyMMddHHmmss'Z'").withZone(ZoneOffset.UTC);

    private final Path dir;

    /**
     * A certificate and its key.
     *
     * @param cert the PEM certificate
     * @param key  the PEM PKCS#8 key
     */
    public record Pair(Path cert, Path key) {
        /**
         * @param file where to write the key and then the certificate, one PEM file (ZooKeeper's PEM key store)
         * @return {@code file}
         */
        public Path joined(Path file) throws IOException {
            Files.writeString(file, Files.readString(key) + Files.readString(cert));
            return file;
        }
    }

    /** @param dir where the files go (a test's temporary directory) */
    public TestCerts(Path dir) { this.dir = dir; }

    /**
     * @param name the CA's file name and common name
     * @return a self-signed CA, valid for a day
     */
    public Pair ca(String name) throws IOException, InterruptedException {
        Pair p = pair(name);
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", p.key().toString(), "-out", p.cert().toString(),
                "-days", "1", "-subj", "/CN=" + name, "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign");
        return p;
    }

    /**
     * @param name the certificate's file name and common name
     * @param sans subjectAltName entries, such as {@code DNS:localhost}, {@code IP:127.0.0.1}
     * @return a self-signed (non-CA) certificate, valid for a day: one no client trusts
     */
    public Pair selfSigned(String name, String... sans) throws IOException, InterruptedException {
        Pair p = pair(name);
        List<String> args = new ArrayList<>(List.of("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", p.key().toString(),
                "-out", p.cert().toString(), "-days", "1", "-subj", "/CN=" + name));
        if (sans.length > 0) args.addAll(List.of("-addext", "subjectAltName=" + String.join(",", sans)));
        openssl(args.toArray(String[]::new));
        return p;
    }

    /**
     * @param ca       the issuing CA
     * @param name     the certificate's file name and common name
     * @param notAfter when it expires (in the past for an expired one); it starts a day before
     * @param sans     subjectAltName entries, such as {@code DNS:localhost}, {@code IP:127.0.0.1}
     * @return a certificate {@code ca} issued, for TLS servers and clients
     */
    public Pair issue(Pair ca, String name, Instant notAfter, String... sans) throws IOException, InterruptedException {
        Pair p = pair(name);
        Path csr = dir.resolve(name + ".csr");
        openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", p.key().toString(), "-out", csr.toString(), "-subj", "/CN=" + name);
        Path db = Files.createDirectories(dir.resolve("ca-db-" + name));
        Files.writeString(db.resolve("index.txt"), "");
        Files.writeString(db.resolve("serial"), String.format("%016x%n", System.nanoTime()));
        Path config = db.resolve("ca.cnf");
        Files.writeString(config, String.join("\n",
                "[ca]", "default_ca = d",
                "[d]", "database = " + db.resolve("index.txt"), "new_certs_dir = " + db, "serial = " + db.resolve("serial"),
                "default_md = sha256", "policy = p", "unique_subject = no",
                "[p]", "commonName = supplied",
                "[x]", "basicConstraints = CA:FALSE", "keyUsage = critical,digitalSignature,keyEncipherment",
                "extendedKeyUsage = serverAuth,clientAuth")
                + (sans.length > 0 ? "\nsubjectAltName = " + String.join(",", sans) : "") + "\n", StandardCharsets.UTF_8);
        openssl("ca", "-batch", "-notext", "-config", config.toString(), "-extensions", "x", "-cert", ca.cert().toString(),
                "-keyfile", ca.key().toString(), "-in", csr.toString(), "-out", p.cert().toString(),
                "-startdate", ASN1.format(notAfter.minusSeconds(86_400)), "-enddate", ASN1.format(notAfter));
        return p;
    }

    /**
     * @param files PEM files
     * @param name  the file to write
     * @return a file of their contents, one after the other (a CA bundle)
     */
    public Path bundle(String name, Path... files) throws IOException {
        StringBuilder b = new StringBuilder();
        for (Path f : files) b.append(Files.readString(f));
        return Files.writeString(dir.resolve(name), b.toString());
    }

    /**
     * Runs {@code openssl} with {@code args}.
     *
     * @param args its arguments
     * @throws IllegalStateException with its output when it fails
     */
    public void openssl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add("openssl");
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", cmd) + " failed: " + new String(out, StandardCharsets.UTF_8));
        }
    }

    private Pair pair(String name) { return new Pair(dir.resolve(name + ".crt"), dir.resolve(name + ".key")); }
}
