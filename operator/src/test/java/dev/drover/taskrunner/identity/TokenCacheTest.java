package dev.drover.taskrunner.identity;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class TokenCacheTest {

    static final Instant T = Instant.parse("2026-11-25T12:00:00Z");

    @Test
    void aTokenIsRenewedAtFourFifthsOfTheLifeItGot() {
        assertThat(TokenCache.renewAt(T, T.plus(Duration.ofHours(1)))).isEqualTo(T.plus(Duration.ofMinutes(48)));
        assertThat(TokenCache.renewAt(T, T.plus(Duration.ofMinutes(10)))).isEqualTo(T.plus(Duration.ofMinutes(8)));
    }

    @Test
    void clocksThatDisagreeNeverMakeEveryUseMintAToken() {
        assertThat(TokenCache.renewAt(T, T.minus(Duration.ofMinutes(5))))
                .as("already expired by this clock")
                .isEqualTo(T.plus(Duration.ofSeconds(10)));
        assertThat(TokenCache.renewAt(T, T.plus(Duration.ofMillis(20))))
                .as("a life of a few milliseconds")
                .isEqualTo(T.plus(Duration.ofSeconds(1)));
        assertThat(TokenCache.renewAt(T, T.plus(Duration.ofSeconds(12))))
                .as("80 % of a short life, past half of it")
                .isEqualTo(T.plus(Duration.ofMillis(9600)));
    }
}
