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

    @Test
    void errorsPastAHundredAreCountedNotListed() {
        ObjectNode schema = JSON.createObjectNode().put("type", "object");
        schema.putObject("properties")
                .putObject("names")
                .put("type", "array")
                .put("x-kubernetes-list-type", "set")
                .putObject("items")
                .put("type", "string");
        ObjectNode object = JSON.createObjectNode();
        var names = object.putArray("names");
        for (int i = 0; i < 100_000; i++) {
            names.add(1); // not a string, and repeated
        }
        Problems invalid = SchemaValidator.validate(object, schema, true).invalid();
        assertThat(invalid).hasSize(Problems.SHOWN);
        assertThat(invalid.getFirst()).isEqualTo("names[1]: Duplicate value: 1");
        assertThat(invalid.more()).isEqualTo(2 * 100_000 - 1 - Problems.SHOWN);
        assertThat(invalid.joined(", ")).hasSizeLessThan(10_000).endsWith(", ... and 199899 more");
    }

    @Test
    void theItemsOfAListLongerThanItsMaxItemsAreNotChecked() {
        ObjectNode schema = JSON.createObjectNode().put("type", "object");
        ObjectNode list = schema.putObject("properties")
                .putObject("tasks")
                .put("type", "array")
                .put("maxItems", 64)
                .put("x-kubernetes-list-type", "map");
        list.putArray("x-kubernetes-list-map-keys").add("name");
        list.putObject("items").put("type", "object").putArray("required").add("name");
        ObjectNode object = JSON.createObjectNode();
        var tasks = object.putArray("tasks");
        for (int i = 0; i < 100_000; i++) {
            tasks.addObject();
        }
        assertThat(SchemaValidator.validate(object, schema, true).invalid())
                .containsExactly("tasks: Too many: 100000: must have at most 64 items");
    }
}
