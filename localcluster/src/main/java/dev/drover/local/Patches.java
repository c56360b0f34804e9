package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.zjsonpatch.JsonPatch;
import java.util.Map;

/** Applying JSON merge patches (RFC 7386) and JSON patches (RFC 6902) to an object. */
final class Patches {

    private Patches() {}

    static JsonNode apply(JsonNode target, JsonNode patch, boolean jsonPatch) {
        if (jsonPatch) {
            try {
                return JsonPatch.apply(patch, target);
            } catch (RuntimeException e) {
                throw new ApiFront.ApiError(422, "Invalid", "the JSON patch does not apply: " + e.getMessage());
            }
        }
        return merge(target, patch);
    }

    static JsonNode merge(JsonNode target, JsonNode patch) {
        if (!patch.isObject()) {
            return patch.deepCopy();
        }
        ObjectNode out = target != null && target.isObject()
                ? ((ObjectNode) target).deepCopy()
                : ((ObjectNode) patch).objectNode();
        for (Map.Entry<String, JsonNode> f : patch.properties()) {
            if (f.getValue().isNull()) {
                out.remove(f.getKey());
            } else {
                out.set(f.getKey(), merge(out.get(f.getKey()), f.getValue()));
            }
        }
        return out;
    }
}
