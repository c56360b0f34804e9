package dev.drover.state;

import java.nio.file.Path;

/** Where a {@link StateDB} comes from: the durable one on disk, or one in memory for tests. */
public final class StateStores {

    private StateStores() {}

    /** The durable store in {@code dataDir/state.db}, created or upgraded as needed. */
    public static StateDB open(Path dataDir) {
        return new KvStateDB(SqliteKvStore.open(dataDir));
    }

    /** A store in memory, for tests. */
    public static StateDB inMemory() {
        return new KvStateDB(new MemoryKvStore());
    }
}
