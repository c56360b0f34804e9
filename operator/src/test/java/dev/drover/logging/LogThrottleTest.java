package dev.drover.logging;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LogThrottleTest {

    final AtomicLong now = new AtomicLong();
    final LogThrottle throttle = new LogThrottle(Duration.ofSeconds(30), now::get);
    final List<String> lines = new ArrayList<>();

    void fail(String key) {
        throttle.log(key, suppressed -> lines.add(key + " (" + suppressed + " suppressed)"));
    }

    @Test
    void aFailureRepeatedOnEveryWriteIsLoggedOncePerIntervalWithTheCountHeldBack() {
        for (int i = 0; i < 1000; i++) {
            fail("stdout");
        }
        assertThat(lines).containsExactly("stdout (0 suppressed)");

        now.addAndGet(Duration.ofSeconds(30).toNanos());
        fail("stdout");

        assertThat(lines).containsExactly("stdout (0 suppressed)", "stdout (999 suppressed)");
    }

    @Test
    void keysAreThrottledApart() {
        fail("a");
        fail("b");
        fail("a");

        assertThat(lines).containsExactly("a (0 suppressed)", "b (0 suppressed)");
    }
}
