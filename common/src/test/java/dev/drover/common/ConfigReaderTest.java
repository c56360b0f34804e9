package dev.drover.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ConfigReaderTest {

    @Test
    void readsEveryKindOfValue() {
        ConfigReader r = new ConfigReader(
                Map.of("s", "x", "i", 3.0, "b", true, "d", "1m30s", "ss", List.of("a"), "is", List.of(13, 31L)));
        assertThat(r.string("s")).isEqualTo("x");
        assertThat(r.integer("i")).isEqualTo(3);
        assertThat(r.bool("b")).isTrue();
        assertThat(r.duration("d")).isEqualTo(Duration.ofSeconds(90));
        assertThat(r.strings("ss")).containsExactly("a");
        assertThat(r.integers("is")).containsExactly(13, 31);
        assertThat(r.string("absent")).isNull();
        assertThat(r.problems()).isEmpty();
    }

    @Test
    void aNestedSectionIsReadAsAMapAndAnythingElseIsAProblem() {
        ConfigReader r = new ConfigReader(Map.of("m", Map.of("cat", Map.of("echoStdin", true)), "notMap", List.of(1)));
        assertThat(r.map("m")).containsEntry("cat", Map.of("echoStdin", true));
        assertThat(r.map("notMap")).isNull();
        assertThat(r.map("absent")).isNull();
        assertThat(r.problems()).containsExactly("config.notMap: [1] is not a map of names to values");
    }

    @Test
    void everyProblemIsCollectedNamingKeyAndValue() {
        ConfigReader r = new ConfigReader(Map.of("d", "soon", "i", 1.5, "is", List.of(1, "2"), "b", "yes", "typo", 1));
        assertThat(r.duration("d")).isNull();
        assertThat(r.integer("i")).isNull();
        assertThat(r.integers("is")).isNull();
        assertThat(r.bool("b")).isNull();
        assertThat(r.problems())
                .containsExactly(
                        "config.d: \"soon\" is not a duration (use a number with a unit: ns, us, ms, s, m, h; e.g. 250ms, "
                                + "15s, 1h30m)",
                        "config.i: 1.5 is not a whole number",
                        "config.is: [1, 2] is not a list of whole numbers",
                        "config.b: \"yes\" is not true or false",
                        "config.typo: unknown key (known: d, i, is, b)");
    }

    @Test
    void hostileValuesBecomeProblemsNotExceptions() {
        ConfigReader r = new ConfigReader(Map.of(
                "overflow",
                "99999999999999h",
                "negative",
                "-5s",
                "long",
                "1s".repeat(100_000),
                "notText",
                Map.of("a", 1),
                "big",
                1e300,
                "nan",
                Double.NaN,
                "bigList",
                List.of(Long.MAX_VALUE)));
        for (String key : List.of("overflow", "negative", "long", "notText")) {
            assertThat(r.duration(key)).isNull();
        }
        assertThat(r.integer("big")).isNull();
        assertThat(r.integer("nan")).isNull();
        assertThat(r.integers("bigList")).isNull();
        assertThat(r.problems())
                .hasSize(7)
                .allSatisfy(p -> assertThat(p).hasSizeLessThan(300))
                .anySatisfy(
                        p -> assertThat(p).startsWith("config.overflow: \"99999999999999h\" is too long a duration"))
                .anySatisfy(p -> assertThat(p).startsWith("config.negative: \"-5s\" is not a duration"))
                .anySatisfy(p -> assertThat(p).contains("(200000 characters) is too long for a duration"))
                .anySatisfy(
                        p -> assertThat(p).isEqualTo("config.notText: {a=1} is not a duration (use e.g. 30s, 1h30m)"));
    }

    @Test
    void manyUnknownKeysAreOneBoundedProblem() {
        Map<String, Object> config = new HashMap<>();
        IntStream.range(0, 100_000).forEach(i -> config.put("k" + i, i));
        config.put("known", "x");
        ConfigReader r = new ConfigReader(config);
        r.string("known");
        assertThat(r.problems())
                .singleElement()
                .satisfies(p -> assertThat(p)
                        .startsWith("config: 100000 unknown keys: ")
                        .endsWith("and 99990 more (known: known)"));
    }

    @Test
    void aNullConfigIsEmpty() {
        ConfigReader r = new ConfigReader(null);
        assertThat(r.duration("d")).isNull();
        assertThat(r.problems()).isEmpty();
    }
}
