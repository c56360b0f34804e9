package dev.drover.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.drover.common.UserText;
import dev.drover.web.OwnedHttpClients;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One try at the API server, with the agent's own credentials, asking what the agent needs first: the Allocations of
 * its node ({@code limit=1}). It has a client of its own that does not retry (the agent's would, silently, for about
 * 20 s) and gives up on a connection after {@link ApiServerWait#CONNECT_TIMEOUT}, so the waiting agent says what went wrong at
 * every try.
 */
final class ApiServerProbe implements ApiServerWait.Probe, AutoCloseable {

    /** The most of an error answer read for its Status message. */
    static final int MAX_ERROR_BYTES = 16 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();

    private final OwnedHttpClients http = new OwnedHttpClients();
    private final KubernetesClient client;
    private final String url;

    /** @param config the agent's client configuration; changed here (no retries, short timeouts): load one for it */
    ApiServerProbe(Config config, String nodeName, boolean fieldSelector) {
        config.setRequestRetryBackoffLimit(0);
        config.setConnectionTimeout((int) ApiServerWait.CONNECT_TIMEOUT.toMillis());
        config.setRequestTimeout((int) ApiServerWait.REQUEST_TIMEOUT.toMillis());
        this.client = new KubernetesClientBuilder()
                .withConfig(config)
                .withHttpClientFactory(http)
                .build();
        String master = config.getMasterUrl();
        String base = master.endsWith("/") ? master : master + "/";
        this.url = base + "apis/drover.dev/v1alpha1/allocations?limit=1"
                + (fieldSelector
                        ? "&fieldSelector=" + URLEncoder.encode("spec.nodeName=" + nodeName, StandardCharsets.UTF_8)
                        : "");
    }

    @Override
    public String server() {
        return client.getConfiguration().getMasterUrl();
    }

    @Override
    public CompletableFuture<ApiServerWait.Answer> ask() {
        HttpRequest request = client.getHttpClient()
                .newHttpRequestBuilder()
                .uri(url)
                .header("Accept", "application/json")
                .timeout(ApiServerWait.REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .build();
        return client.getHttpClient().sendAsync(request, InputStream.class).thenApply(ApiServerProbe::answer);
    }

    private static ApiServerWait.Answer answer(HttpResponse<InputStream> response) {
        try (InputStream body = response.body()) {
            if (response.code() >= 200 && response.code() < 300) {
                return new ApiServerWait.Answer(response.code(), "");
            }
            return new ApiServerWait.Answer(
                    response.code(), statusMessage(body == null ? new byte[0] : body.readNBytes(MAX_ERROR_BYTES)));
        } catch (IOException e) {
            return new ApiServerWait.Answer(response.code(), "");
        }
    }

    private static String statusMessage(byte[] body) {
        try {
            JsonNode status = JSON.readTree(body);
            String message = status == null ? "" : status.path("message").asText("");
            return message.isBlank()
                    ? ""
                    : UserText.cut(message.replaceAll("\\p{Cntrl}", " ").strip(), 300);
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() {
        client.close();
        http.shutdown(); // the JDK client's selector thread too, which would outlive the probe in the agent
    }
}
