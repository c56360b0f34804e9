package dev.drover.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

/** {@code -o json|yaml}: a document as scripts read it. JSON and YAML escape control characters themselves. */
final class Formats {

    private Formats() {}

    /** {@code doc} in {@code format} ({@code json} or {@code yaml}), ending in a newline. */
    static String render(JsonNode doc, String format) {
        if (format.equals("json")) {
            return doc.toPrettyString() + "\n";
        }
        try {
            // as kubectl -o yaml: no "---" before the document; the YAML library is loaded only here
            return new YAMLMapper(YAMLFactory.builder()
                            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
                            .build())
                    .writeValueAsString(doc);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("writing YAML: " + e.getMessage(), e);
        }
    }
}
