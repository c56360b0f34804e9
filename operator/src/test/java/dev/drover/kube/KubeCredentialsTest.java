package dev.drover.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import dev.drover.credentials.CredentialException;
import dev.drover.credentials.CredentialException.Reason;
import dev.drover.credentials.ObjectRef;
import dev.drover.credentials.TypedSecret;
import dev.drover.httpapi.AgentCertificate;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Reads of Secrets and ConfigMaps over a real TLS connection to a server that stands in for the API server and asks
 * for a client certificate: what goes out (the ServiceAccount's token, nothing of the agent's), whom it trusts, and
 * how it bounds what comes back.
 */
class KubeCredentialsTest {

    static final ObjectRef SECRET = new ObjectRef(ObjectRef.Kind.Secret, "team", "db");
    static final String SA_TOKEN = "sa-token-123";

    /** What a request brought: its path, its Authorization headers, its other headers, its client certificate. */
    record Seen(String path, List<String> authorization, List<String> headers, boolean clientCertificate) {}

    interface Answer {
        void send(HttpExchange exchange) throws IOException;
    }

    final List<Seen> seen = new CopyOnWriteArrayList<>();
    final AtomicReference<Answer> answer = new AtomicReference<>();
    AgentCertificate.Identity serverIdentity;
    AgentCertificate.Identity agentIdentity;
    HttpsServer server;
    KubeCredentials credentials;

