package dev.drover.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.common.UserText;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.IOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Writes whose answer the agent does not need: a status patch (answered with the whole allocation) and an Event's
 * create or patch. They go through the Kubernetes client's own HTTP client (its server, TLS, credentials and token
 * refresh, its retries, its request timeout), and the answer is read but not parsed: the client's typed calls would
 * bind each answer to its model, which cost the agent as much CPU as the write itself. (The API server's
 * {@code Warning} headers, which the typed calls log, are not read.) A refusal throws a {@link KubernetesClientException}
 * with the code and the API server's message, cut and escaped.
 */
public final class RawWrites {

    /** The longest refusal body whose message is read. */
    private static final int MAX_ERROR_BYTES = 16 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * What Kubernetes names and API paths are made of, each segment beginning with a letter or digit: nothing that
     * would end the path, need escaping or walk out of it ({@code ..}).
     */
    private static final Pattern PATH = Pattern.compile("(/[a-z0-9][a-z0-9.-]*)+");

    private final KubernetesClient client;
    private final String base;

    public RawWrites(KubernetesClient client) {
        this.client = client;
        String master = client.getConfiguration().getMasterUrl();
        this.base = master.endsWith("/") ? master.substring(0, master.length() - 1) : master;
    }

    /**
     * Sends {@code body} to {@code path} (below the API server's URL, from names the API's grammar allows, so
     * nothing in it needs escaping) with {@code method}; returns the answer's code when it is 2xx. Every failure,
     * a path refused here included, is a {@link KubernetesClientException}, as the typed calls throw.
     */
    public int send(String method, String path, String contentType, String body) {
        if (!PATH.matcher(path).matches()) {
            throw new KubernetesClientException("not a path of the API's names: " + UserText.quote(path));
        }
        HttpRequest.Builder builder = client.getHttpClient()
                .newHttpRequestBuilder()
                .uri(base + path)
                .header("Accept", "application/json")
                .method(method, contentType, body);
        int timeout = client.getConfiguration().getRequestTimeout();
        if (timeout > 0) {
            builder.timeout(timeout, TimeUnit.MILLISECONDS);
        }
        HttpResponse<byte[]> response;
        try {
            // read whole: the client's request timeout then covers the body too, as for the typed calls (a stream
            // would be handed over at the headers, and a server trickling the rest would hold the writer)
            response = client.getHttpClient()
                    .sendAsync(builder.build(), byte[].class)
                    .get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KubernetesClientException(method + " " + path + " interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof KubernetesClientException k) {
                throw k; // keeps its code
            }
            throw new KubernetesClientException(method + " " + path + " failed: " + e.getCause(), e.getCause());
        } catch (RuntimeException e) {
            throw new KubernetesClientException(method + " " + path + " failed: " + e, e);
        }
        if (response.isSuccessful()) {
            return response.code();
        }
        byte[] error = response.body() == null ? new byte[0] : response.body();
        throw new KubernetesClientException(
                method + " " + path + ": HTTP " + response.code() + message(error), response.code(), null);
    }

    /** A namespace or name for a path; a missing one is refused as the API server would refuse it. */
    public static String named(String what, String value) {
        if (value == null || value.isEmpty()) {
            throw new KubernetesClientException("no " + what + " to write to");
        }
        return value;
    }

    /** The API server's message in a refusal (a {@code Status}); none when the body is no such JSON. */
    private static String message(byte[] body) {
        if (body.length > MAX_ERROR_BYTES) {
            return ""; // no Status is this long: not parsed
        }
        try {
            JsonNode status = JSON.readTree(body);
            String message = status == null ? "" : status.path("message").asText("");
            return message.isBlank() ? "" : ": " + UserText.cutEscaped(message, 300);
        } catch (IOException e) {
            return "";
        }
    }
}
