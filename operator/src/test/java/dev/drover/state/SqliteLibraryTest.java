package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.JarURLConnection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.util.LibraryLoaderUtil;

class SqliteLibraryTest {

    private static final String NAME = LibraryLoaderUtil.getNativeLibName();

    @TempDir
    Path dataDir;

    @Test
    void theLibraryIsCopiedOnceIntoPrivateDirectoriesAndCheckedAtEachStart() throws Exception {
        Path dir = SqliteLibrary.keep(dataDir, NAME).orElseThrow();
        Path lib = dir.resolve(NAME);

        assertThat(dir.getParent()).isEqualTo(dataDir.resolve("lib"));
        assertThat(SqliteLibrary.isCopy(lib, entry())).isTrue();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(lib)))
                .isEqualTo("r-x------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)))
                .isEqualTo("rwx------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.getParent())))
                .isEqualTo("rwx------");
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files).containsExactly(lib); // no partial copy left behind
        }

        FileTime written = FileTime.fromMillis(1_000_000);
        Files.setLastModifiedTime(lib, written);
        assertThat(SqliteLibrary.keep(dataDir, NAME)).contains(dir);
        assertThat(Files.getLastModifiedTime(lib))
                .as("a good copy is not written again")
                .isEqualTo(written);
    }

    @Test
    void aDamagedCopyIsWrittenAgain() throws Exception {
        Path lib = SqliteLibrary.keep(dataDir, NAME).orElseThrow().resolve(NAME);
        byte[] bytes = Files.readAllBytes(lib);
        bytes[bytes.length / 2] ^= 1; // the same size, another CRC
        Files.setPosixFilePermissions(lib, PosixFilePermissions.fromString("rw-------"));
        Files.write(lib, bytes);

        SqliteLibrary.keep(dataDir, NAME);

        assertThat(SqliteLibrary.isCopy(lib, entry())).isTrue();
    }

    @Test
    void aCopyOthersCanWriteIsReplaced() throws Exception {
        Path lib = SqliteLibrary.keep(dataDir, NAME).orElseThrow().resolve(NAME);
        Files.setPosixFilePermissions(lib, PosixFilePermissions.fromString("r-x-w----"));
        assertThat(SqliteLibrary.isCopy(lib, entry())).isFalse();

        SqliteLibrary.keep(dataDir, NAME);

        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(lib)))
                .isEqualTo("r-x------");
    }

    @Test
    void aLinkInPlaceOfTheLibraryIsReplacedAndItsTargetLeftAlone() throws Exception {
        Path lib = SqliteLibrary.keep(dataDir, NAME).orElseThrow().resolve(NAME);
        Path elsewhere = Files.writeString(dataDir.resolve("elsewhere"), "not a library");
        Files.delete(lib);
        Files.createSymbolicLink(lib, elsewhere);

        SqliteLibrary.keep(dataDir, NAME);

        assertThat(Files.isSymbolicLink(lib)).isFalse();
        assertThat(SqliteLibrary.isCopy(lib, entry())).isTrue();
        assertThat(Files.readString(elsewhere)).isEqualTo("not a library");
    }

    @Test
    void aLinkInPlaceOfItsDirectoryIsRefusedNotFollowed() throws Exception {
        Path elsewhere = Files.createDirectory(dataDir.resolve("elsewhere"));
        Files.createSymbolicLink(dataDir.resolve("lib"), elsewhere);

        assertThatThrownBy(() -> SqliteLibrary.keep(dataDir, NAME))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not a directory");
        try (Stream<Path> files = Files.list(elsewhere)) {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void copiesOfOtherBuildsAreRemoved() throws Exception {
        Path old = Files.createDirectories(dataDir.resolve("lib").resolve("sqlite-1234-99"));
        Files.writeString(old.resolve(NAME), "an older driver's library");
        Path kept = Files.writeString(dataDir.resolve("lib").resolve("unrelated"), "left alone");

        Path dir = SqliteLibrary.keep(dataDir, NAME).orElseThrow();

        assertThat(old).doesNotExist();
        assertThat(kept).exists();
        assertThat(dir).exists();
    }

    @Test
    void theAgentsStoreLoadsSqliteFromTheDataDirAndWritesNothingToTheTempDir() throws Exception {
        Path tmp = Files.createDirectory(dataDir.resolve("tmp"));
        Path data = dataDir.resolve("data");

        String first = openInChild(data, tmp);
        Path lib = data.resolve("lib");
        Path copy;
        try (Stream<Path> dirs = Files.list(lib)) {
            copy = dirs.findFirst().orElseThrow().resolve(NAME);
        }
        FileTime written = Files.getLastModifiedTime(copy, LinkOption.NOFOLLOW_LINKS);
        String second = openInChild(data, tmp);

        assertThat(first).contains("opened, library from " + copy.getParent());
        assertThat(second).contains("opened, library from " + copy.getParent());
        assertThat(second).contains("mapped " + copy).doesNotContain("mapped " + tmp);
        assertThat(Files.getLastModifiedTime(copy, LinkOption.NOFOLLOW_LINKS)).isEqualTo(written);
        try (Stream<Path> files = Files.list(tmp)) {
            assertThat(files).as("the driver's own copies").isEmpty();
        }
    }

    /** Opens the agent's store on {@code data} in a JVM of its own (the driver loads its library once per JVM). */
    private static String openInChild(Path data, Path tmp) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "--enable-native-access=ALL-UNNAMED",
                        "-Dorg.sqlite.tmpdir=" + tmp,
                        "-cp",
                        System.getProperty("java.class.path"),
                        OpenStore.class.getName(),
                        data.toString()))
                .redirectErrorStream(true)
                .start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String text = new String(out, StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(text).isZero();
        return text;
    }

    private static JarEntry entry() throws IOException {
        return ((JarURLConnection) SqliteLibrary.class
                        .getResource(SqliteLibrary.resourcePath(NAME))
                        .openConnection())
                .getJarEntry();
    }

    /** Opens and closes the agent's store in the data dir given, then says where SQLite's library came from. */
    static final class OpenStore {
        public static void main(String[] args) throws IOException {
            try (StateDB db = StateStores.openAgents(Path.of(args[0]))) {
                db.schemaVersion();
            }
            System.out.println("opened, library from " + System.getProperty(SqliteLibrary.PATH_PROPERTY));
            try (Stream<String> maps = Files.lines(Path.of("/proc/self/maps"))) {
                maps.filter(l -> l.contains("sqlitejdbc"))
                        .map(l -> l.substring(l.indexOf('/')))
                        .distinct()
                        .forEach(mapped -> System.out.println("mapped " + mapped));
            }
        }
    }
}