    @BeforeEach
    void start() throws Exception {
        List<InetAddress> loopback = List.of(InetAddress.getLoopbackAddress());
        serverIdentity = AgentCertificate.create("apiserver", loopback, Instant.now());
        agentIdentity = AgentCertificate.create("agent", loopback, Instant.now());
        server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
        server.setHttpsConfigurator(new HttpsConfigurator(serverIdentity.sslContext()) {
            @Override
            public void configure(HttpsParameters parameters) {
                parameters.setWantClientAuth(true); // a client that has a certificate shows it
            }
        });
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", exchange -> {
            try (exchange) {
                boolean certificate;
                try {
                    certificate = ((HttpsExchange) exchange).getSSLSession().getPeerCertificates().length > 0;
                } catch (SSLPeerUnverifiedException none) {
                    certificate = false;
                }
                List<String> headers =
                        new ArrayList<>(exchange.getRequestHeaders().keySet());
                List<String> authorization = exchange.getRequestHeaders().get("Authorization");
                seen.add(new Seen(
                        exchange.getRequestURI().getRawPath(),
                        authorization == null ? List.of() : authorization,
                        headers,
                        certificate));
                answer.get().send(exchange);
            } catch (IOException e) {
                // the client went away: what some tests want
            }
        });
        server.start();
        answer.set(json(200, secret(Map.of("password", "s3cret"))));
        credentials = new KubeCredentials(
                null, "node-a", agentConfig(serverIdentity.certificate(), false), Duration.ofSeconds(2));
    }

    @AfterEach
    void stop() {
        if (credentials != null) {
            credentials.close();
        }
        server.stop(0);
    }

    /** The agent's own client settings: the cluster CA, and credentials of its own of every kind. */
    Config agentConfig(X509Certificate ca, boolean trustCerts) throws Exception {
        return new ConfigBuilder(Config.empty())
                .withMasterUrl("https://127.0.0.1:" + server.getAddress().getPort())
                .withCaCertData(b64(pem("CERTIFICATE", ca.getEncoded())))
                .withTrustCerts(trustCerts)
                .withClientCertData(
                        b64(pem("CERTIFICATE", agentIdentity.certificate().getEncoded())))
                .withClientKeyData(b64(pem("PRIVATE KEY", agentIdentity.key().getEncoded())))
                .withOauthToken("the-agents-own-token")
                .withUsername("agent")
                .withPassword("agent-password")
                .build();
    }

    static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder().encodeToString(der) + "\n-----END " + type
                + "-----\n";
    }

    static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.US_ASCII));
    }

    static String secret(Map<String, String> data) {
        StringBuilder fields = new StringBuilder();
        data.forEach((k, v) -> fields.append(fields.isEmpty() ? "" : ",")
                .append('"')
                .append(k)
                .append("\":\"")
                .append(Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8)))
                .append('"'));
        return "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"db\",\"namespace\":\"team\"},"
                + "\"data\":{" + fields + "}}";
    }

    static Answer json(int status, String body) {
        return exchange -> {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, bytes.length);
            exchange.getResponseBody().write(bytes);
        };
    }

    static String status(int code, String reason, String message) {
        return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
                + com.fasterxml.jackson.databind.node.TextNode.valueOf(message) + ",\"reason\":\"" + reason
                + "\",\"code\":" + code + "}";
    }

    static CredentialException failure(ThrowingRead read) {
        try {
            read.run();
        } catch (CredentialException e) {
            return e;
        }
        throw new AssertionError("the read did not fail");
    }

    interface ThrowingRead {
        void run() throws CredentialException;
    }

    @Test
    void aReadSendsTheServiceAccountsTokenAndNoneOfTheAgentsCredentials() throws Exception {
        Map<String, byte[]> data = credentials.read(SECRET, SA_TOKEN);

        assertThat(new String(data.get("password"), StandardCharsets.UTF_8)).isEqualTo("s3cret");
        assertThat(seen).hasSize(1);
        Seen request = seen.getFirst();
        assertThat(request.path()).isEqualTo("/api/v1/namespaces/team/secrets/db");
        assertThat(request.authorization()).containsExactly("Bearer " + SA_TOKEN);
        assertThat(request.clientCertificate())
                .as("the agent's client certificate was shown")
                .isFalse();
        assertThat(request.headers())
                .noneMatch(h -> h.equalsIgnoreCase("Cookie") || h.equalsIgnoreCase("Impersonate-User"));
    }

    @Test
    void aSecretIsReadWithItsTypeForUsesThatDependOnIt() throws Exception {
        answer.set(json(
                200,
                "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"type\":\"kubernetes.io/dockerconfigjson\","
                        + "\"data\":{\".dockerconfigjson\":\"" + b64("{\"auths\":{}}") + "\"}}"));
        TypedSecret pull = credentials.secret("team", "pull", SA_TOKEN);
        assertThat(seen.getFirst().path()).isEqualTo("/api/v1/namespaces/team/secrets/pull");
        assertThat(seen.getFirst().authorization()).containsExactly("Bearer " + SA_TOKEN);
        assertThat(pull.type()).isEqualTo("kubernetes.io/dockerconfigjson");
        assertThat(new String(pull.data().get(".dockerconfigjson"), StandardCharsets.UTF_8))
                .isEqualTo("{\"auths\":{}}");

        answer.set(json(200, secret(Map.of("password", "s3cret"))));
        assertThat(credentials.secret("team", "db", SA_TOKEN).type())
                .as("a Secret created without a type")
                .isEqualTo(TypedSecret.OPAQUE);
    }

    @Test
    void aConfigMapsDataAndBinaryDataAreReadTogether() throws Exception {
        answer.set(json(
                200,
                "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"data\":{\"app.conf\":\"port=80\\n\"},"
                        + "\"binaryData\":{\"logo.bin\":\"AAH/\"}}"));

        Map<String, byte[]> data = credentials.read(new ObjectRef(ObjectRef.Kind.ConfigMap, "team", "app"), SA_TOKEN);

        assertThat(seen.getFirst().path()).isEqualTo("/api/v1/namespaces/team/configmaps/app");
        assertThat(data).containsOnlyKeys("app.conf", "logo.bin");
        assertThat(data.get("app.conf")).isEqualTo("port=80\n".getBytes(StandardCharsets.UTF_8));
        assertThat(data.get("logo.bin")).containsExactly(0, 1, 0xff);
    }

    @Test
    void aServerTheClusterCaDidNotSignNeverSeesTheToken() throws Exception {
        AgentCertificate.Identity other =
                AgentCertificate.create("other", List.of(InetAddress.getLoopbackAddress()), Instant.now());
        try (KubeCredentials trustingOther =
                new KubeCredentials(null, "node-a", agentConfig(other.certificate(), false), Duration.ofSeconds(2))) {
            CredentialException e = failure(() -> trustingOther.read(SECRET, SA_TOKEN));

            assertThat(e.reason()).isEqualTo(Reason.UNAVAILABLE);
            assertThat(e.getMessage()).contains("Secret team/db").doesNotContain(SA_TOKEN);
        }
        assertThat(seen).isEmpty();
    }

    @Test
    void trustCertsIsHonouredWhereTheAgentsConfigSaysSo() throws Exception {
        AgentCertificate.Identity other =
                AgentCertificate.create("other", List.of(InetAddress.getLoopbackAddress()), Instant.now());
        try (KubeCredentials trustingAll =
                new KubeCredentials(null, "node-a", agentConfig(other.certificate(), true), Duration.ofSeconds(2))) {
            assertThat(trustingAll.read(SECRET, SA_TOKEN)).containsKey("password");
        }
    }

    /** The agent reads its CA as the kubectl plugin reads a kubeconfig's: the same PEM, the same sentence. */
    @Test
    void aCaThatHoldsNoCertificateIsRefusedSayingWhere() {
        Config noCertificate = new ConfigBuilder(Config.empty())
                .withMasterUrl("https://127.0.0.1:" + server.getAddress().getPort())
                .withCaCertData(b64("not a certificate"))
                .build();

        assertThatThrownBy(() -> new KubeCredentials(null, "node-a", noCertificate, Duration.ofSeconds(2)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("cannot set up TLS to the API server from the agent's client configuration: "
                        + "caCertData holds no PEM block (-----BEGIN ...-----)");
    }

    @Test
    void theApiServersRefusalIsForbiddenWithItsMessageEscapedAndCut() {
        String refusal = "secrets \"db\" is forbidden: User \"system:serviceaccount:team:web\" cannot get resource"
                + " \"secrets\" in API group \"\" in the namespace \"team\"\n\u001b[31m" + "x".repeat(5000);
        answer.set(json(403, status(403, "Forbidden", refusal)));

        CredentialException e = failure(() -> credentials.read(SECRET, SA_TOKEN));

        assertThat(e.reason()).isEqualTo(Reason.FORBIDDEN);
        assertThat(e.getMessage())
                .contains("Secret team/db")
                .contains("User \"system:serviceaccount:team:web\" cannot get resource")
                .contains("\\u000a\\u001b[31m")
                .doesNotContain("\n")
                .doesNotContain(SA_TOKEN)
                .hasSizeLessThan(KubeCredentials.MESSAGE_LIMIT + 200);
    }

    @Test
    void eachAnswerMapsToTheReasonTaskSetupActsOn() {
        Map<Integer, Reason> cases = Map.of(
                404, Reason.NOT_FOUND,
                401, Reason.FORBIDDEN,
                400, Reason.INVALID,
                422, Reason.INVALID,
                429, Reason.UNAVAILABLE,
                500, Reason.UNAVAILABLE,
                503, Reason.UNAVAILABLE);
        cases.forEach((code, reason) -> {
            answer.set(json(code, status(code, "Some", "said " + code)));
            CredentialException e = failure(() -> credentials.read(SECRET, SA_TOKEN));
            assertThat(e.reason()).as("HTTP %d", code).isEqualTo(reason);
            assertThat(e.getMessage()).contains("said " + code);
        });
        answer.set(json(404, status(404, "NotFound", "secrets \"db\" not found")));
        assertThat(failure(() -> credentials.read(SECRET, SA_TOKEN)).getMessage())
                .startsWith("Secret team/db not found");
    }

    @Test
    void aRedirectIsNotFollowed() {
        answer.set(exchange -> {
            exchange.getResponseHeaders().set("Location", "https://127.0.0.1:1/elsewhere");
            exchange.sendResponseHeaders(302, -1);
        });

        CredentialException e = failure(() -> credentials.read(SECRET, SA_TOKEN));

        assertThat(e.reason()).isEqualTo(Reason.INVALID);
        assertThat(seen).hasSize(1);
    }

    @Test
    void namesThatWouldLeaveTheirPathAreRefusedUnsent() {
        for (ObjectRef ref : List.of(
                new ObjectRef(ObjectRef.Kind.Secret, "team", "../../../api/v1/namespaces/kube-system/secrets/x"),
                new ObjectRef(ObjectRef.Kind.Secret, "team/secrets/x?", "db"),
                new ObjectRef(ObjectRef.Kind.ConfigMap, "team", "a%2Fb"),
                new ObjectRef(ObjectRef.Kind.ConfigMap, "team", ".."))) {
            CredentialException e = failure(() -> credentials.read(ref, SA_TOKEN));
            assertThat(e.reason()).as("%s", ref).isEqualTo(Reason.INVALID);
        }
        CredentialException header = failure(() -> credentials.read(SECRET, "a\r\nX-Injected: 1"));
        assertThat(header.reason()).isEqualTo(Reason.INVALID);
        assertThat(header.getMessage()).doesNotContain("X-Injected");
        assertThat(seen).isEmpty();
    }

    @Test
    void anAnswerThatSaysItIsTooLargeIsRefusedUnread() {
        AtomicLong written = new AtomicLong();
        answer.set(exchange -> {
            exchange.sendResponseHeaders(200, 64L << 20);
            endless(exchange.getResponseBody(), written);
        });

        CredentialException e = failure(() -> credentials.read(SECRET, SA_TOKEN));

        assertThat(e.reason()).isEqualTo(Reason.INVALID);
        assertThat(e.getMessage()).contains("larger than " + KubeCredentials.MAX_ANSWER_BYTES);
        assertThat(written.get()).isLessThan(64L << 20);
    }

    @Test
    void anAnswerThatStreamsPastTheBoundIsCutOffThere() throws Exception {
        AtomicLong written = new AtomicLong();
        answer.set(exchange -> {
            exchange.sendResponseHeaders(200, 0); // chunked: no length said
            endless(exchange.getResponseBody(), written);
        });

        CredentialException e = failure(() -> credentials.read(SECRET, SA_TOKEN));

        assertThat(e.reason()).isEqualTo(Reason.INVALID);
        // the server's writes fail once the client has gone; socket buffers hold a few MiB at most
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
            long before = written.get();
            Thread.sleep(200);
            return written.get() == before;
        });
        assertThat(written.get()).isLessThan(64L << 20);
    }

    @Test
    void aServerThatTricklesIsGivenUpOnInTime() {
        answer.set(exchange -> {
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            try {
                for (int i = 0; i < 100; i++) {
                    out.write('{');
                    out.flush();
                    Thread.sleep(100);
                }
            } catch (InterruptedException stop) {
                Thread.currentThread().interrupt();
            }
        });
        long start = System.nanoTime();

        CredentialException e = failure(() -> credentials.read(SECRET, SA_TOKEN));

        assertThat(e.reason()).isEqualTo(Reason.UNAVAILABLE);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(6));
    }

    @Test
    void closeStopsTheClientsThreads() throws Exception {
        credentials.read(SECRET, SA_TOKEN);
        String client = credentials.http().toString(); // jdk.internal.net.http.HttpClientImpl@hash(ID)
        String prefix = "HttpClient-" + client.substring(client.lastIndexOf('(') + 1, client.lastIndexOf(')')) + "-";
        assertThat(threads(prefix)).isNotEmpty();

        credentials.close();
        credentials = null;

        org.awaitility.Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(threads(prefix)).isEmpty());
    }

    static List<String> threads(String prefix) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(Thread::isAlive)
                .map(Thread::getName)
                .filter(n -> n.startsWith(prefix))
                .toList();
    }

    static void endless(OutputStream out, AtomicLong written) throws IOException {
        byte[] chunk = new byte[64 * 1024];
        while (written.get() < 64L << 20) {
            out.write(chunk);
            written.addAndGet(chunk.length);
        }
    }
}
