package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Map;

/**
 * A {@code metav1.LabelSelector} object ({@code matchLabels}, {@code matchExpressions} with {@code In},
 * {@code NotIn}, {@code Exists}, {@code DoesNotExist}) applied to labels, as in an aggregation rule. An empty
 * selector matches everything; an unknown operator matches nothing.
 */
final class Selectors {

    private Selectors() {}

    static boolean matches(JsonNode selector, JsonNode labels) {
        for (Iterator<Map.Entry<String, JsonNode>> it =
                        selector.path("matchLabels").fields();
                it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!labels.path(e.getKey()).isTextual()
                    || !labels.path(e.getKey()).asText().equals(e.getValue().asText())) {
                return false;
            }
        }
        for (JsonNode expression : selector.path("matchExpressions")) {
            String key = expression.path("key").asText();
            boolean has = labels.path(key).isTextual();
            String value = labels.path(key).asText();
            boolean in = false;
            for (JsonNode v : expression.path("values")) {
                in |= has && v.asText().equals(value);
            }
            boolean ok = switch (expression.path("operator").asText()) {
                case "In" -> in;
                case "NotIn" -> !in;
                case "Exists" -> has;
                case "DoesNotExist" -> !has;
                default -> false;
            };
            if (!ok) {
                return false;
            }
        }
        return true;
    }
}
