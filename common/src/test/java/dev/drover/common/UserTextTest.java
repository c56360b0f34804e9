package dev.drover.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class UserTextTest {

    @Test
    void shortValuesAreQuotedWholeAndControlCharactersEscaped() {
        assertThat(UserText.quote("soon")).isEqualTo("\"soon\"");
        assertThat(UserText.quote("a\nb\u0000")).isEqualTo("\"a\\u000ab\\u0000\"");
        assertThat(UserText.quote(null)).isEqualTo("(none)");
        assertThat(UserText.value(5)).isEqualTo("5");
        assertThat(UserText.value(Map.of("a", 1))).isEqualTo("{a=1}");
        assertThat(UserText.value(List.of("x", "y"))).isEqualTo("[x, y]");
    }

    /** CSI (U+009B) and a right-to-left override would reach a terminal or reorder a reader's line as raw C0 did. */
    @Test
    void c1ControlsSeparatorsAndBidiOverridesAreEscapedToo() {
        assertThat(UserText.quote("a\u009b2Jb\u202egnp.exe\u2028c")).isEqualTo("\"a\\u009b2Jb\\u202egnp.exe\\u2028c\"");
        assertThat(UserText.quote("naïve café ✓")).as("printable text stays").isEqualTo("\"naïve café ✓\"");
    }

    @Test
    void aMessageFromElsewhereIsEscapedAndCut() {
        assertThat(UserText.cutEscaped("open /data/\u001b]0;x\u0007: denied", 300))
                .isEqualTo("open /data/\\u001b]0;x\\u0007: denied");
        assertThat(UserText.cutEscaped("\u001b".repeat(5000), 100))
                .hasSize(100)
                .startsWith("\\u001b")
                .endsWith("... (5000 characters)")
                .doesNotContain("\u001b");
        assertThat(UserText.cutEscaped(null, 10)).isNull();
    }

    @Test
    void aHugeValueIsCutSayingHowBigItWas() {
        assertThat(UserText.quote("x".repeat(1_000_000)))
                .isEqualTo("\"" + "x".repeat(UserText.LIMIT) + "\"... (1000000 characters)");
        Map<String, Object> big = new LinkedHashMap<>();
        IntStream.range(0, 100_000).forEach(i -> big.put("k" + i, "v".repeat(10)));
        assertThat(UserText.value(big))
                .startsWith("{k0=vvvvvvvvvv, k1=")
                .endsWith("... (a map of 100000 entries)")
                .hasSizeLessThan(UserText.LIMIT + 40);
        assertThat(UserText.value(List.of("y".repeat(500))))
                .endsWith("... (a list of 1 items)")
                .hasSizeLessThan(UserText.LIMIT + 40);
    }

    @Test
    void aDeeplyNestedValueIsCutWithoutWalkingIt() {
        Object deep = "leaf";
        for (int i = 0; i < 100_000; i++) {
            deep = List.of(deep);
        }
        assertThat(UserText.value(deep)).startsWith("[[[[").endsWith("... (a list of 1 items)");
    }

    @Test
    void longListsNameTheFirstFewAndCountTheRest() {
        List<String> items = IntStream.range(0, 25).mapToObj(i -> "p" + i).toList();
        assertThat(UserText.join(items, "; ")).isEqualTo("p0; p1; p2; p3; p4; p5; p6; p7; p8; p9; and 15 more");
        assertThat(UserText.join(List.of("a", "b"), ", ")).isEqualTo("a, b");
        assertThat(UserText.cut("z".repeat(5000), 100)).hasSize(100).endsWith("... (5000 characters)");
        assertThat(UserText.cut("short", 100)).isEqualTo("short");
    }
}
