package dev.drover.web;

import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.net.http.HttpClient;
import java.util.concurrent.Executors;

/**
 * fabric8's JDK HTTP client factory whose clients run their asynchronous work (reading answers and watch streams,
 * completing requests) on virtual threads instead of fabric8's cached pool of platform threads. In a burst the pool
 * grew to one platform thread per request in flight and kept them for a minute: 68 of them in the agent after a
 * thousand allocations arrived, each with its stack and its share of the C library's heaps. Nothing is left to
 * shut down: a virtual thread ends with its task, and each client still has its one selector thread. Its TLS offers
 * the cipher suites in the order {@link CipherPreference} gives.
 */
public final class VirtualThreadHttpClients extends JdkHttpClientFactory {

    @Override
    protected HttpClient.Builder createNewHttpClientBuilder() {
        return HttpClient.newBuilder()
                .executor(Executors.newThreadPerTaskExecutor(
                        Thread.ofVirtual().name("kube-http-", 0).factory()));
    }

    @Override
    protected void additionalConfig(HttpClient.Builder builder) {
        builder.sslParameters(CipherPreference.forClients());
    }
}
