package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import javax.net.ssl.SSLException;

/** Where the aggregated API is, and what its answers other than success mean, in one sentence for a user. */
final class ApiAnswers {

    static final String API = "/apis/agent.drover.dev/v1alpha1";
    static final String GATEWAY_MISSING =
            "the Drover gateway is not installed (APIService v1alpha1.agent.drover.dev): install the chart with"
                    + " gateway.enabled=true (docs/install.md)";

    private static final ObjectMapper JSON = new ObjectMapper();

    private ApiAnswers() {}

    /** What an answer other than success means, in one sentence. */
    static String failure(int code, String body) {
        String message;
        String reason = "";
        try {
            JsonNode status = JSON.readTree(body);
            message = status.path("message").asText(body);
            reason = status.path("reason").asText("");
        } catch (IOException e) {
            message = body;
        }
        message = TerminalText.clean(message.length() > 2048 ? message.substring(0, 2048) + "..." : message);
        // the API server's own 404 for a group it does not serve, before any allocation is looked at
        if (code == 404
                && (reason.isEmpty() || message.contains("the server could not find the requested resource"))
                && !message.contains("allocation")) {
            return GATEWAY_MISSING;
        }
        if (code == 503 && message.contains("v1alpha1.agent.drover.dev")) {
            return "the Drover gateway does not answer (APIService v1alpha1.agent.drover.dev is unavailable): "
                    + message;
        }
        return message + " (HTTP " + code + ")";
    }

    /** A refusal of the fabric8 client (code and Status), or its failure to reach the API server, in one sentence. */
    static CommandFailure failure(KubernetesClientException e, String server) {
        if (e.getCode() <= 0) {
            return unreachable(server, e);
        }
        String message = e.getStatus() != null && e.getStatus().getMessage() != null
                ? e.getStatus().getMessage()
                : e.getMessage();
        message = TerminalText.clean(message.length() > 2048 ? message.substring(0, 2048) + "..." : message);
        return new CommandFailure(message + " (HTTP " + e.getCode() + ")", e.getCode());
    }

    /** The API server at {@code server} did not answer: why, in a few words, and what to look at. */
    static CommandFailure unreachable(String server, Throwable failure) {
        String why = null;
        // the JDK's client says ConnectException for a host it cannot resolve too: the cause says which it was
        for (Throwable t = failure; t != null && why == null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof UnknownHostException || t instanceof UnresolvedAddressException) {
                why = "unknown host";
            }
        }
        for (Throwable t = failure; t != null && why == null; t = t.getCause() == t ? null : t.getCause()) {
            why = switch (t) {
                case ConnectException c -> "connection refused";
                case UnknownHostException u -> "unknown host";
                case UnresolvedAddressException u -> "unknown host";
                case HttpTimeoutException h -> "no answer in time";
                case java.util.concurrent.TimeoutException h -> "no answer in time";
                case SSLException s -> "TLS failed: " + s.getMessage();
                default -> null;
            };
        }
        if (why == null) {
            Throwable root = failure;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            why = root.getMessage() != null
                    ? root.getMessage()
                    : root.getClass().getSimpleName();
        }
        return new CommandFailure("cannot reach the API server at " + server + " (" + TerminalText.clean(why)
                + "): is the cluster up, and is the kubeconfig's server right? (kubectl cluster-info)");
    }
}
