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

    /** A store that commits at once and was opened on {@code primed} (key and value) in the task-state bucket. */
    private static ManualKvStore committing(java.util.Map<String, String> primed) {
        return new ManualKvStore() {
            @Override
            public CompletableFuture<Void> submit(List<Mutation> mutations) {
                submitted.add(mutations);
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public void forEachHash(HashConsumer consumer) {
                primed.forEach((key, value) -> consumer.accept(Bucket.TASK_STATE, key, Blake2b.hash256(bytes(value))));
            }
        };
    }

    /** A store opened on {@code primed}, after deleting allocation default/web and putting every value again. */
    private static DeduplicatingStore deleteWebAndPutAgain(java.util.Map<String, String> primed) {
        DeduplicatingStore store = new DeduplicatingStore(committing(primed));
        store.delete(List.of(new Mutation.DeletePrefix(Bucket.TASK_STATE, "default/web/")));
        primed.forEach((key, value) -> store.put(Bucket.TASK_STATE, key, bytes(value)));
        return store;
    }

    @Test
    void deletionForgetsTheHashesReadFromTheStoreAtOpenToo() {
        DeduplicatingStore store = deleteWebAndPutAgain(java.util.Map.of(
                "default/web/main", "s",
                "default/web/sidecar", "t",
                "default/web-2/main", "s"));

        // the deleted allocation's values are written again; the other allocation's is still known
        assertThat(store.stats())
                .extracting(StateStats::writes, StateStats::deduplicated)
                .containsExactly(2L, 1L);
    }

    @Test
    void deletionForgetsAKeyOfAnOddShapeFromADamagedStore() {
        // a task key with a '/' in its task part is not one the agent writes, but the store may hold one
        DeduplicatingStore store = deleteWebAndPutAgain(java.util.Map.of(
                "default/web/main/extra", "s",
                "default/web/main", "s",
                "default/web-2/main", "s"));

        assertThat(store.stats())
                .extracting(StateStats::writes, StateStats::deduplicated)
                .containsExactly(2L, 1L);
        // the odd key is known under "default/web/main", which the deletion of "default/web/" took too
        assertThat(store.indexedAllocations(Bucket.TASK_STATE)).isEqualTo(3);
    }

    @Test
    void deletedAllocationsLeaveNothingBehindInTheIndex() {
        DeduplicatingStore store = new DeduplicatingStore(committing(java.util.Map.of()));
        for (int i = 0; i < 1_000; i++) {
            store.put(Bucket.TASK_STATE, "default/a" + i + "/main", bytes("s" + i));
            store.put(Bucket.TASK_LOCAL, "default/a" + i + "/main", bytes("l" + i));
            store.put(Bucket.TASK_STATE, "default/a" + i + "/sidecar", bytes("t" + i));
        }
        assertThat(store.indexedAllocations(Bucket.TASK_STATE)).isEqualTo(1_000);

        for (int i = 0; i < 1_000; i++) {
            store.delete(List.of(
                    new Mutation.DeletePrefix(Bucket.TASK_LOCAL, "default/a" + i + "/"),
                    new Mutation.DeletePrefix(Bucket.TASK_STATE, "default/a" + i + "/")));
        }

        assertThat(store.indexedAllocations(Bucket.TASK_STATE)).isZero();
        assertThat(store.indexedAllocations(Bucket.TASK_LOCAL)).isZero();
        store.put(Bucket.TASK_STATE, "default/a7/main", bytes("s7"));
        assertThat(store.stats().deduplicated()).isZero();
    }

    @Test
    void aValueWrittenAgainByRetryIsForgottenByALaterDeletion() throws Exception {
        ManualKvStore kv = new ManualKvStore();
        DeduplicatingStore store = new DeduplicatingStore(kv);
        CompletableFuture<Void> failing =
                CompletableFuture.runAsync(() -> store.put(Bucket.TASK_STATE, "default/web/main", bytes("v1")));
        await().atMost(10, TimeUnit.SECONDS).until(() -> kv.futures.size() == 1);
        kv.futures.getFirst().completeExceptionally(new RuntimeException("disk full"));
        assertThatThrownBy(() -> failing.get(10, TimeUnit.SECONDS)).hasMessageContaining("disk full");

        CompletableFuture<Boolean> retried = CompletableFuture.supplyAsync(store::retry);
        await().atMost(10, TimeUnit.SECONDS).until(() -> kv.futures.size() == 2);
        kv.futures.get(1).complete(null);
        assertThat(retried.get(10, TimeUnit.SECONDS)).isTrue();

        CompletableFuture<Void> deleted = CompletableFuture.runAsync(
                () -> store.delete(List.of(new Mutation.DeletePrefix(Bucket.TASK_STATE, "default/web/"))));
        await().atMost(10, TimeUnit.SECONDS).until(() -> kv.futures.size() == 3);
        kv.futures.get(2).complete(null);
        deleted.get(10, TimeUnit.SECONDS);
        CompletableFuture<Void> again =
                CompletableFuture.runAsync(() -> store.put(Bucket.TASK_STATE, "default/web/main", bytes("v1")));
        await().atMost(10, TimeUnit.SECONDS).until(() -> kv.futures.size() == 4);
        kv.futures.get(3).complete(null);
        again.get(10, TimeUnit.SECONDS);

        assertThat(kv.submitted.get(3)).singleElement().isInstanceOf(Mutation.Put.class);
    }

    @Test
    void putsAndDeletionsRacingLeaveNoHashOfADeletedValue() throws Exception {
        DeduplicatingStore store = new DeduplicatingStore(committing(java.util.Map.of()));
        int allocations = 200;
        try (var threads = java.util.concurrent.Executors.newFixedThreadPool(4)) {
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (int i = 0; i < allocations; i++) {
                String alloc = "default/a" + (i % 20);
                int n = i;
                done.add(threads.submit(() -> store.put(Bucket.TASK_STATE, alloc + "/main", bytes("v" + n))));
                done.add(threads.submit(
                        () -> store.delete(List.of(new Mutation.DeletePrefix(Bucket.TASK_STATE, alloc + "/")))));
            }
            for (var f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        }
        // every allocation deleted once more, with nothing racing: no hash of theirs may survive, nor their keys
        for (int i = 0; i < 20; i++) {
            store.delete(List.of(new Mutation.DeletePrefix(Bucket.TASK_STATE, "default/a" + i + "/")));
        }
        for (int i = 0; i < 20; i++) {
            assertThat(store.remembers(Bucket.TASK_STATE, "default/a" + i + "/main"))
                    .isFalse();
        }
        assertThat(store.indexedAllocations(Bucket.TASK_STATE)).isZero();
    }
}
