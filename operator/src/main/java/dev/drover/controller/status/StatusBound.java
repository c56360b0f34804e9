package dev.drover.controller.status;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.drover.api.v1alpha1.AllocationStatus;
import dev.drover.common.UserText;
import dev.drover.state.Jackson;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * Keeps a status under {@link #MAX_BYTES} serialized, whatever its allocation
 * holds: an API server stores at most 1.5 MiB per object, and a status is sent
 * on every change. Messages are cut where they enter (see {@link UserText}), so
 * this is the last line: a status still too big loses detail in steps (texts
 * cut shorter, then older task events, then task events altogether) but never
 * its counts, states or conditions.
 */
final class StatusBound {

    static final int MAX_BYTES = 64 * 1024;
    private static final ObjectMapper MAPPER = Jackson.mapper();

    private StatusBound() {}

    /** {@code status} itself when it fits; otherwise a copy that does. */
    static AllocationStatus fit(AllocationStatus status) {
        // every write passes here: one serialization tells a status that fits; only one that does not is a tree
        if (size(status) <= MAX_BYTES) {
            return status;
        }
        ObjectNode whole = MAPPER.valueToTree(status);
        ObjectNode tree = whole;
        int[][] steps = {{1024, 10}, {256, 3}, {256, 1}, {256, 0}};
        for (int[] step : steps) {
            tree = whole.deepCopy(); // each step cuts the original, so a cut text says its real length
            cutTexts(tree, step[0]);
            keepNewestEvents(tree, step[1]);
            if (size(tree) <= MAX_BYTES) {
                return read(tree);
            }
        }
        tree.remove("taskStates"); // more tasks than fit even bare: the counts at the top stay
        return read(tree);
    }

    private static void cutTexts(JsonNode node, int max) {
        if (node instanceof ObjectNode o) {
            for (Map.Entry<String, JsonNode> field : o.properties()) {
                if (field.getValue().isTextual() && field.getValue().asText().length() > max) {
                    field.setValue(
                            TextNode.valueOf(UserText.cut(field.getValue().asText(), max)));
                } else {
                    cutTexts(field.getValue(), max);
                }
            }
        } else if (node instanceof ArrayNode a) {
            for (int i = 0; i < a.size(); i++) {
                if (a.get(i).isTextual() && a.get(i).asText().length() > max) {
                    a.set(i, TextNode.valueOf(UserText.cut(a.get(i).asText(), max)));
                } else {
                    cutTexts(a.get(i), max);
                }
            }
        }
    }

    private static void keepNewestEvents(ObjectNode status, int keep) {
        for (JsonNode task : status.path("taskStates")) {
            if (task.get("events") instanceof ArrayNode events) {
                while (events.size() > keep) {
                    events.remove(0);
                }
            }
        }
    }

    private static int size(Object value) {
        try {
            return MAPPER.writeValueAsBytes(value).length;
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static AllocationStatus read(ObjectNode tree) {
        try {
            return MAPPER.treeToValue(tree, AllocationStatus.class);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
