package dev.drover.testing;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;

/**
 * fabric8's mock server in expectations mode (a test says what each request gets), and a client for it on the JDK's
 * HTTP client, as the agent's own raw writes use.
 */
public final class ExpectingApi implements AutoCloseable {

    private final KubernetesMockServer server = new KubernetesMockServer(false);
    private final KubernetesClient client;

    public ExpectingApi() {
        server.start();
        Config config;
        try (KubernetesClient mock = server.createClient()) {
            config = mock.getConfiguration();
        }
        client = new KubernetesClientBuilder()
                .withConfig(config)
                .withHttpClientFactory(new JdkHttpClientFactory())
                .build();
    }

    public KubernetesMockServer server() {
        return server;
    }

    public KubernetesClient client() {
        return client;
    }

    @Override
    public void close() {
        client.close();
        server.shutdown();
    }
}
