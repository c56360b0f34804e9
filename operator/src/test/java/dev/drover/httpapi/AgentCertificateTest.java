package dev.drover.httpapi;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentCertificateTest {

    static final List<InetAddress> ADDRESSES = List.of(InetAddress.getLoopbackAddress());

    @TempDir
    Path dir;

    static Clock at(Instant t) {
        return Clock.fixed(t, ZoneOffset.UTC);
    }

    @Test
    void madeOnceKeptAcrossRestartsWithTheKeyReadableByTheAgentAlone() throws Exception {
        Instant now = Instant.parse("2026-11-22T12:00:00Z");
        AgentCertificate.Identity first = AgentCertificate.loadOrCreate(dir, "node-a", ADDRESSES, at(now));
        AgentCertificate.Identity again =
                AgentCertificate.loadOrCreate(dir, "node-a", ADDRESSES, at(now.plus(Duration.ofDays(100))));

        assertThat(again.fingerprint()).isEqualTo(first.fingerprint()).hasSize(64);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("agent.key"))))
                .isEqualTo("rw-------");
        assertThat(Files.readString(dir.resolve("agent.key"))).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(first.certificate().getSubjectAlternativeNames())
                .extracting(e -> String.valueOf(e.get(1)))
                .containsExactlyInAnyOrder("node-a", "127.0.0.1");
        assertThat(first.notAfter()).isEqualTo(now.plus(AgentCertificate.VALIDITY));
    }

    @Test
    void replacedBeforeItExpiresForAnotherNodeOrWhenUnreadable() throws Exception {
        Instant now = Instant.parse("2026-11-22T12:00:00Z");
        String original =
                AgentCertificate.loadOrCreate(dir, "node-a", ADDRESSES, at(now)).fingerprint();

        Instant late = now.plus(AgentCertificate.VALIDITY).minus(Duration.ofDays(29));
        AgentCertificate.Identity renewed = AgentCertificate.loadOrCreate(dir, "node-a", ADDRESSES, at(late));
        assertThat(renewed.fingerprint()).isNotEqualTo(original);
        assertThat(renewed.notAfter()).isEqualTo(late.plus(AgentCertificate.VALIDITY));

        AgentCertificate.Identity moved = AgentCertificate.loadOrCreate(dir, "node-b", ADDRESSES, at(late));
        assertThat(moved.fingerprint()).isNotEqualTo(renewed.fingerprint());

        Files.writeString(
                dir.resolve("agent.crt"), "-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n");
        AgentCertificate.Identity fresh = AgentCertificate.loadOrCreate(dir, "node-b", ADDRESSES, at(late));
        assertThat(fresh.fingerprint()).isNotEqualTo(moved.fingerprint());
        assertThat(AgentCertificate.loadOrCreate(dir, "node-b", ADDRESSES, at(late))
                        .fingerprint())
                .isEqualTo(fresh.fingerprint());
    }

    /** The context serves TLS, and what a client sees is the certificate whose fingerprint was published. */
    @Test
    void aClientPinningTheFingerprintReachesTheServer() throws Exception {
        AgentCertificate.Identity id = AgentCertificate.loadOrCreate(dir, "node-a", ADDRESSES, Clock.systemUTC());
        HttpsServer server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(id.sslContext()));
        server.createContext("/", ex -> {
            byte[] body = "hello".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        server.start();
        SSLContext client = Pinning.to(id.fingerprint());
        try (HttpClient http = HttpClient.newBuilder().sslContext(client).build()) {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(
                                    "https://127.0.0.1:" + server.getAddress().getPort() + "/"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.body()).isEqualTo("hello");
        } finally {
            server.stop(0);
        }
    }
}
