package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class GroupCommitterTest {

    /** Records each transaction; can hold the first one open to let others queue behind it. */
    private final List<List<String>> transactions = Collections.synchronizedList(new ArrayList<>());

    private final CountDownLatch firstCommitStarted = new CountDownLatch(1);
    private final CountDownLatch releaseFirstCommit = new CountDownLatch(1);
    private volatile boolean holdFirst;
    private volatile String failOnKey;
    private GroupCommitter committer;

    /** Records each committed transaction's keys; fails on failOnKey; can hold the first commit open. */
    private final class RecordingSink implements GroupCommitter.Sink {
        private List<String> open;

        @Override
        public void begin() {
            open = new ArrayList<>();
        }

        @Override
        public void apply(List<Mutation> mutations) {
            for (Mutation m : mutations) {
                String key = ((Mutation.Put) m).key();
                if (key.equals(failOnKey)) {
                    throw new IllegalStateException("disk full while writing " + key);
                }
                open.add(key);
            }
        }

        @Override
        public void commit() throws InterruptedException {
            if (holdFirst && firstCommitStarted.getCount() > 0) {
                firstCommitStarted.countDown();
                releaseFirstCommit.await();
            }
            transactions.add(List.copyOf(open));
            open = null;
        }

        @Override
        public void rollback() {
            open = null;
        }
    }

    private static List<Mutation> put(String key) {
        byte[] value = key.getBytes(StandardCharsets.UTF_8);
        return List.of(new Mutation.Put(Bucket.TASK_STATE, key, value, Blake2b.hash256(value)));
    }

    @AfterEach
    void close() {
        releaseFirstCommit.countDown();
        if (committer != null) {
            committer.close();
        }
    }

    @Test
    void loneWriteIsCommittedAtOnceInItsOwnTransaction() throws Exception {
        committer = new GroupCommitter("test", new RecordingSink());

        committer.submit(put("a")).get(10, TimeUnit.SECONDS);

        assertThat(transactions).containsExactly(List.of("a"));
    }

    @Test
    void writesQueuedDuringACommitShareTheNextTransaction() throws Exception {
        holdFirst = true;
        committer = new GroupCommitter("test", new RecordingSink());
        CompletableFuture<Void> first = committer.submit(put("first"));
        firstCommitStarted.await();

        List<CompletableFuture<Void>> queued = new ArrayList<>();
        for (String key : List.of("b", "c", "d", "e")) {
            queued.add(committer.submit(put(key)));
        }
        assertThat(queued).noneMatch(CompletableFuture::isDone);
        releaseFirstCommit.countDown();
        CompletableFuture.allOf(queued.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);

        assertThat(first).isCompleted();
        assertThat(transactions).containsExactly(List.of("first"), List.of("b", "c", "d", "e"));
    }

    @Test
    void loneWriteAfterAGroupWaitsForCompanyOnlyBriefly() throws Exception {
        holdFirst = true;
        committer = new GroupCommitter("test", new RecordingSink());
        committer.submit(put("first"));
        firstCommitStarted.await();
        List<CompletableFuture<Void>> group = List.of(committer.submit(put("b")), committer.submit(put("c")));
        releaseFirstCommit.countDown();
        CompletableFuture.allOf(group.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);

        long start = System.nanoTime();
        committer.submit(put("alone")).get(10, TimeUnit.SECONDS);

        // The committer expected two writers again; it waits at most MAX_GATHER (2 ms) for the second.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(1));
        assertThat(transactions).containsExactly(List.of("first"), List.of("b", "c"), List.of("alone"));
    }

    @Test
    void failingBatchFailsAloneNotTheWritersItWasGroupedWith() throws Exception {
        holdFirst = true;
        committer = new GroupCommitter("test", new RecordingSink());
        committer.submit(put("first"));
        firstCommitStarted.await();
        failOnKey = "bad";
        CompletableFuture<Void> good1 = committer.submit(put("good1"));
        CompletableFuture<Void> bad = committer.submit(put("bad"));
        CompletableFuture<Void> good2 = committer.submit(put("good2"));
        releaseFirstCommit.countDown();

        good1.get(10, TimeUnit.SECONDS);
        good2.get(10, TimeUnit.SECONDS);
        assertThatThrownBy(() -> bad.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasMessageContaining("disk full while writing bad");
        assertThat(transactions).containsExactly(List.of("first"), List.of("good1"), List.of("good2"));
    }

    @Test
    void closeCommitsWhatIsQueuedThenJoinsTheWriterThread() throws Exception {
        holdFirst = true;
        committer = new GroupCommitter("test", new RecordingSink());
        committer.submit(put("first"));
        firstCommitStarted.await();
        CompletableFuture<Void> queued = committer.submit(put("queued"));
        Thread closer = Thread.ofPlatform().start(committer::close);
        await().atMost(10, TimeUnit.SECONDS).until(() -> closer.getState() == Thread.State.WAITING);

        releaseFirstCommit.countDown();
        closer.join();

        assertThat(queued).isCompleted();
        assertThat(transactions).containsExactly(List.of("first"), List.of("queued"));
        assertThat(StateDBContractTest.liveStoreThreads()).isEmpty();
        assertThatThrownBy(() -> committer.submit(put("late")))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("state store test is closed");
    }
}
