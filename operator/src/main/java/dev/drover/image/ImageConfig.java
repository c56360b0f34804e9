package dev.drover.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What an image's config says its process is ({@code Entrypoint}, {@code Cmd}, {@code Env}, {@code WorkingDir},
 * {@code User}), and the digests of its layers' uncompressed tars ({@code rootfs.diff_ids}), which the unpacked layers
 * must match.
 */
public record ImageConfig(
        List<String> entrypoint,
        List<String> cmd,
        List<String> env,
        String workingDir,
        String user,
        List<Digest> diffIds) {

    /** A config larger than this is refused: real ones are a few kilobytes, a history-heavy one some hundred. */
    static final int MAX_BYTES = 8 * 1024 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();

    static ImageConfig parse(byte[] json) throws IOException {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (IOException e) {
            throw new ImagePullException("the image's config is not JSON");
        }
        if (root == null || !root.isObject()) {
            throw new ImagePullException("the image's config is not a JSON object");
        }
        JsonNode c = root.path("config");
        List<Digest> diffIds = new ArrayList<>();
        for (JsonNode d : root.path("rootfs").path("diff_ids")) {
            try {
                diffIds.add(Digest.parse(d.asText()));
            } catch (IllegalArgumentException e) {
                throw new ImagePullException("the image's config has a bad layer digest: " + e.getMessage());
            }
        }
        return new ImageConfig(
                strings(c.path("Entrypoint")),
                strings(c.path("Cmd")),
                strings(c.path("Env")),
                c.path("WorkingDir").asText(""),
                c.path("User").asText(""),
                List.copyOf(diffIds));
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        for (JsonNode n : array) {
            out.add(n.asText());
        }
        return List.copyOf(out);
    }
}
