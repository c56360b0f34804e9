package dev.drover.state;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.sqlite.SQLiteConfig;

/**
 * The durable key-value layer: one SQLite file in WAL mode with
 * {@code synchronous=FULL}, so a commit is on disk when it returns.
 *
 * <p>Writes go through a {@link GroupCommitter} on one connection. Reads use a
 * second connection straight against the file rather than an in-memory cache:
 * reads are rare (restore at start, {@code state dump}), WAL lets them run
 * beside the writer, and the store keeps no second copy of every value.
 */
final class SqliteKvStore implements KvStore {

    private static final int BUSY_TIMEOUT_MS = 5_000;

    private final Path file;
    private final Connection writeConnection;
    private final PreparedStatement put;
    private final PreparedStatement delete;
    private final PreparedStatement deleteRange;
    private final Statement control;
    private final Connection readConnection;
    private final ReentrantLock readLock = new ReentrantLock();
    private final AtomicLong transactions = new AtomicLong();
    private final GroupCommitter committer;
    private volatile boolean closed;

    private SqliteKvStore(Path file, Connection writeConnection, Connection readConnection) throws SQLException {
        this.file = file;
        this.writeConnection = writeConnection;
        this.readConnection = readConnection;
        this.put = writeConnection.prepareStatement("INSERT INTO kv (bucket, key, value, hash) VALUES (?, ?, ?, ?)"
                + " ON CONFLICT (bucket, key) DO UPDATE SET value = excluded.value, hash = excluded.hash");
        this.delete = writeConnection.prepareStatement("DELETE FROM kv WHERE bucket = ? AND key = ?");
        this.deleteRange = writeConnection.prepareStatement("DELETE FROM kv WHERE bucket = ? AND key >= ? AND key < ?");
        this.control = writeConnection.createStatement();
        this.committer = new GroupCommitter(file.toString(), this::commit);
    }

    /** Opens (creating or upgrading) {@code dataDir/state.db}. */
    static SqliteKvStore open(Path dataDir) {
        Path file = dataDir.resolve(SqliteSchema.FILE_NAME);
        try {
            Files.createDirectories(dataDir);
        } catch (IOException e) {
            throw new StateStoreException("could not create data dir " + dataDir + ": " + e.getMessage(), e);
        }
        Connection writer = null;
        Connection reader = null;
        try {
            writer = connect(file, false);
            SqliteSchema.prepare(writer, file);
            reader = connect(file, true);
            return new SqliteKvStore(file, writer, reader);
        } catch (SQLException e) {
            closeQuietly(reader);
            closeQuietly(writer);
            throw new StateStoreException("could not open state store " + file + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeQuietly(reader);
            closeQuietly(writer);
            throw e;
        }
    }

    static Connection connect(Path file, boolean readOnly) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setBusyTimeout(BUSY_TIMEOUT_MS);
        if (readOnly) {
            config.setReadOnly(true);
        } else {
            config.setJournalMode(SQLiteConfig.JournalMode.WAL);
            // FULL: in WAL mode each commit syncs the WAL, so an acknowledged write survives power loss.
            config.setSynchronous(SQLiteConfig.SynchronousMode.FULL);
        }
        return config.createConnection("jdbc:sqlite:" + file);
    }

    @Override
    public CompletableFuture<Void> submit(List<Mutation> mutations) {
        return committer.submit(mutations);
    }

    /** Runs on the writer thread only. */
    private void commit(List<Mutation> mutations) throws SQLException {
        control.execute("BEGIN IMMEDIATE");
        try {
            for (Mutation m : mutations) {
                apply(m);
            }
            control.execute("COMMIT");
            transactions.incrementAndGet();
        } catch (SQLException | RuntimeException e) {
            try {
                control.execute("ROLLBACK");
            } catch (SQLException rollback) {
                e.addSuppressed(rollback);
            }
            throw new SQLException("could not write state to " + file + ": " + e.getMessage()
                    + " (check free disk space and permissions of " + file.getParent() + ")", e);
        }
    }

    private void apply(Mutation m) throws SQLException {
        switch (m) {
            case Mutation.Put p -> {
                put.setString(1, p.bucket().storedName());
                put.setString(2, p.key());
                put.setBytes(3, p.value());
                put.setBytes(4, p.hash());
                put.executeUpdate();
            }
            case Mutation.Delete d -> {
                delete.setString(1, d.bucket().storedName());
                delete.setString(2, d.key());
                delete.executeUpdate();
            }
            case Mutation.DeletePrefix r -> {
                String prefix = r.prefix();
                // Keys from prefix up to (not including) the prefix with its last character incremented.
                String end = prefix.substring(0, prefix.length() - 1) + (char) (prefix.charAt(prefix.length() - 1) + 1);
                deleteRange.setString(1, r.bucket().storedName());
                deleteRange.setString(2, prefix);
                deleteRange.setString(3, end);
                deleteRange.executeUpdate();
            }
        }
    }

    @Override
    public Optional<byte[]> get(Bucket bucket, String key) {
        return read(c -> {
            try (PreparedStatement s = c.prepareStatement("SELECT value FROM kv WHERE bucket = ? AND key = ?")) {
                s.setString(1, bucket.storedName());
                s.setString(2, key);
                try (ResultSet rs = s.executeQuery()) {
                    return rs.next() ? Optional.of(rs.getBytes(1)) : Optional.empty();
                }
            }
        }, bucket.storedName() + "/" + key);
    }

    @Override
    public SortedMap<String, byte[]> scan(Bucket bucket) {
        return read(c -> {
            TreeMap<String, byte[]> entries = new TreeMap<>();
            try (PreparedStatement s = c.prepareStatement("SELECT key, value FROM kv WHERE bucket = ?")) {
                s.setString(1, bucket.storedName());
                try (ResultSet rs = s.executeQuery()) {
                    while (rs.next()) {
                        entries.put(rs.getString(1), rs.getBytes(2));
                    }
                }
            }
            return Collections.unmodifiableSortedMap(entries);
        }, "bucket " + bucket.storedName());
    }

    @Override
    public void forEachHash(HashConsumer consumer) {
        read(c -> {
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT bucket, key, hash FROM kv WHERE hash IS NOT NULL")) {
                while (rs.next()) {
                    consumer.accept(Bucket.fromStoredName(rs.getString(1)), rs.getString(2), rs.getBytes(3));
                }
            }
            return null;
        }, "value hashes");
    }

    @Override
    public int schemaVersion() {
        return SqliteSchema.CURRENT_VERSION;
    }

    @Override
    public long transactions() {
        return transactions.get();
    }

    private <T> T read(SqlFunction<T> query, String what) {
        readLock.lock();
        try {
            if (closed) {
                throw new IllegalStateException("state store " + file + " is closed");
            }
            return query.apply(readConnection);
        } catch (SQLException e) {
            throw new StateStoreException("could not read " + what + " from state store " + file + ": "
                    + e.getMessage(), e);
        } finally {
            readLock.unlock();
        }
    }

    @Override
    public void close() {
        committer.close();
        readLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            closeQuietly(readConnection);
            closeQuietly(writeConnection);
        } finally {
            readLock.unlock();
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception ignored) {
                // Closing after a failure; the original error is what the caller needs to see.
            }
        }
    }

    @FunctionalInterface
    private interface SqlFunction<T> {
        T apply(Connection c) throws SQLException;
    }
}
