package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How one transaction's mutations land: order, repeated keys, large groups. */
class SqliteKvStoreTest {

    @TempDir
    Path dataDir;

    private SqliteKvStore kv;

    @BeforeEach
    void open() {
        kv = SqliteKvStore.open(dataDir);
    }

    @AfterEach
    void close() {
        kv.close();
    }

    private static Mutation.Put put(Bucket bucket, String key, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        return new Mutation.Put(bucket, key, bytes, Blake2b.hash256(bytes));
    }

    private String read(Bucket bucket, String key) {
        return kv.get(bucket, key)
                .map(b -> new String(b, StandardCharsets.UTF_8))
                .orElse(null);
    }

    private static String mode(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }

    /** The store holds every allocation's env values, secrets included: its files are the owner's only. */
    @Test
    void theStoreItsLogFilesAndItsDirectoryAreTheOwnersOnly() throws Exception {
        Path dir = dataDir.resolve("fresh");
        SqliteKvStore store = SqliteKvStore.open(dir);
        try {
            store.submit(List.of(put(Bucket.TASK_STATE, "default/web/main", "secret")))
                    .join();
            assertThat(mode(dir)).isEqualTo("rwx------");
            assertThat(mode(dir.resolve("state.db"))).isEqualTo("rw-------");
            assertThat(mode(dir.resolve("state.db-wal"))).isEqualTo("rw-------");
            assertThat(mode(dir.resolve("state.db-shm"))).isEqualTo("rw-------");
        } finally {
            store.close();
        }
    }

    /** A data dir and store an older agent made with the umask are tightened when the store opens. */
    @Test
    void anExistingStoreAndDirectoryAreTightenedAtOpen() throws Exception {
        Path dir = dataDir.resolve("old");
        SqliteKvStore.open(dir).close();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        Files.setPosixFilePermissions(dir.resolve("state.db"), PosixFilePermissions.fromString("rw-rw-rw-"));
        SqliteKvStore.open(dir).close();
        assertThat(mode(dir)).isEqualTo("rwx------");
        assertThat(mode(dir.resolve("state.db"))).isEqualTo("rw-------");
    }

    @Test
    void lastPutOfAKeyInOneTransactionWins() {
        kv.submit(List.of(
                        put(Bucket.TASK_STATE, "default/web/main", "1"),
                        put(Bucket.TASK_STATE, "default/web/other", "x"),
                        put(Bucket.TASK_STATE, "default/web/main", "2")))
                .join();

        assertThat(read(Bucket.TASK_STATE, "default/web/main")).isEqualTo("2");
        assertThat(read(Bucket.TASK_STATE, "default/web/other")).isEqualTo("x");
        assertThat(kv.transactions()).isEqualTo(1);
    }

    @Test
    void putsAndDeletesApplyInTheOrderGiven() {
        kv.submit(List.of(
                        put(Bucket.TASK_STATE, "default/web/main", "before"),
                        new Mutation.DeletePrefix(Bucket.TASK_STATE, "default/web/"),
                        put(Bucket.TASK_STATE, "default/web/sidecar", "after"),
                        put(Bucket.ALLOC, "default/web", "spec"),
                        new Mutation.Delete(Bucket.ALLOC, "default/web")))
                .join();

        assertThat(read(Bucket.TASK_STATE, "default/web/main")).isNull();
        assertThat(read(Bucket.TASK_STATE, "default/web/sidecar")).isEqualTo("after");
        assertThat(read(Bucket.ALLOC, "default/web")).isNull();
    }

    @Test
    void prefixDeleteStopsAtTheAllocationBoundary() {
        kv.submit(List.of(
                        put(Bucket.TASK_STATE, "default/web/main", "a"),
                        put(Bucket.TASK_STATE, "default/web-2/main", "b"),
                        put(Bucket.TASK_STATE, "default/web0/main", "c"),
                        put(Bucket.TASK_LOCAL, "default/web/main", "d")))
                .join();

        kv.submit(List.of(new Mutation.DeletePrefix(Bucket.TASK_STATE, "default/web/")))
                .join();

        assertThat(kv.scan(Bucket.TASK_STATE).keySet()).containsExactly("default/web-2/main", "default/web0/main");
        assertThat(read(Bucket.TASK_LOCAL, "default/web/main")).isEqualTo("d");
    }

    @Test
    void groupLargerThanOneStatementIsWrittenCompletely() {
        List<Mutation> puts = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            puts.add(put(Bucket.TASK_STATE, "default/web/t" + i, "v" + i));
        }

        kv.submit(puts).join();

        assertThat(kv.scan(Bucket.TASK_STATE)).hasSize(100);
        assertThat(read(Bucket.TASK_STATE, "default/web/t99")).isEqualTo("v99");
    }
}
