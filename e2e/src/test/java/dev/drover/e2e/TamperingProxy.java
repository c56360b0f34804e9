package dev.drover.e2e;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.drover.httpapi.TestCa;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.bouncycastle.asn1.x509.KeyPurposeId;

/**
 * A registry in front of a real one, over TLS from a CA of its own, that answers every request with the real
 * registry's answer, except that each blob has one byte changed: the same size, another digest. What a compromised
 * mirror or a network attacker would serve.
 */
final class TamperingProxy implements AutoCloseable {

    private final HttpsServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final HttpClient upstream;
    private final AtomicInteger tampered = new AtomicInteger();

    private TamperingProxy(HttpsServer server, HttpClient upstream) {
        this.server = server;
        this.upstream = upstream;
    }

    /** Serves {@code registryHost}'s content, tampered, at 127.0.0.1; its CA is written to {@code caFile}. */
    static TamperingProxy start(String registryHost, SSLContext registryTls, Path caFile) throws Exception {
        TestCa ca = new TestCa("tampering-proxy");
        ca.writePem(caFile);
        TestCa.Leaf leaf = ca.signServer("127.0.0.1", KeyPurposeId.id_kp_serverAuth);
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("proxy", leaf.key(), new char[0], new Certificate[] {leaf.certificate()});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(kmf.getKeyManagers(), null, null);

        HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(tls));
        TamperingProxy proxy = new TamperingProxy(
                server,
                HttpClient.newBuilder()
                        .sslContext(registryTls)
                        .followRedirects(HttpClient.Redirect.NORMAL)
                        .build());
        server.setExecutor(proxy.executor);
        server.createContext("/", exchange -> {
            try (exchange) {
                HttpRequest.Builder forward = HttpRequest.newBuilder(
                                URI.create("https://" + registryHost + exchange.getRequestURI()))
                        .method(exchange.getRequestMethod(), HttpRequest.BodyPublishers.noBody());
                for (String header : List.of("Accept", "Authorization")) {
                    for (String value : exchange.getRequestHeaders().getOrDefault(header, List.of())) {
                        forward.header(header, value);
                    }
                }
                HttpResponse<byte[]> answer =
                        proxy.upstream.send(forward.build(), HttpResponse.BodyHandlers.ofByteArray());
                byte[] body = answer.body();
                if (exchange.getRequestURI().getPath().contains("/blobs/") && body.length > 0) {
                    body[body.length / 2] ^= 0x01;
                    proxy.tampered.incrementAndGet();
                }
                for (String header : List.of("Content-Type", "Docker-Content-Digest", "WWW-Authenticate")) {
                    answer.headers()
                            .firstValue(header)
                            .ifPresent(v -> exchange.getResponseHeaders().set(header, v));
                }
                boolean head = exchange.getRequestMethod().equals("HEAD");
                exchange.sendResponseHeaders(answer.statusCode(), head || body.length == 0 ? -1 : body.length);
                if (!head) {
                    try (OutputStream out = exchange.getResponseBody()) {
                        out.write(body);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
        });
        server.start();
        return proxy;
    }

    String host() {
        return "127.0.0.1:" + server.getAddress().getPort();
    }

    /** How many blobs it has served changed. */
    int tampered() {
        return tampered.get();
    }

    @Override
    public void close() {
        server.stop(0);
        upstream.close();
        executor.close();
    }
}
