package dev.drover.concurrent;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.ref.WeakReference;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class HandOffThreadsTest {

    @Test
    void threadsRunOneAfterTheOtherAndJoinWaitsForTheLast() throws Exception {
        HandOffThreads threads = new HandOffThreads("runner");
        List<String> ran = new CopyOnWriteArrayList<>();
        CountDownLatch waiting = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        assertThat(threads.started()).isFalse();
        assertThat(threads.start(() -> {
                    ran.add("first");
                    threads.handingOff();
                    waiting.countDown();
                }))
                .isTrue();
        assertThat(threads.start(() -> ran.add("again"))).as("started once").isFalse();
        assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();

        threads.handOff(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            ran.add("second");
        });
        Thread joiner = Thread.ofVirtual().start(() -> {
            try {
                threads.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertThat(joiner.join(java.time.Duration.ofMillis(200)))
                .as("join waits for the second")
                .isFalse();
        release.countDown();
        assertThat(joiner.join(java.time.Duration.ofSeconds(5))).isTrue();
        assertThat(ran).containsExactly("first", "second");
        assertThat(threads.started()).isTrue();
    }

    /** A runner that only waits keeps no thread, not even the one that ended: thousands of runners wait so. */
    @Test
    void aThreadThatEndedIsNotKept() throws Exception {
        HandOffThreads threads = new HandOffThreads("runner");
        List<WeakReference<Thread>> ran = new CopyOnWriteArrayList<>();
        CountDownLatch waiting = new CountDownLatch(1);
        threads.start(() -> {
            ran.add(new WeakReference<>(Thread.currentThread()));
            threads.handingOff();
            waiting.countDown();
        });
        assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();
        threads.handOff(() -> ran.add(new WeakReference<>(Thread.currentThread())));
        threads.join();
        assertThat(ran).hasSize(2);
        for (int i = 0; i < 50 && ran.stream().anyMatch(r -> r.get() != null); i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertThat(ran).allMatch(r -> r.get() == null, "collected");
        assertThat(threads.started()).isTrue();
        threads.join(); // nothing left to wait for
    }
}
