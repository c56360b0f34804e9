package dev.drover.controller.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.ratelimit.TokenBucket;
import org.junit.jupiter.api.Test;

class EventRateTest {

    static final long SECOND = 1_000_000_000L;

    @Test
    void aBurstGoesAtOnceThenTheRateHolds() {
        TokenBucket bucket = new EventRate(10, 3).bucket(0);
        assertThat(bucket.take(0)).isZero();
        assertThat(bucket.take(0)).isZero();
        assertThat(bucket.take(0)).isZero();
        assertThat(bucket.take(0)).as("the fourth waits a tenth of a second").isEqualTo(SECOND / 10);
        assertThat(bucket.take(SECOND / 10)).as("and the fifth another").isEqualTo(SECOND / 10);
    }

    @Test
    void idleTimeRefillsTheBurstButNoMore() {
        TokenBucket bucket = new EventRate(10, 3).bucket(0);
        for (int i = 0; i < 3; i++) {
            bucket.take(0);
        }
        long later = 60 * SECOND;
        for (int i = 0; i < 3; i++) {
            assertThat(bucket.take(later)).isZero();
        }
        assertThat(bucket.take(later)).isPositive();
    }

    @Test
    void tryTakeRefusesWithoutGoingIntoDebt() {
        TokenBucket bucket = new EventRate(2, 2).bucket(0);
        assertThat(bucket.tryTake(0)).isTrue();
        assertThat(bucket.tryTake(0)).isTrue();
        assertThat(bucket.tryTake(0)).isFalse();
        assertThat(bucket.tryTake(SECOND / 4)).as("half a token").isFalse();
        assertThat(bucket.tryTake(SECOND / 2))
                .as("a whole one, not owed for the refusals")
                .isTrue();
    }

    @Test
    void nonsenseRatesAreRefused() {
        assertThatThrownBy(() -> new EventRate(0, 1)).hasMessageContaining("events.qps");
        assertThatThrownBy(() -> new EventRate(Double.NaN, 1)).hasMessageContaining("events.qps");
        assertThatThrownBy(() -> new EventRate(1, 0)).hasMessageContaining("events.burst");
    }
}
