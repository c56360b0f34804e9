package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SharedStringsTest {

    record Spec(String signal, List<String> names, Map<String, String> labels, String uid, String count) {}

    static final ObjectMapper MAPPER = Jackson.mapper();

    static final String JSON = """
            {"signal": "SIGTERM", "names": ["web", "db"], "labels": {"team": "payments"},
             "uid": "0b6c6f0e-8a44-4d7e-9a57-7d6c1c8f4e21-and-more", "count": 7}
            """;

    /** Thousands of allocations read the same values: each short one is held once. */
    @Test
    void shortValuesReadTwiceAreOneInstanceLongOnesAreNot() throws Exception {
        Spec a = MAPPER.readValue(JSON, Spec.class);
        Spec b = MAPPER.readValue(JSON, Spec.class);
        assertThat(b.signal()).isEqualTo("SIGTERM").isSameAs(a.signal());
        assertThat(b.names().get(1)).isSameAs(a.names().get(1));
        assertThat(b.labels().get("team")).isSameAs(a.labels().get("team"));
        assertThat(b.uid()).isEqualTo(a.uid()).isNotSameAs(a.uid());
        assertThat(b.count()).as("a number read into a string, as Jackson does").isEqualTo("7");
    }

    @Test
    void aNullStaysNullAndAnEmptyStringIsEmpty() throws Exception {
        Spec s = MAPPER.readValue("{\"signal\": null, \"uid\": \"\"}", Spec.class);
        assertThat(s.signal()).isNull();
        assertThat(s.uid()).isEmpty();
        assertThat(SharedStrings.share(null)).isNull();
    }
}
