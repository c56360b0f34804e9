package dev.drover.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class DeadlinesTest {

    @Test
    void aStartThatNeverReturnsCannotHangTheCaller() {
        CountDownLatch never = new CountDownLatch(1);
        long start = System.nanoTime();
        assertThatThrownBy(() -> Deadlines.call("driver start", Duration.ofMillis(200), () -> {
                    // Ignores interruption, like a driver stuck in native code.
                    while (true) {
                        try {
                            never.await();
                        } catch (InterruptedException ignored) {
                            // keep hanging
                        }
                    }
                }))
                .isInstanceOf(Deadlines.DeadlineExceeded.class)
                .hasMessage("driver start did not finish within 200ms");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
    }

    @Test
    void aWaitThatIgnoresCancellationCannotHangTheCaller() {
        CompletableFuture<Integer> exit = new CompletableFuture<>();
        assertThatThrownBy(() -> Deadlines.await("wait for exit", Duration.ofMillis(100), exit))
                .isInstanceOf(Deadlines.DeadlineExceeded.class);
    }

    @Test
    void resultsAndFailuresPassThrough() throws Exception {
        assertThat(Deadlines.call("x", Duration.ofSeconds(5), () -> 42)).isEqualTo(42);
        assertThatThrownBy(() -> Deadlines.call("x", Duration.ofSeconds(5), () -> {
                    throw new DriverStartException("boom", false);
                }))
                .isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(DriverStartException.class);
    }

    @Test
    void theAbandonedCallIsInterrupted() throws Exception {
        CountDownLatch interrupted = new CountDownLatch(1);
        assertThatThrownBy(() -> Deadlines.call("stop", Duration.ofMillis(50), () -> {
                    try {
                        Thread.sleep(Duration.ofMinutes(1));
                    } catch (InterruptedException e) {
                        interrupted.countDown();
                    }
                    return null;
                }))
                .isInstanceOf(Deadlines.DeadlineExceeded.class);
        assertThat(interrupted.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    }
}
