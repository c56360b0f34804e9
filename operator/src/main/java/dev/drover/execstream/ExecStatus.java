package dev.drover.execstream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.common.UserText;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The {@code metav1.Status} that ends a remote command on channel {@link Channels#ERROR}, as kubelet writes it: a
 * {@code Success}, a {@code Failure} with reason {@code NonZeroExitCode} whose cause {@code ExitCode} holds the code,
 * or a {@code Failure} that says why the command did not run to its end.
 */
public final class ExecStatus {

    static final ObjectMapper JSON = new ObjectMapper();

    /** What a client does with a status: exit with {@code code}, saying {@code message} when there is one. */
    public record Outcome(int code, String message) {}

    private ExecStatus() {}

    public static String success() {
        return "{\"metadata\":{},\"status\":\"Success\"}";
    }

    /** The status of a command that exited with {@code code}. */
    public static String exited(int code) {
        if (code == 0) {
            return success();
        }
        ObjectNode status = failure("command terminated with non-zero exit code: " + code);
        status.put("reason", "NonZeroExitCode");
        ObjectNode cause = status.putObject("details").putArray("causes").addObject();
        cause.put("reason", "ExitCode");
        cause.put("message", Integer.toString(code));
        return status.toString();
    }

    /** The status of a command that could not run to its end, for {@code why}. */
    public static String failed(String why) {
        ObjectNode status = failure(why);
        status.put("reason", "InternalError");
        return status.toString();
    }

    private static ObjectNode failure(String message) {
        ObjectNode status = JSON.createObjectNode();
        status.putObject("metadata");
        status.put("status", "Failure");
        status.put("message", message);
        return status;
    }

    /**
     * What the client makes of a status: {@code Success} is 0, {@code NonZeroExitCode} its code, anything else 1 with
     * its message.
     */
    public static Outcome read(ByteBuffer payload) {
        JsonNode status;
        try {
            status = JSON.readTree(bytes(payload));
        } catch (IOException e) {
            return new Outcome(1, "the command's status is not JSON: " + e.getMessage());
        }
        if (status == null || !status.isObject()) {
            return new Outcome(1, "the command's status is not a JSON object");
        }
        if ("Success".equals(status.path("status").asText())) {
            return new Outcome(0, "");
        }
        String message = UserText.bare(status.path("message").asText("the command failed"));
        if ("NonZeroExitCode".equals(status.path("reason").asText())) {
            for (JsonNode cause : status.path("details").path("causes")) {
                if ("ExitCode".equals(cause.path("reason").asText())) {
                    try {
                        int code = Integer.parseInt(cause.path("message").asText());
                        if (code > 0 && code < 256) {
                            return new Outcome(code, "");
                        }
                    } catch (NumberFormatException e) {
                        break;
                    }
                }
            }
        }
        return new Outcome(1, message);
    }

    static byte[] bytes(ByteBuffer payload) {
        ByteBuffer copy = payload.slice();
        byte[] out = new byte[copy.remaining()];
        copy.get(out);
        return out;
    }

    static String text(ByteBuffer payload) {
        return new String(bytes(payload), StandardCharsets.UTF_8);
    }
}
