package dev.drover.state;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The layout of {@code state.db} and how older layouts are brought up to date.
 *
 * <ul>
 *   <li>v1: a {@code meta} table (schema version) and one {@code kv} table, bucket and key to value.</li>
 *   <li>v2: {@code kv} keeps each value's BLAKE2b-256 in a {@code hash} column. Opening a store primes
 *       write deduplication from these 32-byte hashes instead of reading and hashing every value, so
 *       agent start-up does not slow down as stored allocation specs grow.</li>
 * </ul>
 *
 * A store newer than this binary is refused; an older one is copied to
 * {@code state.db.bak-v<N>} and then upgraded in one transaction.
 */
final class SqliteSchema {

    static final int CURRENT_VERSION = 2;
    static final String FILE_NAME = "state.db";

    /** The first layout; new stores are created by applying every step from here. */
    static final List<String> V1_DDL = List.of(
            "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
            "CREATE TABLE kv (bucket TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,"
                    + " PRIMARY KEY (bucket, key)) WITHOUT ROWID",
            "INSERT INTO meta (name, value) VALUES ('schema_version', '1')");

    private SqliteSchema() {}

    static Path backupPath(Path file, int version) {
        return file.resolveSibling(file.getFileName() + ".bak-v" + version);
    }

    /** Brings the store at {@code file} to {@link #CURRENT_VERSION}, or refuses it. */
    static void prepare(Connection c, Path file) throws SQLException {
        int found = readVersion(c, file);
        requireSupported(found, file);
        if (found == CURRENT_VERSION) {
            return;
        }
        if (found > 0) {
            backup(c, file, found);
        }
        try (Statement s = c.createStatement()) {
            s.execute("BEGIN IMMEDIATE");
            try {
                // Read again inside the write lock: another process may have upgraded meanwhile.
                int version = readVersion(c, file);
                requireSupported(version, file);
                for (int next = version + 1; next <= CURRENT_VERSION; next++) {
                    upgradeTo(next, c);
                }
                s.execute("COMMIT");
            } catch (SQLException | RuntimeException e) {
                s.execute("ROLLBACK");
                throw e;
            }
        }
    }

    static void requireSupported(int found, Path file) {
        if (found > CURRENT_VERSION) {
            throw new StateSchemaException("state store " + file + " has schema version " + found
                    + ", but this Drover agent supports versions up to " + CURRENT_VERSION
                    + ". It was written by a newer Drover agent: run that version (or newer) with this data dir,"
                    + " or move " + file + " aside to start with an empty store (running tasks will then not be"
                    + " reattached).");
        }
    }

    /** 0 for an empty database; refuses a database that is not a Drover store. */
    static int readVersion(Connection c, Path file) throws SQLException {
        List<String> tables = new ArrayList<>();
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT name FROM sqlite_master WHERE type = 'table'")) {
            while (rs.next()) {
                tables.add(rs.getString(1));
            }
        }
        if (tables.isEmpty()) {
            return 0;
        }
        if (!tables.contains("meta")) {
            throw new StateSchemaException(file + " is an SQLite database but not a Drover state store (no meta table,"
                    + " tables " + tables + "): point --data-dir at the agent's own data directory.");
        }
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT value FROM meta WHERE name = 'schema_version'")) {
            String value = rs.next() ? rs.getString(1) : null;
            try {
                return Integer.parseInt(String.valueOf(value));
            } catch (NumberFormatException e) {
                throw new StateSchemaException(
                        "state store " + file + " has schema_version '" + value
                                + "' in its meta table, which is not a number: the file is damaged; restore "
                                + file.getFileName() + ".bak-v* if there is one, or move it aside to start empty.",
                        e);
            }
        }
    }

    private static void upgradeTo(int version, Connection c) throws SQLException {
        switch (version) {
            case 1 -> {
                try (Statement s = c.createStatement()) {
                    for (String ddl : V1_DDL) {
                        s.execute(ddl);
                    }
                }
            }
            case 2 -> upgradeToV2(c);
            default -> throw new IllegalStateException("no upgrade step to schema version " + version);
        }
    }

    private static void upgradeToV2(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("ALTER TABLE kv ADD COLUMN hash BLOB");
        }
        List<Object[]> rows = new ArrayList<>();
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT bucket, key, value FROM kv")) {
            while (rs.next()) {
                rows.add(new Object[] {rs.getString(1), rs.getString(2), rs.getBytes(3)});
            }
        }
        try (PreparedStatement update = c.prepareStatement("UPDATE kv SET hash = ? WHERE bucket = ? AND key = ?")) {
            for (Object[] row : rows) {
                update.setBytes(1, Blake2b.hash256((byte[]) row[2]));
                update.setString(2, (String) row[0]);
                update.setString(3, (String) row[1]);
                update.executeUpdate();
            }
        }
        try (Statement s = c.createStatement()) {
            s.execute("UPDATE meta SET value = '2' WHERE name = 'schema_version'");
        }
    }

    /** A consistent copy of the store before it is changed, even with a WAL in use. */
    private static void backup(Connection c, Path file, int version) throws SQLException {
        Path target = backupPath(file, version);
        Path partial = target.resolveSibling(target.getFileName() + ".partial");
        try {
            Files.deleteIfExists(partial);
            PrivateFiles.file(partial); // VACUUM INTO fills an empty file, keeping its owner-only mode
            try (PreparedStatement vacuum = c.prepareStatement("VACUUM INTO ?")) {
                vacuum.setString(1, partial.toString());
                vacuum.execute();
            }
            // An older backup of the same version is replaced: the store being upgraded is newer than it.
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new StateStoreException(
                    "could not back up state store " + file + " to " + target
                            + " before upgrading it from schema version " + version + ": " + e.getMessage()
                            + "; free disk space or fix permissions in " + file.getParent() + " and start again.",
                    e);
        }
    }
}
