package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * A Secret's {@code stringData} as kube-apiserver takes it ({@code Convert_v1_Secret_To_core_Secret}): each entry is
 * written into {@code data} (base64), over a {@code data} entry of the same key, and {@code stringData} itself is
 * never stored (it is write-only). The whole {@code data} may hold at most {@link #MAX_BYTES} ({@code ValidateSecret}).
 */
final class SecretData {

    /** {@code corev1.MaxSecretSize}. */
    static final int MAX_BYTES = 1024 * 1024;

    private SecretData() {}

    /** Folds {@code stringData} into {@code data} of {@code secret} and checks its size. */
    static void fold(ObjectNode secret) {
        JsonNode strings = secret.remove("stringData");
        if (strings != null && strings.isObject()) {
            ObjectNode data = secret.withObjectProperty("data");
            for (Map.Entry<String, JsonNode> e : strings.properties()) {
                data.put(
                        e.getKey(),
                        Base64.getEncoder().encodeToString(e.getValue().asText().getBytes(StandardCharsets.UTF_8)));
            }
        }
        long total = 0;
        for (Map.Entry<String, JsonNode> e : secret.path("data").properties()) {
            try {
                total += Base64.getDecoder().decode(e.getValue().asText()).length;
            } catch (IllegalArgumentException notBase64) {
                throw new ApiFront.ApiError(
                        400,
                        "BadRequest",
                        "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data");
            }
        }
        if (total > MAX_BYTES) {
            throw new ApiFront.ApiError(
                    422,
                    "Invalid",
                    "Secret " + Json.quote(secret.path("metadata").path("name").asText())
                            + " is invalid: data: Too long:" + " must have at most " + MAX_BYTES + " bytes");
        }
    }
}
