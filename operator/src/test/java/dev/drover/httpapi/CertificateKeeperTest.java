package dev.drover.httpapi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A running server's certificate is renewed before it expires, and served from the next handshake on. */
class CertificateKeeperTest {

    static final List<InetAddress> ADDRESSES = List.of(InetAddress.getLoopbackAddress());

    @TempDir
    Path dir;

    final AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-11-22T12:00:00Z"));
    final Clock clock = new Clock() {
        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }
    };
    final List<AgentCertificate.Identity> published = new CopyOnWriteArrayList<>();
    HttpsServer server;

    @BeforeEach
    void setUp() throws Exception {
        server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", ex -> {
            byte[] body = "hello".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
    }

    @AfterEach
    void tearDown() {
        server.stop(0);
    }

    String get(String fingerprint) throws Exception {
        try (HttpClient http =
                HttpClient.newBuilder().sslContext(Pinning.to(fingerprint)).build()) {
            return http.send(
                            HttpRequest.newBuilder(URI.create("https://127.0.0.1:"
                                            + server.getAddress().getPort() + "/"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
        }
    }

    @Test
    void aCertificateDueForRenewalIsReplacedWithoutRestartingTheServer() throws Exception {
        try (CertificateKeeper keeper =
                CertificateKeeper.start(dir, "node-a", ADDRESSES, clock, Duration.ofHours(1), published::add)) {
            server.setHttpsConfigurator(new HttpsConfigurator(keeper.sslContext()));
            server.start();
            String first = keeper.identity().fingerprint();
            assertThat(get(first)).isEqualTo("hello");

            now.set(now.get().plus(Duration.ofDays(300)));
            assertThat(keeper.renewIfDue()).as("65 days left: not due").isFalse();
            assertThat(published).isEmpty();

            now.set(now.get().plus(Duration.ofDays(40)));
            assertThat(keeper.renewIfDue()).as("25 days left: due").isTrue();
            String second = keeper.identity().fingerprint();
            assertThat(second).isNotEqualTo(first);
            assertThat(published)
                    .extracting(AgentCertificate.Identity::fingerprint)
                    .containsExactly(second);
            assertThat(keeper.identity().notAfter()).isAfter(now.get().plus(Duration.ofDays(360)));
            assertThat(get(second)).as("the same server, the new certificate").isEqualTo("hello");
            assertThatThrownBy(() -> get(first)).isInstanceOf(SSLHandshakeException.class);
            assertThat(AgentCertificate.loadOrCreate(dir, "node-a", ADDRESSES, clock)
                            .fingerprint())
                    .as("the new one is what a restarted agent loads")
                    .isEqualTo(second);
        }
    }

    @Test
    void theKeepersOwnThreadRenewsOnItsIntervalAndStopsOnClose() throws Exception {
        CertificateKeeper keeper =
                CertificateKeeper.start(dir, "node-a", ADDRESSES, clock, Duration.ofMillis(20), published::add);
        String first = keeper.identity().fingerprint();
        now.set(now.get().plus(Duration.ofDays(350)));
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> published.size() == 1);
        assertThat(published.getFirst().fingerprint()).isNotEqualTo(first);
        keeper.close();
        now.set(now.get().plus(Duration.ofDays(350)));
        Thread.sleep(200);
        assertThat(published).as("nothing runs after close").hasSize(1);
    }
}
