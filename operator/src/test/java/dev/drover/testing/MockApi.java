package dev.drover.testing;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** fabric8's CRUD mock server with the Allocation CRD installed, and a client for it. */
public final class MockApi implements AutoCloseable {

    private final KubernetesMockServer server;
    private final KubernetesClient client;

    public MockApi() throws IOException {
        server = new KubernetesMockServer(
                new Context(),
                new MockWebServer(),
                new HashMap<>(),
                new KubernetesCrudDispatcher(new ArrayList<>()),
                false);
        server.init(InetAddress.getLoopbackAddress(), 0);
        client = server.createClient(new JdkHttpClientFactory());
        try (InputStream crd = MockApi.class.getResourceAsStream("/META-INF/fabric8/allocations.drover.dev-v1.yml")) {
            client.resource(client.getKubernetesSerialization().unmarshal(crd, CustomResourceDefinition.class))
                    .create();
        }
    }

    public KubernetesClient client() {
        return client;
    }

    /**
     * The write requests (every method but GET) the server received since the last call, oldest first, as
     * {@code "METHOD path"} (the path with its query).
     */
    public List<String> takeWrites() throws InterruptedException {
        List<String> writes = new ArrayList<>();
        for (RecordedRequest r; (r = server.takeRequest(1, TimeUnit.MILLISECONDS)) != null; ) {
            if (!r.getMethod().equals("GET")) {
                writes.add(r.getMethod() + " " + r.getPath());
            }
        }
        return writes;
    }

    @Override
    public void close() {
        client.close();
        server.destroy();
    }
}
