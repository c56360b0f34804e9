package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.lang.management.MemoryPoolMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class OldGenerationBoundTest {

    @Test
    void theBoundIsAQuarterAboveASmallLiveSetHalfAboveALargeOneAndNeverBelowTheFloor() {
        assertThat(OldGenerationBound.next(0)).isEqualTo(OldGenerationBound.FLOOR);
        assertThat(OldGenerationBound.next(10L << 20)).isEqualTo(OldGenerationBound.FLOOR);
        assertThat(OldGenerationBound.next(40L << 20)).isEqualTo(50L << 20);
        assertThat(OldGenerationBound.next(128L << 20)).isEqualTo(160L << 20);
        assertThat(OldGenerationBound.next(300L << 20)).isEqualTo(450L << 20);
    }

    @Test
    void anOldGenerationPastItsBoundIsCollectedAndTheBoundIsGoneOnClose() throws Exception {
        MemoryPoolMXBean pool = OldGenerationBound.oldGeneration().orElseThrow();
        AtomicInteger collections = new AtomicInteger();
        OldGenerationBound bound = OldGenerationBound.start(pool, () -> {
            collections.incrementAndGet();
            System.gc();
        });
        try {
            assertThat(pool.getUsageThreshold()).isGreaterThanOrEqualTo(OldGenerationBound.FLOOR);
            pool.setUsageThreshold(1); // as if the old generation had grown past it
            List<byte[]> kept = new ArrayList<>();
            for (int i = 0; i < 64 && collections.get() == 0; i++) {
                kept.add(new byte[1 << 20]);
                System.gc(); // the JVM checks the bound after a collection
                Thread.sleep(20);
            }
            assertThat(collections).as("a collection asked for").hasPositiveValue();
            // set by the JVM's notification thread once its collection is done
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(pool.getUsageThreshold())
                            .as("the next bound, from what the collection left")
                            .isGreaterThanOrEqualTo(OldGenerationBound.FLOOR));
            kept.clear();
        } finally {
            bound.close();
        }
        assertThat(pool.getUsageThreshold()).isZero();
    }
}
