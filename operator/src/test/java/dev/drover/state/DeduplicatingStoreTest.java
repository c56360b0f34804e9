package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class DeduplicatingStoreTest {

    /** A store whose commits the test completes or fails by hand. */
    static class ManualKvStore implements KvStore {
        final List<List<Mutation>> submitted = Collections.synchronizedList(new ArrayList<>());
        final List<CompletableFuture<Void>> futures = Collections.synchronizedList(new ArrayList<>());

        @Override
        public CompletableFuture<Void> submit(List<Mutation> mutations) {
            CompletableFuture<Void> f = new CompletableFuture<>();
            submitted.add(mutations);
            futures.add(f);
            return f;
        }

        @Override
        public Optional<byte[]> get(Bucket bucket, String key) {
            return Optional.empty();
        }

        @Override
        public SortedMap<String, byte[]> scan(Bucket bucket) {
            return new TreeMap<>();
        }

        @Override
        public void forEachHash(HashConsumer consumer) {}

        @Override
        public int schemaVersion() {
            return SqliteSchema.CURRENT_VERSION;
        }

        @Override
        public long transactions() {
            return futures.stream()
                    .filter(f -> f.isDone() && !f.isCompletedExceptionally())
                    .count();
        }

        @Override
        public void close() {}
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void failedWriteIsNotRememberedSoTheSameValueIsWrittenAgain() {
        ManualKvStore kv = new ManualKvStore();
        DeduplicatingStore store = new DeduplicatingStore(kv);
        CompletableFuture<Void> firstAttempt =
                CompletableFuture.runAsync(() -> store.put(Bucket.ALLOC, "default/web", bytes("v1")));
        await().atMost(10, TimeUnit.SECONDS).until(() -> kv.futures.size() == 1);

        kv.futures.getFirst().completeExceptionally(new IllegalStateException("disk full"));

        assertThatThrownBy(() -> firstAttempt.get(10, TimeUnit.SECONDS)).hasMessageContaining("disk full");
        CompletableFuture<Void> retry =
                CompletableFuture.runAsync(() -> store.put(Bucket.ALLOC, "default/web", bytes("v1")));
        await().atMost(10, TimeUnit.SECONDS).until(() -> kv.futures.size() == 2);
        kv.futures.get(1).complete(null);
        retry.join();
        assertThat(store.stats().deduplicated()).isZero();
    }

    @Test
    void duplicateOfAWriteStillInFlightWaitsForItWithoutWritingAgain() throws Exception {
        ManualKvStore kv = new ManualKvStore();
        DeduplicatingStore store = new DeduplicatingStore(kv);
        CompletableFuture<Void> first =
                CompletableFuture.runAsync(() -> store.put(Bucket.ALLOC, "default/web", bytes("v1")));
        await().atMost(10, TimeUnit.SECONDS).until(() -> kv.futures.size() == 1);

        CompletableFuture<Void> duplicate =
                CompletableFuture.runAsync(() -> store.put(Bucket.ALLOC, "default/web", bytes("v1")));
        await().atMost(10, TimeUnit.SECONDS).until(() -> store.stats().deduplicated() == 1);
        assertThat(duplicate).as("not durable yet, so not acknowledged yet").isNotDone();

        kv.futures.getFirst().complete(null);
        duplicate.get(10, TimeUnit.SECONDS);
        first.get(10, TimeUnit.SECONDS);
        assertThat(kv.submitted).hasSize(1);
    }

    @Test
    void deleteForgetsHashesOfTheDeletedKeysOnly() {
        ManualKvStore kv = new ManualKvStore() {
            @Override
            public CompletableFuture<Void> submit(List<Mutation> mutations) {
                submitted.add(mutations);
                return CompletableFuture.completedFuture(null);
            }
        };
        DeduplicatingStore store = new DeduplicatingStore(kv);
        store.put(Bucket.TASK_STATE, "default/web/main", bytes("s"));
        store.put(Bucket.TASK_STATE, "default/web-2/main", bytes("s"));

        store.delete(List.of(new Mutation.DeletePrefix(Bucket.TASK_STATE, "default/web/")));
        store.put(Bucket.TASK_STATE, "default/web/main", bytes("s"));
        store.put(Bucket.TASK_STATE, "default/web-2/main", bytes("s"));

        assertThat(store.stats())
                .extracting(StateStats::writes, StateStats::deduplicated, StateStats::deletes)
                .containsExactly(3L, 1L, 1L);
    }
}
