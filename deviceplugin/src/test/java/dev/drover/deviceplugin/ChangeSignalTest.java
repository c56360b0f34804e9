package dev.drover.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.drover.deviceplugin.fake.ManualPluginClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The awaitChange loop both plugins run. */
class ChangeSignalTest {

    private static final Fingerprint SAME = Fingerprint.of(List.of());
    private static final Fingerprint CHANGED = Fingerprint.unavailable("gone");
    private static final ChangeSignal.Timeline NO_TIMELINE = now -> Optional.empty();

    private final ManualPluginClock clock = new ManualPluginClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final ChangeSignal signal = new ChangeSignal(clock);
    private final ExecutorService calls = Executors.newVirtualThreadPerTaskExecutor();

    @AfterEach
    void stop() {
        calls.shutdownNow();
        calls.close();
    }

    @Test
    void aNullSinceReturnsTheSnapshotAtOnce() throws Exception {
        assertThat(signal.awaitChange(null, Duration.ofHours(1), () -> SAME, NO_TIMELINE))
                .isEqualTo(SAME);
    }

    @Test
    void aSignalWakesTheWaitAndTheChangeIsReturned() throws Exception {
        AtomicBoolean changed = new AtomicBoolean();
        Future<Fingerprint> wait = calls.submit(
                () -> signal.awaitChange(SAME, Duration.ofHours(1), () -> changed.get() ? CHANGED : SAME, NO_TIMELINE));
        await().until(() -> clock.waiters() > 0);
        changed.set(true);
        signal.signal();
        assertThat(wait.get(5, TimeUnit.SECONDS)).isEqualTo(CHANGED);
    }

    /** The fake plugin read the version only when it went to sleep, after its snapshot. */
    @Test
    void aSignalWhileTheSnapshotIsTakenIsNotSleptThrough() throws Exception {
        AtomicInteger snapshots = new AtomicInteger();
        Future<Fingerprint> wait = calls.submit(() -> signal.awaitChange(
                SAME,
                Duration.ofHours(1),
                () -> {
                    if (snapshots.incrementAndGet() == 1) {
                        signal.signal(); // the event arrives while the first snapshot is being taken
                        return SAME;
                    }
                    return CHANGED;
                },
                NO_TIMELINE));
        assertThat(wait.get(5, TimeUnit.SECONDS)).isEqualTo(CHANGED);
        assertThat(clock.now()).isEqualTo(Instant.parse("2026-01-01T00:00:00Z"));
    }

    @Test
    void aNamedTimeWakesTheWaitWithoutASignal() throws Exception {
        Instant recovery = clock.now().plus(Duration.ofMinutes(1));
        Future<Fingerprint> wait = calls.submit(() -> signal.awaitChange(
                SAME,
                Duration.ofHours(1),
                () -> clock.now().isBefore(recovery) ? SAME : CHANGED,
                now -> now.isBefore(recovery) ? Optional.of(recovery) : Optional.empty()));
        await().until(() -> clock.waiters() > 0);
        clock.advance(Duration.ofSeconds(59));
        assertThat(wait).isNotDone();
        clock.advance(Duration.ofSeconds(1));
        assertThat(wait.get(5, TimeUnit.SECONDS)).isEqualTo(CHANGED);
    }

    @Test
    void theSameFingerprintComesBackAtTheDeadline() throws Exception {
        Future<Fingerprint> wait = calls.submit(() -> signal.awaitChange(
                SAME, Duration.ofSeconds(30), () -> SAME, now -> Optional.of(now.plus(Duration.ofHours(2)))));
        await().until(() -> clock.waiters() > 0);
        clock.advance(Duration.ofSeconds(29));
        assertThat(wait).isNotDone();
        clock.advance(Duration.ofSeconds(1));
        assertThat(wait.get(5, TimeUnit.SECONDS)).isEqualTo(SAME);
    }

    @Test
    void aCloseEndsTheWaitWithTheSnapshotsError() throws Exception {
        AtomicBoolean closed = new AtomicBoolean();
        Future<Fingerprint> wait = calls.submit(() -> signal.awaitChange(
                SAME,
                Duration.ofHours(1),
                () -> {
                    if (closed.get()) {
                        throw new DevicePluginException("device plugin test is closed");
                    }
                    return SAME;
                },
                NO_TIMELINE));
        await().until(() -> clock.waiters() > 0);
        closed.set(true);
        signal.signal();
        assertThatThrownBy(() -> wait.get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasRootCauseInstanceOf(DevicePluginException.class)
                .hasRootCauseMessage("device plugin test is closed");
    }
}
