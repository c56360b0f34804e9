package dev.drover.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;

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
}
