package dev.drover.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class VirtualThreadHttpClientsTest {

    private static final int BURST = 24;

    private HttpServer server;
    private URI uri;

    @BeforeEach
    void slowServer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), BURST);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", exchange -> {
            try {
                Thread.sleep(200); // every answer of the burst is in flight at once
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            byte[] body = "ok".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void aBurstOfRequestsStartsNoPlatformThreadBesidesTheSelector() throws Exception {
        Set<String> grown = burst(new VirtualThreadHttpClients());
        // the JVM's own schedulers (virtual threads' carriers, the common pool) are shared and bounded by the cores
        assertThat(grown.stream()
                        .filter(name -> !name.startsWith("ForkJoinPool") && !name.startsWith("VirtualThread-")))
                .singleElement()
                .matches(name -> name.matches("HttpClient-\\d+-SelectorManager"), "the client's selector");
    }

    @Test
    void fabric8sOwnFactoryStartsAPlatformThreadPerAnswerInFlight() throws Exception {
        // what the agent's factory replaces: fabric8's cached pool grows with the burst and keeps its threads
        Set<String> grown = burst(new JdkHttpClientFactory());
        assertThat(grown.stream().filter(name -> name.startsWith("JdkHttpClientFactory-")))
                .hasSizeGreaterThan(1);
    }

    /** The names of the platform threads started while {@code factory}'s client answered a burst of requests. */
    private Set<String> burst(HttpClient.Factory factory) throws Exception {
        Set<Thread> before = platformThreads();
        HttpClient.Builder builder = factory.newBuilder();
        try (HttpClient client = builder.build()) {
            List<CompletableFuture<HttpResponse<String>>> answers = IntStream.range(0, BURST)
                    .mapToObj(i -> client.sendAsync(
                            client.newHttpRequestBuilder().uri(uri).build(), String.class))
                    .toList();
            for (CompletableFuture<HttpResponse<String>> answer : answers) {
                assertThat(answer.get().body()).isEqualTo("ok");
            }
            Set<Thread> after = platformThreads();
            after.removeAll(before);
            return after.stream().map(Thread::getName).collect(Collectors.toSet());
        }
    }

    private static Set<Thread> platformThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> !t.isVirtual())
                .collect(Collectors.toSet());
    }
}
