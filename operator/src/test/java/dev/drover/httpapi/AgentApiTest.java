package dev.drover.httpapi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.state.AllocId;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The logs API over HTTPS: what callers with and without the right get, and a followed log. */
class AgentApiTest {

    @TempDir
    Path dir;
    ReviewingApiServer kube;
    AgentApi api;
    AgentCertificate.Identity identity;
    HttpClient http;
    final AtomicBoolean webDead = new AtomicBoolean();

    @BeforeEach
    void start() throws Exception {
        kube = new ReviewingApiServer();
        Path logs = Files.createDirectories(dir.resolve("logs"));
        Files.writeString(logs.resolve("web.stdout.0"), "one\ntwo\nthree\n");
        Files.writeString(logs.resolve("web.stderr.0"), "oops\n");
        identity = AgentCertificate.loadOrCreate(dir.resolve("tls"), "node-a", List.of(InetAddress.getLoopbackAddress()),
                Clock.systemUTC());
        AgentApi.Allocations allocations = id -> id.equals(new AllocId("team-a", "svc"))
                || id.equals(new AllocId("team-b", "svc"))
                ? Optional.of(new AgentApi.Local(logs, Set.of("web"), task -> webDead.get())) : Optional.empty();
        api = AgentApi.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), identity.sslContext(),
                new KubernetesAuth(kube.client, Clock.systemUTC()), allocations, "node-a");
        http = HttpClient.newBuilder().sslContext(Pinning.to(identity.fingerprint())).build();
    }

    @AfterEach
    void stop() {
        http.close();
        api.close();
        kube.close();
    }

    HttpResponse<String> get(String path, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + api.port() + path));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aCallerWithTheRightReadsATasksOutput() throws Exception {
        HttpResponse<String> all = get("/v1/allocations/team-a/svc/logs/web", "alice-token");
        assertThat(all.statusCode()).isEqualTo(200);
        assertThat(all.body()).isEqualTo("one\ntwo\nthree\n");
        assertThat(get("/v1/allocations/team-a/svc/logs/web?tail=1", "alice-token").body()).isEqualTo("three\n");
        assertThat(get("/v1/allocations/team-a/svc/logs/web?stream=stderr", "alice-token").body()).isEqualTo("oops\n");
    }

    @Test
    void callersWithoutATokenABadTokenOrTheRightAreRefused() throws Exception {
        HttpResponse<String> none = get("/v1/allocations/team-a/svc/logs/web", null);
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(none.body()).contains("no bearer token");
        HttpResponse<String> forged = get("/v1/allocations/team-a/svc/logs/web", "forged");
        assertThat(forged.statusCode()).isEqualTo(401);
        assertThat(forged.body()).contains("does not accept this token");
        HttpResponse<String> forbidden = get("/v1/allocations/team-b/svc/logs/web", "alice-token");
        assertThat(forbidden.statusCode()).isEqualTo(403);
        assertThat(forbidden.body()).contains("cannot get allocations/log in namespace \\\"team-b\\\"");
    }

    @Test
    void unknownAllocationsTasksAndBadInputAreClearErrors() throws Exception {
        assertThat(get("/v1/allocations/team-a/other/logs/web", "alice-token").body())
                .contains("allocation team-a/other does not run on node node-a");
        assertThat(get("/v1/allocations/team-a/svc/logs/db", "alice-token").body()).contains("has no task \\\"db\\\"");
        assertThat(get("/v1/allocations/team-a/svc/logs/web?tail=many", "alice-token").statusCode()).isEqualTo(400);
        assertThat(get("/v1/allocations/team-a/svc/logs/web?stream=../../etc/passwd", "alice-token").statusCode())
                .isEqualTo(400);
        assertThat(get("/v1/allocations/team-a/svc/logs/..%2F..%2Fx", "alice-token").statusCode()).isEqualTo(400);
        assertThat(get("/v1/nodes", "alice-token").statusCode()).isEqualTo(404);
    }

    @Test
    void aFollowedLogStreamsNewOutputUntilTheTaskIsDead() throws Exception {
        HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + api.port()
                        + "/v1/allocations/team-a/svc/logs/web?tail=1&follow=true"))
                .header("Authorization", "Bearer alice-token").build(), HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream body = r.body()) {
            assertThat(new String(body.readNBytes(6), StandardCharsets.UTF_8)).isEqualTo("three\n");
            Files.writeString(dir.resolve("logs/web.stdout.0"), "four\n", StandardOpenOption.APPEND);
            assertThat(new String(body.readNBytes(5), StandardCharsets.UTF_8)).isEqualTo("four\n");
            webDead.set(true);
            assertThat(body.readAllBytes()).as("the stream ends once the task is dead").isEmpty();
        }
    }

    @Test
    void aClientPinningAnotherFingerprintDoesNotConnect() throws Exception {
        try (HttpClient wrong = HttpClient.newBuilder().sslContext(Pinning.to("00".repeat(32))).build()) {
            assertThatThrownBy(() -> wrong.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + api.port()
                    + "/v1/allocations/team-a/svc/logs/web")).build(), HttpResponse.BodyHandlers.ofString()))
                    .isInstanceOf(SSLHandshakeException.class);
        }
    }
}
