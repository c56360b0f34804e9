package dev.drover.state;

import dev.drover.common.Backoff;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A key-value layer that fails writes on demand as a full disk would, over a real one. Public, with
 * {@link #stateDB}, so tests of other packages can give runners and controllers a store that fails.
 */
public final class FailingKvStore implements KvStore {

    /** What SQLite says when the disk is full. */
    public static final String DISK_FULL =
            "[SQLITE_FULL] Insertion failed because database is full" + " (database or disk is full)";

    private final KvStore inner;
    private final AtomicInteger failNext = new AtomicInteger();
    private volatile boolean failing;
    private final AtomicLong failed = new AtomicLong();

    private FailingKvStore(KvStore inner) {
        this.inner = inner;
    }

    public static FailingKvStore inMemory() {
        return new FailingKvStore(new MemoryKvStore());
    }

    public static FailingKvStore sqlite(Path dataDir) {
        return new FailingKvStore(SqliteKvStore.open(dataDir));
    }

    /** A state store over this layer, retrying failed writes after {@code firstRetry} (doubling to 20x that). */
    public StateDB stateDB(Duration firstRetry) {
        return new KvStateDB(this, Backoff.from(firstRetry, firstRetry.multipliedBy(20)));
    }

    /** The next {@code n} writes fail, then writes succeed again. */
    public void failNext(int n) {
        failNext.set(n);
    }

    /** Every write fails until {@link #recover}. */
    public void fail() {
        failing = true;
    }

    public void recover() {
        failing = false;
        failNext.set(0);
    }

    /** How many writes failed so far. */
    public long failed() {
        return failed.get();
    }

    @Override
    public CompletableFuture<Void> submit(List<Mutation> mutations) {
        if (failing || failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            failed.incrementAndGet();
            return CompletableFuture.failedFuture(new java.sql.SQLException(DISK_FULL));
        }
        return inner.submit(mutations);
    }

    @Override
    public Optional<byte[]> get(Bucket bucket, String key) {
        return inner.get(bucket, key);
    }

    @Override
    public SortedMap<String, byte[]> scan(Bucket bucket) {
        return inner.scan(bucket);
    }

    @Override
    public void forEachHash(HashConsumer consumer) {
        inner.forEachHash(consumer);
    }

    @Override
    public int schemaVersion() {
        return inner.schemaVersion();
    }

    @Override
    public long transactions() {
        return inner.transactions();
    }

    @Override
    public void close() {
        inner.close();
    }
}
