package dev.drover.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

class LiveThreadsTest {

    @Test
    void aLeakedVirtualThreadIsSeenAndAnEndedOneIsNot() throws Exception {
        Set<Long> before = LiveThreads.ids(LiveThreads.now());
        CountDownLatch release = new CountDownLatch(1);
        Thread leaked = Thread.ofVirtual().name("leaked-virtual").start(() -> {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            assertThat(LiveThreads.startedSince(before, t -> false)).anySatisfy(t -> {
                assertThat(t.name()).isEqualTo("leaked-virtual");
                assertThat(t.virtual()).isTrue();
                assertThat(t.tid()).isEqualTo(leaked.threadId());
            });
            assertThat(Thread.getAllStackTraces().keySet())
                    .as("what the old check looked at")
                    .doesNotContain(leaked);
        } finally {
            release.countDown();
            leaked.join();
        }
        assertThat(LiveThreads.startedSince(before, t -> false))
                .noneMatch(t -> t.name().equals("leaked-virtual"));
    }

    @Test
    void aThreadOfAnExecutorOfItsOwnIsSeenWithWhereItStands() throws Exception {
        Set<Long> before = LiveThreads.ids(LiveThreads.now());
        CountDownLatch release = new CountDownLatch(1);
        try (ExecutorService pool = Executors.newThreadPerTaskExecutor(
                Thread.ofVirtual().name("pooled-virtual").factory())) {
            try {
                pool.execute(() -> {
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                await().atMost(Duration.ofSeconds(10))
                        .untilAsserted(() -> assertThat(LiveThreads.startedSince(before, t -> false))
                                .anySatisfy(t -> {
                                    assertThat(t.name()).isEqualTo("pooled-virtual");
                                    assertThat(t.virtual()).isTrue();
                                    assertThat(t.at()).as("where it waits").isNotEqualTo("?");
                                }));
            } finally {
                release.countDown();
            }
        }
        assertThat(LiveThreads.startedSince(before, t -> false))
                .noneMatch(t -> t.name().equals("pooled-virtual"));
    }
}
