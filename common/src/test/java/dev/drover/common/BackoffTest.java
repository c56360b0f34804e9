package dev.drover.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BackoffTest {

    @Test
    void doublesFromMinUpToMaxAndStaysThere() {
        Backoff b = Backoff.from(Duration.ofMillis(500), Duration.ofSeconds(5));
        List<Duration> pauses = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            pauses.add(b.current());
            b = b.next();
        }
        assertThat(pauses)
                .containsExactly(
                        Duration.ofMillis(500),
                        Duration.ofSeconds(1),
                        Duration.ofSeconds(2),
                        Duration.ofSeconds(4),
                        Duration.ofSeconds(5),
                        Duration.ofSeconds(5),
                        Duration.ofSeconds(5));
    }

    @Test
    void aSuccessStartsOverAtMin() {
        Backoff b = Backoff.from(Duration.ofSeconds(1), Duration.ofMinutes(2))
                .next()
                .next()
                .next();
        assertThat(b.current()).isEqualTo(Duration.ofSeconds(8));
        assertThat(b.reset().current()).isEqualTo(Duration.ofSeconds(1));
        assertThat(b.reset().next().current()).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void theLongestMaxIsReachedWithoutOverflow() {
        Duration longest = Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);
        Backoff b = Backoff.from(Duration.ofNanos(1), longest);
        for (int i = 0; i < 200; i++) {
            b = b.next();
        }
        assertThat(b.current()).isEqualTo(longest);
    }

    @Test
    void aPauseThatCannotGrowOrIsOutOfRangeIsRefused() {
        assertThatThrownBy(() -> Backoff.from(Duration.ZERO, Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("above zero, not 0s");
        assertThatThrownBy(() -> Backoff.from(Duration.ofSeconds(-1), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("above zero, not -1s");
        assertThatThrownBy(() -> Backoff.from(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(4), Duration.ofSeconds(5)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
