package io.idemkey.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * A private {@code redis-server} that speaks TLS only to clients that trust a certificate authority
 * made for this test ({@code openssl}), and knows one ACL user; the default user is off. The
 * plain port stays open on loopback for the readiness probe, and refuses everything without AUTH.
 */
public final class TlsRedis implements AutoCloseable {

    public static final String TRUSTSTORE_PASSWORD = "truststore-pw";

    private final RedisServer server;
    private final int tlsPort;
    private final Path truststore;

    private TlsRedis(RedisServer server, int tlsPort, Path truststore) {
        this.server = server;
        this.tlsPort = tlsPort;
        this.truststore = truststore;
    }

    /** Starts the server with user {@code user} and password {@code password}. */
    public static TlsRedis start(String user, String password) {
        try {
            Path directory = Files.createTempDirectory("idemkey-tls-");
            openssl(directory, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=Idemkey test CA");
            openssl(directory, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "redis.key", "-out", "redis.csr",
                    "-subj", "/CN=localhost");
            Files.writeString(directory.resolve("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
            openssl(directory, "x509", "-req", "-in", "redis.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                    "-CAcreateserial", "-days", "2", "-out", "redis.crt", "-extfile", "san.ext");
            Path truststore = directory.resolve("truststore.p12");
            writeTruststore(directory.resolve("ca.crt"), truststore);
            int tlsPort = freePort();
            RedisServer server = RedisServer.start("--tls-port", Integer.toString(tlsPort),
                    "--tls-cert-file", directory.resolve("redis.crt").toString(),
                    "--tls-key-file", directory.resolve("redis.key").toString(),
                    "--tls-ca-cert-file", directory.resolve("ca.crt").toString(),
                    "--tls-auth-clients", "no",
                    "--user", "default", "off",
                    "--user", user, "on", ">" + password, "~*", "&*", "+@all");
            return new TlsRedis(server, tlsPort, truststore);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code rediss://127.0.0.1:<tls port>}, without credentials. */
    public String url() {
        return "rediss://127.0.0.1:" + tlsPort;
    }

    public int tlsPort() {
        return tlsPort;
    }

    /** A PKCS12 trust store holding the test CA, password {@value #TRUSTSTORE_PASSWORD}. */
    public Path truststore() {
        return truststore;
    }

    public RedisServer server() {
        return server;
    }

    @Override
    public void close() {
        server.close();
    }

    private static void writeTruststore(Path caCertificate, Path truststore) {
        try (InputStream in = Files.newInputStream(caCertificate); OutputStream out = Files.newOutputStream(truststore)) {
            Certificate ca = CertificateFactory.getInstance("X.509").generateCertificate(in);
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setCertificateEntry("idemkey-test-ca", ca);
            store.store(out, TRUSTSTORE_PASSWORD.toCharArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void openssl(Path directory, String... arguments) throws IOException {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true)
                .redirectOutput(directory.resolve("openssl.log").toFile()).start();
        try {
            if (process.waitFor() != 0) {
                throw new IllegalStateException("openssl " + arguments[0] + " failed: "
                        + Files.readString(directory.resolve("openssl.log")));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
