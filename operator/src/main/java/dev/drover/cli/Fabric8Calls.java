package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.api.v1alpha1.Allocation;
import dev.drover.cli.kube.Bodies;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** {@link ClusterCalls} on a fabric8 client: for a kubeconfig that the plugin's own client does not support. */
final class Fabric8Calls implements ClusterCalls {

    private final KubernetesClient client;

    Fabric8Calls(KubernetesClient client) {
        this.client = client;
    }

    @Override
    public String server() {
        return client.getMasterUrl().toString();
    }

    @Override
    public AllocationParts allocation(String namespace, String name) throws CommandFailure {
        try {
            return AllocationParts.of(client.resources(Allocation.class)
                    .inNamespace(namespace)
                    .withName(name)
                    .get());
        } catch (KubernetesClientException e) {
            throw ApiAnswers.failure(e, server());
        }
    }

    @Override
    public List<Event> events(String namespace, String name) throws CommandFailure {
        try {
            return client.v1()
                    .events()
                    .inNamespace(namespace)
                    .withField("involvedObject.kind", "Allocation")
                    .withField("involvedObject.name", name)
                    .list()
                    .getItems();
        } catch (KubernetesClientException e) {
            if (e.getCode() == 403) {
                return null;
            }
            throw ApiAnswers.failure(e, server());
        }
    }

    @Override
    public JsonNode metadataList(String pathAndQuery) throws CommandFailure {
        HttpClient http = client.getHttpClient();
        HttpRequest request = http.newHttpRequestBuilder()
                .uri(client.getConfiguration().getMasterUrl().replaceAll("/+$", "") + pathAndQuery)
                .header("Accept", DirectCalls.METADATA_LIST)
                .build();
        HttpResponse<InputStream> response = send(http, request, DirectCalls.REQUEST_TIMEOUT.toMillis());
        try (InputStream body = response.body()) {
            byte[] bytes = Bodies.read(body, DirectCalls.MAX_ANSWER, DirectCalls.REQUEST_TIMEOUT);
            if (response.code() != 200) {
                throw new CommandFailure(
                        ApiAnswers.failure(response.code(), new String(bytes, StandardCharsets.UTF_8)),
                        response.code());
            }
            return new ObjectMapper().readTree(bytes).path("items");
        } catch (IOException e) {
            throw new CommandFailure("reading the answer: " + e.getMessage());
        }
    }

    private HttpResponse<InputStream> send(HttpClient http, HttpRequest request, long millis) throws CommandFailure {
        try {
            return http.sendAsync(request, InputStream.class).get(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CommandFailure("interrupted");
        } catch (ExecutionException | TimeoutException e) {
            throw ApiAnswers.unreachable(client.getConfiguration().getMasterUrl(), e);
        }
    }

    @Override
    public void patch(String namespace, String name, String mergePatch) throws CommandFailure {
        try {
            client.resources(Allocation.class)
                    .inNamespace(namespace)
                    .withName(name)
                    .patch(PatchContext.of(PatchType.JSON_MERGE), mergePatch);
        } catch (KubernetesClientException e) {
            throw ApiAnswers.failure(e, server());
        }
    }

    @Override
    public String whoAmI() {
        try {
            GenericKubernetesResource review = client.genericKubernetesResources(
                            "authentication.k8s.io/v1", "SelfSubjectReview")
                    .resource(new GenericKubernetesResourceBuilder()
                            .withApiVersion("authentication.k8s.io/v1")
                            .withKind("SelfSubjectReview")
                            .withNewMetadata()
                            .endMetadata()
                            .build())
                    .create();
            Object status = review.getAdditionalProperties().get("status");
            if (status instanceof Map<?, ?> s
                    && s.get("userInfo") instanceof Map<?, ?> info
                    && info.get("username") instanceof String user
                    && !user.isEmpty()) {
                return user;
            }
            return null;
        } catch (KubernetesClientException e) {
            return null;
        }
    }

    @Override
    public <T> T agent(String method, String namespace, String alloc, String subresourceAndQuery, BodyReader<T> reader)
            throws CommandFailure {
        HttpClient http = client.getHttpClient();
        String url = client.getConfiguration().getMasterUrl().replaceAll("/+$", "") + ApiAnswers.API + "/namespaces/"
                + encode(namespace) + "/allocations/" + encode(alloc) + "/" + subresourceAndQuery;
        HttpRequest.Builder request = http.newHttpRequestBuilder().uri(url);
        if (method.equals("POST")) {
            request.post("application/json", new byte[0]);
        }
        HttpResponse<InputStream> response = send(http, request.build(), DirectCalls.AGENT_TIMEOUT.toMillis());
        try (InputStream body = response.body()) {
            if (response.code() != 200) {
                String text = new String(body.readNBytes(64 << 10), StandardCharsets.UTF_8);
                throw new CommandFailure(ApiAnswers.failure(response.code(), text), response.code());
            }
            return reader.read(body);
        } catch (IOException e) {
            throw new CommandFailure("reading the answer: " + e.getMessage());
        }
    }

    static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
