package dev.drover.gc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GarbageCollectorTest {

    final List<String> destroyed = new CopyOnWriteArrayList<>();

    Collectable alloc(String id, Instant terminalSince) {
        return new Collectable() {
            @Override
            public String id() {
                return id;
            }

            @Override
            public Optional<Instant> terminalSince() {
                return Optional.ofNullable(terminalSince);
            }

            @Override
            public void destroy() {
                destroyed.add(id);
            }
        };
    }

    static DiskUsage usage(double disk, double inodes) {
        return new DiskUsage() {
            @Override
            public double disk() {
                return disk;
            }

            @Override
            public double inodes() {
                return inodes;
            }
        };
    }

    static final Instant T = Instant.parse("2026-11-22T10:00:00Z");

    @Test
    void overTheCountTheOldestTerminalGoesFirstNeverARunningOne() throws Exception {
        GcPolicy policy = new GcPolicy(Duration.ofHours(1), 0.8, 0.7, 2, 2);
        try (GarbageCollector gc = new GarbageCollector(policy, usage(0.1, 0.1))) {
            gc.track(alloc("running", null));
            gc.track(alloc("newer", T.plusSeconds(20)));
            gc.track(alloc("oldest", T));
            gc.track(alloc("middle", T.plusSeconds(10)));
            assertThat(gc.collect()).containsExactly("oldest", "middle");
            assertThat(destroyed).doesNotContain("running", "newer");
        }
    }

    @Test
    void runningAllocationsAreNeverCollectedEvenOverTheLimit() throws Exception {
        try (GarbageCollector gc =
                new GarbageCollector(new GcPolicy(Duration.ofHours(1), 0.8, 0.7, 0, 2), usage(0.99, 0.99))) {
            gc.track(alloc("a", null));
            gc.track(alloc("b", null));
            assertThat(gc.collect()).isEmpty();
        }
    }

    @Test
    void aFullDiskCollectsUntilUsageDropsBelowTheThreshold() throws Exception {
        DiskUsage shrinking = new DiskUsage() {
            @Override
            public double disk() {
                return 1.0 - 0.1 * destroyed.size(); // each collection frees a tenth of the disk
            }

            @Override
            public double inodes() {
                return 0.1;
            }
        };
        try (GarbageCollector gc =
                new GarbageCollector(new GcPolicy(Duration.ofHours(1), 0.8, 0.7, 50, 1), shrinking)) {
            gc.track(alloc("a", T));
            gc.track(alloc("b", T.plusSeconds(1)));
            gc.track(alloc("c", T.plusSeconds(2)));
            assertThat(gc.collect()).containsExactly("a", "b");
        }
    }

    @Test
    void becomingTerminalTriggersACollectionBeforeTheInterval() throws Exception {
        try (GarbageCollector gc =
                new GarbageCollector(new GcPolicy(Duration.ofHours(1), 0.8, 0.7, 0, 2), usage(0.1, 0.1))) {
            gc.track(alloc("done", T));
            gc.terminalChanged();
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> destroyed.contains("done"));
        }
    }

    @Test
    void realDiskUsageIsAFraction(@TempDir Path dir) throws Exception {
        DiskUsage u = DiskUsage.of(dir);
        assertThat(u.disk()).isBetween(0.0, 1.0);
        assertThat(u.inodes()).isBetween(0.0, 1.0);
    }
}
