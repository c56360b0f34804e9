package dev.drover.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import dev.drover.kube.Pem;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The plugin's own client against an API server over TLS that wants a client certificate (openssl's PKI: an EC CA,
 * the server's SEC1 key, the client's PKCS#1 RSA key), as kubeadm's and kind's clusters are.
 */
class DirectTlsTest {

    static final String ALLOC = "/apis/drover.dev/v1alpha1/namespaces/team-a/allocations/web";

    @TempDir
    Path dir;

    HttpsServer server;
    final Map<String, String> clientOf = new ConcurrentHashMap<>();

    @BeforeEach
    void start() throws Exception {
        new dev.drover.cli.kube.Openssl(dir).pki();
        serve("server.crt");
    }

    /** Serves with {@code certificate} (server.key's) until {@link #stop}. */
    void serve(String certificate) throws Exception {
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry(
                "server",
                Pem.privateKey(Files.readAllBytes(dir.resolve("server.key")), "server key"),
                new char[0],
                Pem.certificates(Files.readAllBytes(dir.resolve(certificate)), "server certificate")
                        .toArray(X509Certificate[]::new));
        KeyManagerFactory km = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        km.init(keys, new char[0]);
        KeyStore cas = KeyStore.getInstance("PKCS12");
        cas.load(null, null);
        cas.setCertificateEntry(
                "ca",
                Pem.certificates(Files.readAllBytes(dir.resolve("ca.crt")), "ca")
                        .getFirst());
        TrustManagerFactory tm = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tm.init(cas);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(km.getKeyManagers(), tm.getTrustManagers(), null);
        server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
        server.setHttpsConfigurator(new HttpsConfigurator(tls) {
            @Override
            public void configure(HttpsParameters params) {
                var p = getSSLContext().getDefaultSSLParameters();
                p.setWantClientAuth(true);
                params.setSSLParameters(p);
            }
        });
        server.createContext("/", x -> {
            String user;
            try {
                user = ((X509Certificate) ((HttpsExchange) x).getSSLSession().getPeerCertificates()[0])
                        .getSubjectX500Principal()
                        .getName();
            } catch (SSLPeerUnverifiedException e) {
                user = null;
            }
            x.getRequestBody().readAllBytes();
            int code;
            String body;
            if (user == null) {
                code = 401;
                body = "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"Unauthorized\",\"code\":401}";
            } else if (x.getRequestURI().getPath().equals(ALLOC)) {
                clientOf.put("alloc", user);
                code = 200;
                body = """
                        {"metadata": {"name": "web", "namespace": "team-a", "uid": "u1"},
                         "spec": {"nodeName": "n1", "tasks": [{"name": "main", "driver": "mock"}]},
                         "status": {"clientStatus": "Running", "taskStates": {"main": {"state": "Running"}}}}""";
            } else if (x.getRequestURI().getPath().equals("/api/v1/namespaces/team-a/events")) {
                code = 403;
                body = "{\"kind\":\"Status\",\"message\":\"events is forbidden\",\"code\":403}";
            } else {
                code = 404;
                body = "{\"kind\":\"Status\",\"message\":\"not found\",\"reason\":\"NotFound\",\"code\":404}";
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(code, bytes.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    Path kubeconfig(String cluster, String user) throws Exception {
        Path file = dir.resolve("kubeconfig");
        Files.writeString(file, """
                clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", %s}}]
                users: [{name: u, user: {%s}}]
                contexts: [{name: x, context: {cluster: c, user: u, namespace: team-a}}]
                current-context: x
                """.formatted(server.getAddress().getPort(), cluster, user));
        return file;
    }

    @Test
    void statusIsReadWithTheClientCertificateOverVerifiedTls() throws Exception {
        Path k = kubeconfig("certificate-authority: ca.crt", "client-certificate: client.crt, client-key: client.key");
        KubectlDroverTest.Run r = KubectlDroverTest.run("status", "web", "--kubeconfig", k.toString());
        assertThat(r.err()).isEmpty();
        assertThat(r.exit()).isZero();
        assertThat(r.out())
                .contains("Name               = web", "Task \"main\" is \"Running\"")
                .contains("Not shown: you may not list Events in namespace team-a");
        assertThat(clientOf).containsEntry("alloc", "CN=alice");
    }

    @Test
    void tlsServerNameIsTheNameTheCertificateMustCarry() throws Exception {
        Path good = kubeconfig(
                "certificate-authority: ca.crt, tls-server-name: api.example",
                "client-certificate: client.crt, client-key: client.key");
        assertThat(KubectlDroverTest.run("status", "web", "--kubeconfig", good.toString())
                        .exit())
                .isZero();
        Path wrong = kubeconfig(
                "certificate-authority: ca.crt, tls-server-name: other.example",
                "client-certificate: client.crt, client-key: client.key");
        KubectlDroverTest.Run r = KubectlDroverTest.run("status", "web", "--kubeconfig", wrong.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err())
                .startsWith("kubectl drover: cannot reach the API server at https://127.0.0.1:")
                .contains("TLS failed");
    }

    /** The JDK checks the host against the certificate: one the CA signed for another name is refused. */
    @Test
    void aCertificateTheCaSignedForAnotherNameIsRefused() throws Exception {
        server.stop(0);
        serve("named.crt");
        String user = "client-certificate: client.crt, client-key: client.key";
        KubectlDroverTest.Run r = KubectlDroverTest.run(
                "status",
                "web",
                "--kubeconfig",
                kubeconfig("certificate-authority: ca.crt", user).toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.err())
                .startsWith("kubectl drover: cannot reach the API server at https://127.0.0.1:")
                .contains("TLS failed")
                .hasLineCount(1);
        assertThat(clientOf).isEmpty();
        Path named = kubeconfig("certificate-authority: ca.crt, tls-server-name: api.example", user);
        assertThat(KubectlDroverTest.run("status", "web", "--kubeconfig", named.toString())
                        .exit())
                .as("the certificate is good for the name it carries")
                .isZero();
    }

    @Test
    void anUntrustedServerOrNoCertificateIsRefusedInOneSentence() throws Exception {
        Path noCa = kubeconfig("insecure-skip-tls-verify: false", "token: t");
        KubectlDroverTest.Run untrusted = KubectlDroverTest.run("status", "web", "--kubeconfig", noCa.toString());
        assertThat(untrusted.exit()).isEqualTo(1);
        assertThat(untrusted.err()).contains("(TLS failed: ").hasLineCount(1);

        Path insecure = kubeconfig("insecure-skip-tls-verify: true", "token: t");
        KubectlDroverTest.Run anonymous = KubectlDroverTest.run("status", "web", "--kubeconfig", insecure.toString());
        assertThat(anonymous.exit()).isEqualTo(1);
        assertThat(anonymous.err())
                .isEqualTo("kubectl drover: the API server does not accept your credentials (check the kubeconfig's"
                        + " user, or --token): Unauthorized (HTTP 401)\n");
        assertThat(List.of(anonymous.out())).containsExactly("");
    }
}
