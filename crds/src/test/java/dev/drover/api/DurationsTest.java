package dev.drover.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
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
    @ValueSource(strings = {"", "abc", "15", "1.s", "-5s", "5 s", "1d", "s", "1h-30m", "1e3s", "99999999999h"})
    void rejectsMalformedDurationsNamingTheValue(String text) {
        assertThatThrownBy(() -> Durations.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("\"" + text + "\"");
        assertThat(Durations.isValid(text)).isFalse();
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
}
