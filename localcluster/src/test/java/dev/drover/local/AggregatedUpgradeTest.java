package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.execstream.Channels;
import dev.drover.execstream.ExecSession;
import dev.drover.httpapi.AgentCertificate;
import dev.drover.web.ClientSocket;
import dev.drover.web.JettyHttps;
import dev.drover.web.MessageReceiver;
import dev.drover.web.MessageSocket;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A WebSocket upgrade of an aggregated path (what {@code kubectl drover exec} sends): authorized by the local server
 * as the GET it is, then relayed message by message to a backend that gets the caller's identity from the front
 * proxy, as for any aggregated request.
 */
class AggregatedUpgradeTest {

    static LocalApiServer server;
    static JettyHttps backend;
    static HttpClient http;

    @BeforeAll
    static void start() throws Exception {
        server = LocalApiServer.start(LocalApiServer.Options.defaults().withNodes(List.of("local")));
        http = HttpClient.newBuilder().sslContext(server.trust()).build();
        var cm = server.client()
                .configMaps()
                .inNamespace("kube-system")
                .withName("extension-apiserver-authentication")
                .get();
        X509Certificate proxyCa = (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(
                        cm.getData().get("requestheader-client-ca-file").getBytes(StandardCharsets.US_ASCII)));
        AgentCertificate.Identity identity =
                AgentCertificate.create("ws.default.svc", List.of(InetAddress.getLoopbackAddress()), Instant.now());
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("front-proxy-ca", proxyCa);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext backendTls = SSLContext.getInstance("TLS");
        backendTls.init(AggregatorTest.keyManagers(identity), tmf.getTrustManagers(), null);
        // echoes on stdout who the front proxy says is calling, and what it sent on stdin, then ends with exit 7
        backend = JettyHttps.start(
                "ws-backend",
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
                16,
                backendTls,
                true,
                ex -> ex.send(404, "text/plain", new byte[0]),
                List.of(new JettyHttps.Upgrade(".*", (request, response, callback) -> {
                    X509Certificate[] peer = JettyHttps.peerCertificates(request);
                    String who = "peer="
                            + (peer == null
                                    ? "none"
                                    : peer[0].getSubjectX500Principal().getName())
                            + " user=" + request.getHeaders().get("X-Remote-User")
                            + " groups=" + request.getHeaders().getValuesList("X-Remote-Group")
                            + " authorization=" + request.getHeaders().contains("Authorization")
                            + " query=" + request.getHttpURI().getQuery() + "\n";
                    response.setAcceptedSubProtocol(Channels.V5);
                    return new MessageSocket(new MessageReceiver() {
                        ExecSession.Peer peer;

                        @Override
                        public void opened(ExecSession.Peer p) {
                            peer = p;
                            byte[] b = who.getBytes(StandardCharsets.UTF_8);
                            send(Channels.message(Channels.STDOUT, b, 0, b.length));
                        }

                        @Override
                        public void message(ByteBuffer message, Runnable done) {
                            ByteBuffer echo = message.duplicate();
                            echo.put(0, (byte) Channels.STDOUT);
                            Thread.ofVirtual().start(() -> {
                                send(echo);
                                byte[] status = dev.drover.execstream.ExecStatus.exited(7)
                                        .getBytes(StandardCharsets.UTF_8);
                                send(Channels.message(Channels.ERROR, status, 0, status.length));
                                peer.close(null);
                                done.run();
                            });
                        }

                        private void send(ByteBuffer m) {
                            try {
                                peer.send(m);
                            } catch (IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        }

                        @Override
                        public void closed(String why) {}
                    });
                })));
        server.client().resource("""
                        apiVersion: v1
                        kind: Service
                        metadata: {name: ws, namespace: default}
                        spec: {clusterIP: 127.0.0.1, ports: [{port: 443, targetPort: %d}]}
                        """.formatted(backend.port())).create();
        String caBundle = Base64.getEncoder()
                .encodeToString(FrontProxy.pem(identity.certificate()).getBytes(StandardCharsets.US_ASCII));
        server.client().resource("""
                        apiVersion: apiregistration.k8s.io/v1
                        kind: APIService
                        metadata: {name: v1.ws.example.com}
                        spec:
                          group: ws.example.com
                          version: v1
                          service: {namespace: default, name: ws, port: 443}
                          caBundle: %s
                          groupPriorityMinimum: 1000
                          versionPriority: 15
                        """.formatted(caBundle)).create();
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: ClusterRole
                        metadata: {name: ws-exec}
                        rules:
                        - {apiGroups: [ws.example.com], resources: [things/exec], verbs: [get]}
                        """).create();
        server.client().resource("""
                        apiVersion: rbac.authorization.k8s.io/v1
                        kind: ClusterRoleBinding
                        metadata: {name: ws-exec}
                        roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ws-exec}
                        subjects:
                        - {kind: ServiceAccount, name: default, namespace: default}
                        """).create();
    }

    @AfterAll
    static void stop() {
        if (backend != null) {
            backend.close();
        }
        if (http != null) {
            http.close();
        }
        if (server != null) {
            server.close();
        }
    }

    ClientSocket open(String path, MessageReceiver receiver) throws Exception {
        return ClientSocket.open(
                http,
                URI.create(server.url().toString().replace("https:", "wss:") + path),
                Map.of("Authorization", "Bearer " + AggregatorTest.nodeToken(server)),
                Channels.PROTOCOLS,
                receiver,
                Duration.ofSeconds(10));
    }

    @Test
    void anUpgradeIsRelayedWithTheCallersIdentityBothWays() throws Exception {
        BlockingQueue<String> stdout = new LinkedBlockingQueue<>();
        CountDownLatch closed = new CountDownLatch(1);
        StringBuilder status = new StringBuilder();
        ClientSocket s = open(
                "/apis/ws.example.com/v1/namespaces/default/things/one/exec?command=cat&stdin=true",
                new MessageReceiver() {
                    @Override
                    public void opened(ExecSession.Peer peer) {}

                    @Override
                    public void message(ByteBuffer message, Runnable done) {
                        String text = new String(message.array(), 1, message.remaining() - 1, StandardCharsets.UTF_8);
                        if (message.get(0) == Channels.STDOUT) {
                            stdout.add(text);
                        } else {
                            status.append(text);
                        }
                        done.run();
                    }

                    @Override
                    public void closed(String why) {
                        closed.countDown();
                    }
                });
        assertThat(s.protocol()).isEqualTo(Channels.V5);
        assertThat(stdout.poll(10, TimeUnit.SECONDS))
                .isEqualTo("peer=CN=front-proxy-client user=system:serviceaccount:default:default"
                        + " groups=[system:serviceaccounts, system:serviceaccounts:default, system:authenticated]"
                        + " authorization=false query=command=cat&stdin=true\n");
        byte[] hi = "hi".getBytes(StandardCharsets.UTF_8);
        s.send(Channels.message(Channels.STDIN, hi, 0, hi.length));
        assertThat(stdout.poll(10, TimeUnit.SECONDS)).isEqualTo("hi");
        assertThat(closed.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(status.toString()).contains("\"message\":\"7\"");
    }

    @Test
    void theServerAuthorizesTheUpgradeAsTheGetItIs() {
        assertThatThrownBy(() -> open("/apis/ws.example.com/v1/namespaces/default/things/one/attach", null))
                .isInstanceOfSatisfying(ClientSocket.Refused.class, r -> {
                    assertThat(r.status()).isEqualTo(403);
                    assertThat(r.body()).contains("cannot get resource \\\"things/attach\\\"");
                });
    }
}
