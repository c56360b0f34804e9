package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import dev.drover.httpapi.AgentCertificate;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * API aggregation on the local API server, against a backend that trusts only the front-proxy CA the server
 * publishes in {@code kube-system/extension-apiserver-authentication} and echoes the identity it is given.
 */
class AggregatorTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static LocalApiServer server;
    static HttpsServer backend;
    static HttpClient http;
    static final AtomicInteger calls = new AtomicInteger();
    static final CountDownLatch firstChunkRead = new CountDownLatch(1);
    static String caBundle;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults().withNodes(List.of("local")));
        http = HttpClient.newBuilder().sslContext(server.trust()).build();
        var cm = server.client()
                .configMaps()
                .inNamespace("kube-system")
                .withName("extension-apiserver-authentication")
                .get();
        assertThat(cm.getData().get("requestheader-allowed-names")).isEqualTo("[\"front-proxy-client\"]");
        X509Certificate proxyCa = (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(
                        cm.getData().get("requestheader-client-ca-file").getBytes(StandardCharsets.US_ASCII)));

        AgentCertificate.Identity identity =
                // names the Service, not the address dialled, as a real aggregator checks it
                AgentCertificate.create("echo.default.svc", List.of(InetAddress.getLoopbackAddress()), Instant.now());
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("front-proxy-ca", proxyCa);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext backendTls = SSLContext.getInstance("TLS");
        backendTls.init(keyManagers(identity), tmf.getTrustManagers(), null);
        backend = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        backend.setHttpsConfigurator(new HttpsConfigurator(backendTls) {
            @Override
            public void configure(HttpsParameters params) {
                SSLParameters p = getSSLContext().getDefaultSSLParameters();
                p.setNeedClientAuth(true);
                params.setSSLParameters(p);
            }
        });
        backend.createContext("/", ex -> {
            calls.incrementAndGet();
            String peer = ((X509Certificate)
                            ((HttpsExchange) ex).getSSLSession().getPeerCertificates()[0])
                    .getSubjectX500Principal()
                    .getName();
            if (ex.getRequestURI().getPath().endsWith("/stream")) {
                ex.sendResponseHeaders(200, 0);
                OutputStream out = ex.getResponseBody();
                out.write("first\n".getBytes(StandardCharsets.UTF_8));
                out.flush();
                try {
                    firstChunkRead.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                out.write("second\n".getBytes(StandardCharsets.UTF_8));
                out.close();
                return;
            }
            Map<String, Object> echo = new LinkedHashMap<>();
            echo.put("peer", peer);
            echo.put("path", ex.getRequestURI().getPath());
            echo.put("user", ex.getRequestHeaders().get("X-Remote-User"));
            echo.put("groups", ex.getRequestHeaders().get("X-Remote-Group"));
            echo.put("node", ex.getRequestHeaders().get("X-Remote-Extra-authentication.kubernetes.io%2Fnode-name"));
            echo.put("authorization", ex.getRequestHeaders().containsKey("Authorization"));
            byte[] body = JSON.writeValueAsBytes(echo);
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(200, body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        backend.start();

        int port = backend.getAddress().getPort();
        server.client().resource("""
                        apiVersion: v1
                        kind: Service
                        metadata: {name: echo, namespace: default}
                        spec: {clusterIP: 127.0.0.1, ports: [{port: 443, targetPort: %d}]}
                        """.formatted(port)).create();
        caBundle = Base64.getEncoder()
                .encodeToString(FrontProxy.pem(identity.certificate()).getBytes(StandardCharsets.US_ASCII));
        server.client().resource("""
                        apiVersion: apiregistration.k8s.io/v1
                        kind: APIService
                        metadata: {name: v1.echo.example.com}
                        spec:
                          group: echo.example.com
                          version: v1
                          service: {namespace: default, name: echo, port: 443}
                          caBundle: %s
                          groupPriorityMinimum: 1000
                          versionPriority: 15
                        """.formatted(caBundle)).create();
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: ClusterRole
                        metadata: {name: echo-reader}
                        rules:
                        - {apiGroups: [echo.example.com], resources: [things, things/stream], verbs: [get]}
                        """).create();
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: ClusterRoleBinding
                        metadata: {name: echo-reader}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: echo-reader}
                        subjects:
                        - {kind: ServiceAccount, name: default, namespace: default}
                        """).create();
    }

    static javax.net.ssl.KeyManager[] keyManagers(AgentCertificate.Identity identity) throws Exception {
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("backend", identity.key(), new char[0], new X509Certificate[] {identity.certificate()});
        var kmf = javax.net.ssl.KeyManagerFactory.getInstance(javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);
        return kmf.getKeyManagers();
    }

    @AfterAll
    static void stop() {
        if (backend != null) {
            backend.stop(0);
        }
        if (http != null) {
            http.close();
        }
        if (server != null) {
            server.close();
        }
    }

    static String nodeToken() {
        return nodeToken(server);
    }

    /** A token of ServiceAccount default/default bound to Node local, from {@code server}. */
    static String nodeToken(LocalApiServer server) {
        return server.client()
                .serviceAccounts()
                .inNamespace("default")
                .withName("default")
                .tokenRequest(new TokenRequestBuilder()
                        .withNewSpec()
                        .withNewBoundObjectRef()
                        .withApiVersion("v1")
                        .withKind("Node")
                        .withName("local")
                        .endBoundObjectRef()
                        .endSpec()
                        .build())
                .getStatus()
                .getToken();
    }

    static HttpResponse<String> get(String token, String path, String... headers) throws Exception {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(URI.create(server.url() + path)).header("Authorization", "Bearer " + token);
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theBackendGetsTheCallersIdentityFromTheFrontProxyAndNeverTheCallersOwnHeaders() throws Exception {
        HttpResponse<String> answer = get(
                nodeToken(),
                "/apis/echo.example.com/v1/namespaces/default/things/one",
                "X-Remote-User",
                "system:admin",
                "X-Remote-Group",
                "system:masters");
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
        JsonNode echo = JSON.readTree(answer.body());
        assertThat(echo.path("peer").asText()).isEqualTo("CN=front-proxy-client");
        assertThat(echo.path("path").asText()).isEqualTo("/apis/echo.example.com/v1/namespaces/default/things/one");
        assertThat(echo.path("user").toString()).isEqualTo("[\"system:serviceaccount:default:default\"]");
        assertThat(echo.path("groups").toString())
                .doesNotContain("system:masters")
                .contains("system:serviceaccounts");
        assertThat(echo.path("node").toString()).isEqualTo("[\"local\"]");
        assertThat(echo.path("authorization").asBoolean())
                .as("the caller's token stays with the server")
                .isFalse();
    }

    @Test
    void theServerAuthorizesBeforeTheBackendIsCalled() throws Exception {
        int before = calls.get();
        HttpResponse<String> answer = get(nodeToken(), "/apis/echo.example.com/v1/namespaces/default/things/one/log");
        assertThat(answer.statusCode()).isEqualTo(403);
        assertThat(answer.body())
                .contains("cannot get resource \\\"things/log\\\" in API group \\\"echo.example.com\\\"");
        assertThat(calls.get()).isEqualTo(before);
    }

    @Test
    void discoveryListsTheAggregatedGroupAndAStreamPassesThroughAsItComes() throws Exception {
        assertThat(get(LocalApiServer.ADMIN_TOKEN, "/apis").body())
                .contains("\"groupVersion\":\"echo.example.com/v1\"");
        HttpResponse<InputStream> stream = http.send(
                HttpRequest.newBuilder(URI.create(
                                server.url() + "/apis/echo.example.com/v1/namespaces/default/things/one/stream"))
                        .header("Authorization", "Bearer " + nodeToken())
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        try (var lines =
                new java.io.BufferedReader(new java.io.InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
            assertThat(lines.readLine()).as("before the backend writes more").isEqualTo("first");
            firstChunkRead.countDown();
            assertThat(lines.readLine()).isEqualTo("second");
        }
    }

    @Test
    void aBackendThatIsGoneIsA503() throws Exception {
        server.client().resource("""
                        apiVersion: v1
                        kind: Service
                        metadata: {name: gone, namespace: default}
                        spec: {clusterIP: 127.0.0.1, ports: [{port: 1}]}
                        """).create();
        server.client().resource("""
                        apiVersion: apiregistration.k8s.io/v1
                        kind: APIService
                        metadata: {name: v1.gone.example.com}
                        spec:
                          group: gone.example.com
                          version: v1
                          service: {namespace: default, name: gone, port: 1}
                          insecureSkipTLSVerify: true
                          groupPriorityMinimum: 1000
                          versionPriority: 15
                        """).create();
        long begin = System.nanoTime();
        HttpResponse<String> answer = get(LocalApiServer.ADMIN_TOKEN, "/apis/gone.example.com/v1/things");
        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(answer.body()).contains("the server is currently unable to handle the request");
        assertThat(Duration.ofNanos(System.nanoTime() - begin)).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    void aBackendWhoseCertificateNamesAnotherServiceIsRefused() throws Exception {
        int port = backend.getAddress().getPort();
        server.client().resource("""
                        apiVersion: v1
                        kind: Service
                        metadata: {name: other, namespace: default}
                        spec: {clusterIP: 127.0.0.1, ports: [{port: 443, targetPort: %d}]}
                        """.formatted(port)).create();
        server.client().resource("""
                        apiVersion: apiregistration.k8s.io/v1
                        kind: APIService
                        metadata: {name: v1.other.example.com}
                        spec:
                          group: other.example.com
                          version: v1
                          service: {namespace: default, name: other, port: 443}
                          caBundle: %s
                          groupPriorityMinimum: 1000
                          versionPriority: 15
                        """.formatted(caBundle)).create();
        int before = calls.get();
        HttpResponse<String> answer = get(LocalApiServer.ADMIN_TOKEN, "/apis/other.example.com/v1/things");
        assertThat(answer.statusCode()).isEqualTo(503);
        assertThat(answer.body()).contains("other.default.svc");
        assertThat(calls.get()).isEqualTo(before);
    }
}
