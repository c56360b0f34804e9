package dev.drover.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.drover.web.Exchange;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the API server answers, as kube-apiserver's response writers: an object as JSON with its code, and an
 * {@link ApiFront.ApiError} as a Kubernetes Status (details and conflict causes included) with the error's code.
 */
final class ResponseWriters {

    /** The front's logger: these are its answers, and what fails sending them is its to report. */
    private static final Logger LOG = LoggerFactory.getLogger(ApiFront.class);

    private static final ObjectMapper JSON = NestingDepth.mapper();

    private ResponseWriters() {}

    static void send(Exchange ex, int code, JsonNode body) throws IOException {
        ex.send(code, "application/json", JSON.writeValueAsBytes(body));
    }

    static void status(Exchange ex, ApiFront.ApiError e) {
        ObjectNode s = statusOf(e);
        int code = e.code;
        try {
            // a refusal may come before the body was read (authentication, RBAC): read what is left of it first,
            // so the connection stays usable for the client's next request instead of being closed under it
            RequestBodies.drain(ex.body(), RequestBodies.DRAIN_BYTES);
            send(ex, code, s);
        } catch (IOException io) {
            LOG.debug("could not send error {}: {}", code, io.toString());
        }
    }

    /** The Status object that answers {@code e}. */
    static ObjectNode statusOf(ApiFront.ApiError e) {
        ObjectNode s = JSON.createObjectNode().put("kind", "Status").put("apiVersion", "v1");
        s.putObject("metadata");
        s.put("status", "Failure").put("message", e.getMessage()).put("reason", e.reason);
        if (e.detailsName != null || e.detailsGroup != null || e.detailsKind != null) {
            ObjectNode details = s.putObject("details");
            putIfNotEmpty(details, "name", e.detailsName);
            putIfNotEmpty(details, "group", e.detailsGroup);
            putIfNotEmpty(details, "kind", e.detailsKind);
        }
        if (e instanceof ServerSideApply.ApplyConflict c) {
            s.withObjectProperty("details").putArray("causes").addAll(c.causes);
        }
        if (e instanceof PodResize.Invalid i) {
            s.withObjectProperty("details").putArray("causes").addAll(i.causes);
        }
        s.put("code", e.code);
        return s;
    }

    private static void putIfNotEmpty(ObjectNode node, String field, String value) {
        if (value != null && !value.isEmpty()) {
            node.put(field, value);
        }
    }
}
