package dev.drover.image;

import static org.assertj.core.api.Assertions.fail;

import dev.drover.httpapi.TestCa;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.crypto.generators.OpenBSDBCrypt;

/**
 * A real CNCF distribution registry (Debian's {@code docker-registry}) on 127.0.0.1 with TLS, from a CA of the
 * test's own, and optionally htpasswd authentication; its storage, config and certificates under a directory of the
 * test's. Stopped by its PID on {@link #close}.
 */
public final class TestRegistry implements AutoCloseable {

    static final String BINARY = "/usr/bin/docker-registry";
    public static final String USER = "puller";
    public static final String PASSWORD = "s3cret-pull";

    /** How the registry authenticates its callers. */
    public enum Auth {
        /** Not at all. */
        NONE,
        /** {@code Basic}, against an htpasswd file holding {@link #USER}. */
        HTPASSWD,
        /** {@code Bearer} tokens from a {@link TestTokenService}. */
        TOKEN
    }

    private final Process process;
    private final String host;
    private final Path caFile;
    private final SSLContext tls;
    private final Auth auth;
    private final TestTokenService tokens;

    private TestRegistry(
            Process process, String host, Path caFile, SSLContext tls, Auth auth, TestTokenService tokens) {
        this.process = process;
        this.host = host;
        this.caFile = caFile;
        this.tls = tls;
        this.auth = auth;
        this.tokens = tokens;
    }

