package dev.drover.state;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
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
    private static final int ROWS_PER_STATEMENT = 32;
    /** Where entries that cannot be read are moved ({@link Mutation.Quarantine}). */
    static final String QUARANTINE_TABLE = "quarantine";

    private final Path file;
    private final Connection writeConnection;
    /** Multi-row upserts by row count, prepared on first use and reused. */
    private final PreparedStatement[] upserts = new PreparedStatement[ROWS_PER_STATEMENT + 1];

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
        this.delete = writeConnection.prepareStatement("DELETE FROM kv WHERE bucket = ? AND key = ?");
        this.deleteRange = writeConnection.prepareStatement("DELETE FROM kv WHERE bucket = ? AND key >= ? AND key < ?");
        this.control = writeConnection.createStatement();
        this.committer = new GroupCommitter(file.toString(), new WriterSink());
    }

    /** Opens (creating or upgrading) {@code dataDir/state.db}. */
    static SqliteKvStore open(Path dataDir) {
        Path file = dataDir.resolve(SqliteSchema.FILE_NAME);
        try {
            PrivateFiles.directory(dataDir);
            PrivateFiles.file(file);
            for (String suffix : List.of("-wal", "-shm")) { // SQLite gives these the store's mode when it makes them
                Path companion = file.resolveSibling(file.getFileName() + suffix);
                if (Files.exists(companion, LinkOption.NOFOLLOW_LINKS)) {
                    PrivateFiles.file(companion);
                }
            }
        } catch (IOException e) {
            throw new StateStoreException(
                    "could not create data dir " + dataDir + " and its store, readable by" + " the agent's user only: "
                            + e.getMessage(),
                    e);
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
            throw new StateStoreException(
                    "could not open state store " + file + ": " + e.getMessage()
                            + ". If the file is damaged, move it aside (and restore a " + SqliteSchema.FILE_NAME
                            + ".bak-v* copy if there is one) to start with an empty store; running tasks will then not be"
                            + " reattached.",
                    e);
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

    /** The writer thread's transactions; runs on that thread only. */
    private final class WriterSink implements GroupCommitter.Sink {

        @Override
        public void begin() throws SQLException {
            run(() -> control.execute("BEGIN IMMEDIATE"));
        }

        @Override
        public void apply(List<Mutation> mutations) throws SQLException {
            run(() -> applyAll(mutations));
        }

        @Override
        public void commit() throws SQLException {
            run(() -> control.execute("COMMIT"));
            transactions.incrementAndGet();
        }

        @Override
        public void rollback() {
            try {
                control.execute("ROLLBACK");
            } catch (SQLException ignored) {
                // Nothing open to roll back: the BEGIN failed, or SQLite already ended the transaction itself.
            }
        }

        private void run(SqlAction action) throws SQLException {
            try {
                action.run();
            } catch (SQLException | RuntimeException e) {
                throw new SQLException(
                        "could not write state to " + file + ": " + e.getMessage()
                                + " (check free disk space and permissions of " + file.getParent() + ")",
                        e);
            }
        }
    }

    @FunctionalInterface
    private interface SqlAction {
        void run() throws SQLException;
    }

    /**
     * Puts go in as multi-row upserts (one statement per up to {@link #ROWS_PER_STATEMENT} rows, fewer
     * native calls per group); a put followed by another of the same key in the group is superseded, and
     * an upsert may not touch a row twice. Deletes split the runs, so order is kept.
     */
    private void applyAll(List<Mutation> mutations) throws SQLException {
        LinkedHashMap<String, Mutation.Put> run = new LinkedHashMap<>();
        for (Mutation m : mutations) {
            switch (m) {
                case Mutation.Put p -> {
                    String id = p.bucket().storedName() + '\n' + p.key();
                    run.remove(id);
                    run.put(id, p);
                }
                case Mutation.Delete d -> {
                    upsert(run.values());
                    run.clear();
                    delete.setString(1, d.bucket().storedName());
                    delete.setString(2, d.key());
                    delete.executeUpdate();
                }
                case Mutation.DeletePrefix r -> {
                    upsert(run.values());
                    run.clear();
                    String prefix = r.prefix();
                    // Keys from prefix up to (not including) the prefix with its last character incremented.
                    String end =
                            prefix.substring(0, prefix.length() - 1) + (char) (prefix.charAt(prefix.length() - 1) + 1);
                    deleteRange.setString(1, r.bucket().storedName());
                    deleteRange.setString(2, prefix);
                    deleteRange.setString(3, end);
                    deleteRange.executeUpdate();
                }
                case Mutation.Quarantine q -> {
                    upsert(run.values());
                    run.clear();
                    quarantine(q);
                }
            }
        }
        upsert(run.values());
    }

    /**
     * Copies the entry into the {@code quarantine} table (made on first use, and rare: a store without one
     * reads as before, so the schema version stays) and removes it from {@code kv}, in the open transaction.
     */
    private void quarantine(Mutation.Quarantine q) throws SQLException {
        control.execute("CREATE TABLE IF NOT EXISTS " + QUARANTINE_TABLE + " (bucket TEXT NOT NULL, key TEXT NOT NULL,"
                + " value BLOB NOT NULL, reason TEXT NOT NULL, at TEXT NOT NULL)");
        try (PreparedStatement copy = writeConnection.prepareStatement("INSERT INTO " + QUARANTINE_TABLE
                + " (bucket, key, value, reason, at) SELECT bucket, key, value, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"
                + " FROM kv WHERE bucket = ? AND key = ?")) {
            copy.setString(1, q.reason());
            copy.setString(2, q.bucket().storedName());
            copy.setString(3, q.key());
            copy.executeUpdate();
        }
        delete.setString(1, q.bucket().storedName());
        delete.setString(2, q.key());
        delete.executeUpdate();
    }

    private void upsert(Collection<Mutation.Put> puts) throws SQLException {
        Iterator<Mutation.Put> it = puts.iterator();
        int left = puts.size();
        while (left > 0) {
            int rows = Math.min(left, ROWS_PER_STATEMENT);
            PreparedStatement statement = upsertStatement(rows);
            int i = 1;
            for (int r = 0; r < rows; r++) {
                Mutation.Put p = it.next();
                statement.setString(i++, p.bucket().storedName());
                statement.setString(i++, p.key());
                statement.setBytes(i++, p.value());
                statement.setBytes(i++, p.hash());
            }
            statement.executeUpdate();
            left -= rows;
        }
    }

    private PreparedStatement upsertStatement(int rows) throws SQLException {
        PreparedStatement statement = upserts[rows];
        if (statement == null) {
            String values = String.join(", ", Collections.nCopies(rows, "(?, ?, ?, ?)"));
            statement = writeConnection.prepareStatement("INSERT INTO kv (bucket, key, value, hash) VALUES " + values
                    + " ON CONFLICT (bucket, key) DO UPDATE SET value = excluded.value, hash = excluded.hash");
            upserts[rows] = statement;
        }
        return statement;
    }

    @Override
    public Optional<byte[]> get(Bucket bucket, String key) {
        return read(
                c -> {
                    try (PreparedStatement s =
                            c.prepareStatement("SELECT value FROM kv WHERE bucket = ? AND key = ?")) {
                        s.setString(1, bucket.storedName());
                        s.setString(2, key);
                        try (ResultSet rs = s.executeQuery()) {
                            return rs.next() ? Optional.of(rs.getBytes(1)) : Optional.empty();
                        }
                    }
                },
                bucket.storedName() + "/" + key);
    }

    @Override
    public SortedMap<String, byte[]> scan(Bucket bucket) {
        return read(
                c -> {
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
                },
                "bucket " + bucket.storedName());
    }

    @Override
    public void forEachHash(HashConsumer consumer) {
        read(
                c -> {
                    try (Statement s = c.createStatement();
                            ResultSet rs = s.executeQuery("SELECT bucket, key, hash FROM kv WHERE hash IS NOT NULL")) {
                        while (rs.next()) {
                            consumer.accept(Bucket.fromStoredName(rs.getString(1)), rs.getString(2), rs.getBytes(3));
                        }
                    }
                    return null;
                },
                "value hashes");
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
            throw new StateStoreException(
                    "could not read " + what + " from state store " + file + ": " + e.getMessage(), e);
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
