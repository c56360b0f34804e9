package dev.drover.allocrunner;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class LatestUpdateTest {

    @Test
    void staleUpdatesAreDropped() throws Exception {
        LatestUpdate<String> u = new LatestUpdate<>(0);
        assertThat(u.offer(3, "gen3")).isTrue();
        assertThat(u.offer(2, "gen2")).isFalse();
        assertThat(u.offer(3, "gen3 again")).isFalse();
        assertThat(u.take(Duration.ZERO)).contains("gen3");
        assertThat(new LatestUpdate<String>(5).offer(5, "the one being run")).isFalse();
    }

    @Test
    void queuedUpdatesCollapseToTheNewest() throws Exception {
        LatestUpdate<String> u = new LatestUpdate<>(0);
        u.offer(1, "a");
        u.offer(2, "b");
        u.offer(3, "c");
        assertThat(u.take(Duration.ZERO)).contains("c");
        assertThat(u.take(Duration.ofMillis(20))).isEmpty();
    }

    @Test
    void takeWaitsForTheNextUpdate() throws Exception {
        LatestUpdate<String> u = new LatestUpdate<>(0);
        Thread.ofVirtual().start(() -> u.offer(7, "later"));
        assertThat(u.take(Duration.ofSeconds(5))).contains("later");
        assertThat(u.newestGeneration()).isEqualTo(7);
    }
}
