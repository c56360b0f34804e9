package dev.drover.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class DurationsTest {

    @ParameterizedTest
    @CsvSource({
        "0, 0",
        "0s, 0",
        "250ms, 250000000",
        "15s, 15000000000",
        "1h30m, 5400000000000",
        "1.5h, 5400000000000",
        "1m30s, 90000000000",
        "100ns, 100",
        "3us, 3000",
        "3µs, 3000",
        "1h0m0.5s, 3600500000000",
        "24h, 86400000000000",
    })
    void parsesGoStyleDurations(String text, long nanos) {
        assertThat(Durations.parse(text)).isEqualTo(Duration.ofNanos(nanos));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "abc",
                "15",
                "1.s",
                "-5s",
                "5 s",
                "1d",
                "s",
                "1h-30m",
                "1e3s",
                "99999999999h",
                "1.",
                ".5s",
                "1..5s",
                "5sm",
                "1hx",
                "10 sec",
                " 5s",
                "5s ",
                "+5s",
                "-0",
                "1H",
                "5S",
                "1µ",
                "5mss",
                "1y",
                "1w",
                "\uff11s",
                "9223372036854775808ns",
                "2562048h",
                "PT10S",
                "P1D",
                "0x10s",
                "1_000ms"
            })
    void rejectsMalformedDurationsNamingTheValue(String text) {
        assertThatThrownBy(() -> Durations.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("\"" + text + "\"");
        assertThat(Durations.isValid(text)).isFalse();
    }

    /** The device plugins had a grammar of their own that also took ISO-8601; its users are told the Go form. */
    @ParameterizedTest
    @CsvSource({"PT10S, 10s", "PT1M30S, 1m30s", "pt0.5s, 500ms", "P1D, 24h"})
    void isoSpellingIsRefusedWithItsGoForm(String iso, String go) {
        assertThatThrownBy(() -> Durations.parse(iso))
                .hasMessageEndingWith("; write \"" + iso + "\" as " + go)
                .hasMessageContaining("is not a duration");
        assertThat(Durations.parse(go)).isEqualTo(java.time.Duration.parse(iso));
    }

    @Test
    void negativeIsoSpellingGetsNoHint() {
        assertThatThrownBy(() -> Durations.parse("PT-10S")).hasMessageNotContaining("write");
    }

    @ParameterizedTest
    @CsvSource({
        "0, 0s",
        "250000000, 250ms",
        "15000000000, 15s",
        "5400000000000, 1h30m",
        "1500000000, 1s500ms",
        "3600000000001, 1h1ns",
    })
    void formatsInTheShortestFormThatParsesBack(long nanos, String text) {
        Duration d = Duration.ofNanos(nanos);
        assertThat(Durations.format(d)).isEqualTo(text);
        assertThat(Durations.parse(Durations.format(d))).isEqualTo(d);
    }

    /** Item 16: the regex recursed once per term, so a long value overflowed the stack instead of being refused. */
    @ParameterizedTest
    @ValueSource(ints = {900, 100_000})
    void aVeryLongDurationIsRefusedClearlyWithoutOverflowingTheStack(int terms) {
        String text = "1s".repeat(terms);
        assertThatThrownBy(() -> Durations.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("(" + text.length() + " characters) is too long for a duration (at most 64")
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(300));
        assertThat(Durations.isValid(text)).isFalse();
    }

    @Test
    void aLongValueIsQuotedCutAndEscapedInTheMessage() {
        assertThatThrownBy(() -> Durations.parse("x".repeat(200) + "\n"))
                .hasMessageStartingWith("\"" + "x".repeat(UserText.LIMIT) + "\"... (201 characters)");
        assertThatThrownBy(() -> Durations.parse("5\u0000s")).hasMessageStartingWith("\"5\\u0000s\" is not a duration");
    }

    @Test
    void theLongestUsefulDurationStillParses() {
        assertThat(Durations.parse("2562047h47m16.854775807s")).isEqualTo(Duration.ofNanos(Long.MAX_VALUE));
        assertThat(Durations.parse("1s".repeat(32))).isEqualTo(Duration.ofSeconds(32));
    }
}