    /** Starts a registry in {@code dir}, authenticating as {@code auth} says. */
    public static TestRegistry start(Path dir, Auth auth) throws Exception {
        if (!Files.isExecutable(Path.of(BINARY))) {
            fail(BINARY + " is missing: install Debian's docker-registry package (.ci/tools does)");
        }
        TestCa ca = new TestCa("drover-test-registry-ca");
        TestCa.Leaf leaf = ca.signServer("127.0.0.1", KeyPurposeId.id_kp_serverAuth);
        Path caFile = ca.writePem(dir.resolve("ca.pem"));
        Files.writeString(dir.resolve("cert.pem"), TestCa.pem(leaf.certificate()));
        Files.writeString(dir.resolve("key.pem"), TestCa.pemKey(leaf.key()));
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        StringBuilder config = new StringBuilder()
                .append("version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\n")
                .append("storage:\n  filesystem:\n    rootdirectory: ")
                .append(dir.resolve("data"))
                .append("\n  delete:\n    enabled: true\n")
                .append("http:\n  addr: 127.0.0.1:")
                .append(port)
                .append("\n  tls:\n    certificate: ")
                .append(dir.resolve("cert.pem"))
                .append("\n    key: ")
                .append(dir.resolve("key.pem"))
                .append('\n');
        TestTokenService tokens = null;
        if (auth == Auth.TOKEN) {
            TestCa.Leaf tokenLeaf = ca.signServer("127.0.0.1", KeyPurposeId.id_kp_serverAuth);
            KeyStore keys = KeyStore.getInstance("PKCS12");
            keys.load(null, null);
            keys.setKeyEntry(
                    "leaf", tokenLeaf.key(), new char[0], new java.security.cert.Certificate[] {tokenLeaf.certificate()
                    });
            javax.net.ssl.KeyManagerFactory kmf =
                    javax.net.ssl.KeyManagerFactory.getInstance(javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, new char[0]);
            SSLContext serverTls = SSLContext.getInstance("TLS");
            serverTls.init(kmf.getKeyManagers(), null, null);
            tokens = new TestTokenService(dir, ca, serverTls);
            config.append("auth:\n  token:\n    realm: ")
                    .append(tokens.realm())
                    .append("\n    service: ")
                    .append(TestTokenService.SERVICE)
                    .append("\n    issuer: ")
                    .append(TestTokenService.ISSUER)
                    .append("\n    rootcertbundle: ")
                    .append(tokens.rootBundle())
                    .append('\n');
        }
        if (auth == Auth.HTPASSWD) {
            byte[] salt = new byte[16];
            new SecureRandom().nextBytes(salt);
            Files.writeString(
                    dir.resolve("htpasswd"),
                    USER + ":" + OpenBSDBCrypt.generate("2a", PASSWORD.toCharArray(), salt, 4) + "\n");
            config.append("auth:\n  htpasswd:\n    realm: drover-test\n    path: ")
                    .append(dir.resolve("htpasswd"))
                    .append('\n');
        }
        Path yml = Files.writeString(dir.resolve("config.yml"), config);
        Process p = new ProcessBuilder(BINARY, "serve", yml.toString())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("registry.log").toFile())
                .start();
        TestRegistry r = new TestRegistry(p, "127.0.0.1:" + port, caFile, trusting(caFile), auth, tokens);
        r.awaitUp(dir.resolve("registry.log"));
        return r;
    }

    /** Where the registry answers: {@code 127.0.0.1:PORT}. */
    public String host() {
        return host;
    }

    public Path caFile() {
        return caFile;
    }

    /** A TLS context trusting this registry's CA (and nothing else). */
    public SSLContext tls() {
        return tls;
    }

    /** Pushes {@code image} as {@code repository:tag}; returns the digest of what the tag names. */
    public Digest push(String repository, String tag, TestImage image) throws Exception {
        try (HttpClient http = HttpClient.newBuilder().sslContext(tls).build()) {
            return push(http, repository, tag, image);
        }
    }

    private Digest push(HttpClient http, String repository, String tag, TestImage image) throws Exception {
        for (TestImage child : image.children()) {
            push(http, repository, child.top().digest().toString(), child);
        }
        for (TestImage.Blob b : image.blobs()) {
            pushBlob(http, repository, b.digest(), b.bytes());
        }
        TestImage.Blob top = image.top();
        HttpResponse<String> r = http.send(
                request(repository, "/v2/" + repository + "/manifests/" + tag)
                        .header("Content-Type", top.mediaType())
                        .PUT(HttpRequest.BodyPublishers.ofByteArray(top.bytes()))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 201) {
            throw new IOException("pushing the manifest: " + r.statusCode() + " " + r.body());
        }
        return top.digest();
    }

    private void pushBlob(HttpClient http, String repository, Digest digest, byte[] bytes) throws Exception {
        HttpResponse<String> start = http.send(
                request(repository, "/v2/" + repository + "/blobs/uploads/")
                        .POST(HttpRequest.BodyPublishers.noBody())
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (start.statusCode() != 202) {
            throw new IOException("starting an upload: " + start.statusCode() + " " + start.body());
        }
        String location = start.headers().firstValue("Location").orElseThrow();
        URI at = URI.create("https://" + host + "/").resolve(location);
        String sep = at.getQuery() == null ? "?" : "&";
        HttpRequest.Builder put = HttpRequest.newBuilder(URI.create(at + sep + "digest=" + digest))
                .header("Content-Type", "application/octet-stream")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(bytes));
        authorize(repository, put);
        HttpResponse<String> done = http.send(put.build(), HttpResponse.BodyHandlers.ofString());
        if (done.statusCode() != 201) {
            throw new IOException("uploading " + digest + ": " + done.statusCode() + " " + done.body());
        }
    }

    private HttpRequest.Builder request(String repository, String path) throws IOException {
        return authorize(repository, HttpRequest.newBuilder(URI.create("https://" + host + path)));
    }

    private HttpRequest.Builder authorize(String repository, HttpRequest.Builder b) throws IOException {
        switch (auth) {
            case HTPASSWD -> b.header("Authorization", new RegistryCredentials(USER, PASSWORD).basic());
            case TOKEN -> b.header("Authorization", "Bearer " + tokens.pushToken(repository));
            case NONE -> {}
        }
        return b;
    }

    /** How many tokens the token service handed out (to clients, not to pushes). */
    public int tokensIssued() {
        return tokens.issued.get();
    }

    private void awaitUp(Path log) throws Exception {
        Instant deadline = Instant.now().plusSeconds(20);
        try (HttpClient http = HttpClient.newBuilder()
                .sslContext(tls)
                .connectTimeout(Duration.ofSeconds(1))
                .build()) {
            while (Instant.now().isBefore(deadline)) {
                if (!process.isAlive()) {
                    fail("docker-registry exited at once: " + Files.readString(log));
                }
                try {
                    int s = http.send(
                                    HttpRequest.newBuilder(URI.create("https://" + host + "/v2/"))
                                            .build(),
                                    HttpResponse.BodyHandlers.discarding())
                            .statusCode();
                    if (s == 200 || s == 401) {
                        return;
                    }
                } catch (IOException notYet) {
                    // not listening yet
                }
                Thread.sleep(50);
            }
        }
        close();
        fail("docker-registry did not answer within 20 s: " + Files.readString(log));
    }

    private static SSLContext trusting(Path caFile) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (var in = Files.newInputStream(caFile)) {
            trust.setCertificateEntry(
                    "ca",
                    java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    /** Basic credentials for {@code host} as a {@code .dockerconfigjson} holds them. */
    public static byte[] dockerConfig(String host, String user, String password) {
        String auth = Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
        return ("{\"auths\":{\"" + host + "\":{\"auth\":\"" + auth + "\"}}}").getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws InterruptedException {
        if (tokens != null) {
            tokens.close();
        }
        process.destroy();
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(5, TimeUnit.SECONDS);
        }
    }
}
