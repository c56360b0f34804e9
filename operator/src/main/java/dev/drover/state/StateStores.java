package dev.drover.state;

import java.io.IOException;
import java.nio.file.Path;

/** Where a {@link StateDB} comes from: the durable one on disk, or one in memory for tests. */
public final class StateStores {

    private StateStores() {}

    /** The durable store in {@code dataDir/state.db}, created or upgraded as needed. */
    public static StateDB open(Path dataDir) {
        return new KvStateDB(SqliteKvStore.open(dataDir));
    }

    /**
     * The agent's store: {@code dataDir} made the agent's own first (0700, an existing one too: it holds the store and
     * every task's files), SQLite's library kept there ({@link SqliteLibrary}), then {@link #open}.
     */
    public static StateDB openAgents(Path dataDir) throws IOException {
        PrivateFiles.directory(dataDir);
        SqliteLibrary.keepIn(dataDir);
        return open(dataDir);
    }

    /** A store in memory, for tests. */
    public static StateDB inMemory() {
        return new KvStateDB(new MemoryKvStore());
    }
}
