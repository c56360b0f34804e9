package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.cli.kube.Bodies;
import dev.drover.cli.kube.KubeClient;
import io.fabric8.kubernetes.api.model.Event;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * {@link ClusterCalls} on the plugin's own {@link KubeClient}: plain HTTP requests, the answers read as Jackson trees
 * into the model classes fabric8's client would fill ({@link AllocationJson}). Answers are bounded ({@link #MAX_ANSWER}),
 * and so is the time to read them (a server trickling its answer does not hold the command);
 * a refusal's text is the API server's Status message, cleaned.
 */
final class DirectCalls implements ClusterCalls {

    /** How long the aggregated API's answer may take to begin (stats take a quarter of a second to measure CPU). */
    static final Duration AGENT_TIMEOUT = Duration.ofSeconds(30);
    /** As fabric8's default request timeout. */
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
    /** An allocation, or a list of its Events, is far smaller; a larger answer is not read. */
    static final int MAX_ANSWER = 8 << 20;

    private static final String MERGE_PATCH = "application/merge-patch+json";
    /** Metadata only where the API server can (1.15+), else the whole list. */
    static final String METADATA_LIST =
            "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io, application/json;q=0.9";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final KubeClient client;
    private final Duration requestTimeout;

    DirectCalls(KubeClient client) {
        this(client, REQUEST_TIMEOUT);
    }

    /** {@code requestTimeout}: how long an answer may take to begin, and then to arrive whole. */
    DirectCalls(KubeClient client, Duration requestTimeout) {
        this.client = client;
        this.requestTimeout = requestTimeout;
    }

    @Override
    public String server() {
        return client.target().serverText();
    }

    private static String allocationPath(String namespace, String name) {
        return "/apis/drover.dev/v1alpha1/namespaces/" + encode(namespace) + "/allocations/" + encode(name);
    }

    @Override
    public AllocationParts allocation(String namespace, String name) throws CommandFailure {
        try (KubeClient.Answer a = send("GET", allocationPath(namespace, name), null, null, requestTimeout)) {
            if (a.code() == 404) {
                return null;
            }
            byte[] body = a.bytes(MAX_ANSWER);
            if (a.code() != 200) {
                throw refusal(a.code(), body);
            }
            return AllocationJson.allocation(tree(body));
        } catch (IOException e) {
            throw reading(e);
        }
    }

    @Override
    public List<Event> events(String namespace, String name) throws CommandFailure {
        String selector = "involvedObject.kind=Allocation,involvedObject.name=" + name;
        String path = "/api/v1/namespaces/" + encode(namespace) + "/events?fieldSelector=" + encode(selector);
        try (KubeClient.Answer a = send("GET", path, null, null, requestTimeout)) {
            if (a.code() == 403) {
                return null;
            }
            byte[] body = a.bytes(MAX_ANSWER);
            if (a.code() != 200) {
                throw refusal(a.code(), body);
            }
            return AllocationJson.events(tree(body));
        } catch (IOException e) {
            throw reading(e);
        }
    }

    @Override
    public JsonNode metadataList(String pathAndQuery) throws CommandFailure {
        try (KubeClient.Answer a =
                call(() -> client.send("GET", pathAndQuery, METADATA_LIST, null, null, requestTimeout))) {
            byte[] body = a.bytes(MAX_ANSWER);
            if (a.code() != 200) {
                throw refusal(a.code(), body);
            }
            return tree(body).path("items");
        } catch (IOException e) {
            throw reading(e);
        }
    }

    @Override
    public void patch(String namespace, String name, String mergePatch) throws CommandFailure {
        byte[] patch = mergePatch.getBytes(StandardCharsets.UTF_8);
        try (KubeClient.Answer a = send("PATCH", allocationPath(namespace, name), MERGE_PATCH, patch, requestTimeout)) {
            byte[] body = a.bytes(MAX_ANSWER);
            if (a.code() != 200) {
                throw refusal(a.code(), body);
            }
        } catch (IOException e) {
            throw reading(e);
        }
    }

    @Override
    public String whoAmI() {
        byte[] review = "{\"apiVersion\":\"authentication.k8s.io/v1\",\"kind\":\"SelfSubjectReview\",\"metadata\":{}}"
                .getBytes(StandardCharsets.UTF_8);
        try (KubeClient.Answer a = send(
                "POST",
                "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                "application/json",
                review,
                requestTimeout)) {
            if (a.code() != 200 && a.code() != 201) {
                return null;
            }
            String user = JSON.readTree(a.bytes(MAX_ANSWER))
                    .path("status")
                    .path("userInfo")
                    .path("username")
                    .asText("");
            return user.isEmpty() ? null : user;
        } catch (IOException | CommandFailure e) {
            return null; // an API server older than 1.28, or one that cannot say: the restart names no one
        }
    }

    @Override
    public <T> T agent(String method, String namespace, String alloc, String subresourceAndQuery, BodyReader<T> reader)
            throws CommandFailure {
        String path = ApiAnswers.API + "/namespaces/" + encode(namespace) + "/allocations/" + encode(alloc) + "/"
                + subresourceAndQuery;
        try (KubeClient.Answer a =
                send(method, path, method.equals("POST") ? "application/json" : null, null, AGENT_TIMEOUT)) {
            if (a.code() != 200) {
                String text = new String(Bodies.head(a.body(), 64 << 10, AGENT_TIMEOUT), StandardCharsets.UTF_8);
                throw new CommandFailure(ApiAnswers.failure(a.code(), text), a.code());
            }
            return reader.read(a.body());
        } catch (IOException e) {
            throw reading(e);
        }
    }

    /** The answer as a JSON tree; what is not a JSON object is a failure that says so. */
    private static JsonNode tree(byte[] body) throws IOException {
        JsonNode tree = JSON.readTree(body);
        if (tree == null || !tree.isObject()) {
            throw new IOException("not a JSON object");
        }
        return tree;
    }

    private KubeClient.Answer send(String method, String path, String type, byte[] body, Duration timeout)
            throws CommandFailure {
        return call(() -> client.send(method, path, type, body, timeout));
    }

    /** One request to the API server. */
    @FunctionalInterface
    private interface Request {
        KubeClient.Answer send() throws IOException, InterruptedException;
    }

    /** {@code request}'s answer; being interrupted or not reaching the server is a failure saying so. */
    private KubeClient.Answer call(Request request) throws CommandFailure {
        try {
            return request.send();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CommandFailure("interrupted");
        } catch (IOException e) {
            throw ApiAnswers.unreachable(server(), e);
        }
    }

    /** A refusal other than those a call expects: the Status's message and the HTTP status, as fabric8's path says. */
    private static CommandFailure refusal(int code, byte[] body) {
        String message = null;
        try {
            JsonNode status = JSON.readTree(body);
            message = status == null ? null : status.path("message").asText(null);
        } catch (IOException e) {
            // not a Status: the text itself
        }
        if (message == null || message.isEmpty()) {
            message = new String(body, 0, Math.min(body.length, 4096), StandardCharsets.UTF_8).strip();
        }
        if (message.isEmpty()) {
            message = "the API server refused";
        }
        message = TerminalText.clean(message.length() > 2048 ? message.substring(0, 2048) + "..." : message);
        return new CommandFailure(message + " (HTTP " + code + ")", code);
    }

    private static CommandFailure reading(IOException e) {
        return new CommandFailure(
                "reading the API server's answer: " + TerminalText.clean(String.valueOf(e.getMessage())));
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
