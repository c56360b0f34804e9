package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

class SchemaValidatorTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** The CRD's duration field: Go's duration grammar, at most 64 characters. */
    private static final String DURATION = "^(0|([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+)$";

    private static JsonNode schema(int maxLength) {
        ObjectNode schema = JSON.createObjectNode().put("type", "object");
        schema.putObject("properties")
                .putObject("killTimeout")
                .put("type", "string")
                .put("pattern", DURATION)
                .put("maxLength", maxLength);
        return schema;
    }

    @Test
    void aHugeValueIsCheckedInLinearTimeWithoutRecursion() {
        ObjectNode object = JSON.createObjectNode().put("killTimeout", "1s".repeat(100_000));

        SchemaValidator.Result result = SchemaValidator.validate(object, schema(64), true);

        assertThat(result.invalid()).containsExactly("killTimeout: Too long: may not be more than 64 bytes");
    }

    @Test
    void aHugeValueThatMatchesIsAcceptedWhereNoLengthBoundsIt() {
        ObjectNode object = JSON.createObjectNode().put("killTimeout", "1s".repeat(100_000));

        assertThat(SchemaValidator.validate(object, schema(1_000_000), true).ok())
                .isTrue();
    }

    @Test
    void patternsAreSearchedForAsGoFindsThem() {
        // Kubernetes asks whether the pattern matches anywhere in the value, as Go's regexp.MatchString does
        ObjectNode schema = JSON.createObjectNode().put("type", "object");
        schema.putObject("properties").putObject("name").put("type", "string").put("pattern", "[a-z]+");
        assertThat(SchemaValidator.validate(JSON.createObjectNode().put("name", "1a1"), schema, true)
                        .ok())
                .isTrue();
        assertThat(SchemaValidator.validate(JSON.createObjectNode().put("name", "123"), schema, true)
                        .invalid())
                .containsExactly("name: Invalid value: \"123\": name in body should match '[a-z]+'");
    }
}
