package dev.drover.allocwatcher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.fs.LinkSwapper;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 10's tar safety: a snapshot comes from another node, so every entry is checked before it is written. */
class SnapshotsTest {

    static final long MB = 1024 * 1024;

    @TempDir
    Path dir;

    Path staging() throws IOException {
        return Files.createDirectories(dir.resolve("staging"));
    }

    @Test
    void aSnapshotCarriesDataAndEachTasksLocalDirectoryAndNothingElse() throws Exception {
        Path alloc = dir.resolve("old");
        Files.createDirectories(alloc.resolve("alloc/data/deep/er"));
        Files.writeString(alloc.resolve("alloc/data/deep/er/state.json"), "{\"n\":1}");
        Files.write(alloc.resolve("alloc/data/blob"), new byte[700_000]);
        Files.setPosixFilePermissions(alloc.resolve("alloc/data/blob"), PosixFilePermissions.fromString("rwxr-x---"));
        String longName = "n".repeat(150);
        Files.writeString(alloc.resolve("alloc/data/" + longName), "long");
        Files.createSymbolicLink(alloc.resolve("alloc/data/latest"), Path.of("deep/er/state.json"));
        Files.createDirectories(alloc.resolve("alloc/logs"));
        Files.writeString(alloc.resolve("alloc/logs/web.stdout.0"), "not migrated");
        Files.createDirectories(alloc.resolve("web/local"));
        Files.writeString(alloc.resolve("web/local/cache"), "web's");
        Files.createDirectories(alloc.resolve("web/secrets"));
        Files.writeString(alloc.resolve("web/secrets/token"), "never leaves the node");

        ByteArrayOutputStream tar = new ByteArrayOutputStream();
        Snapshots.pack(alloc, List.of("web"), tar);
        Path into = staging();
        long bytes = Snapshots.unpack(new ByteArrayInputStream(tar.toByteArray()), into, Set.of("web"), 10 * MB);

        assertThat(Files.readString(into.resolve("alloc/data/deep/er/state.json")))
                .isEqualTo("{\"n\":1}");
        assertThat(Files.size(into.resolve("alloc/data/blob"))).isEqualTo(700_000);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(into.resolve("alloc/data/blob"))))
                .isEqualTo("rwxr-x---");
        assertThat(Files.readString(into.resolve("alloc/data/" + longName))).isEqualTo("long");
        assertThat(Files.readSymbolicLink(into.resolve("alloc/data/latest"))).isEqualTo(Path.of("deep/er/state.json"));
        assertThat(Files.readString(into.resolve("web/local/cache"))).isEqualTo("web's");
        assertThat(into.resolve("alloc/logs")).doesNotExist();
        assertThat(into.resolve("web/secrets")).doesNotExist();
        assertThat(bytes).isEqualTo(7 + 700_000 + 4 + 5);
    }

    /**
     * A task that swaps a directory of its {@code local/} for a link to a secret of the node's (another allocation's
     * token, the agent's key) while its snapshot is packed: the walk opened each directory and file by its whole path,
     * which follows a link put in the middle of it, so the secret could be packed and downloaded.
     */
    @Test
    void aDirectorySwappedForALinkWhileItIsPackedNeverCarriesWhatTheLinkPointsAt() throws Exception {
        Path alloc = dir.resolve("old");
        Path decoy = Files.createDirectories(alloc.resolve("web/local/d"));
        Files.writeString(decoy.resolve("secret"), "decoy");
        Path outside = Files.createDirectories(dir.resolve("outside"));
        Files.writeString(outside.resolve("secret"), "TOP-SECRET");

        int leaks = 0;
        List<IOException> failed = new ArrayList<>();
        try (LinkSwapper swapper = LinkSwapper.start(decoy, outside)) {
            for (int i = 0; i < 2_000; i++) {
                ByteArrayOutputStream tar = new ByteArrayOutputStream();
                try {
                    Snapshots.pack(alloc, List.of("web"), tar);
                } catch (IOException e) {
                    failed.add(e);
                }
                if (tar.toString(StandardCharsets.ISO_8859_1).contains("TOP-SECRET")) {
                    leaks++;
                }
            }
            assertThat(swapper.swaps()).as("the task's swaps").isPositive();
        }
        assertThat(leaks).as("snapshots that carried the node's secret").isZero();
        assertThat(failed).as("snapshots the swaps made fail").isEmpty();
    }

    /** A FIFO a task put where a file was is left out, never waited on. */
    @Test
    void aFifoInTheTasksDirectoryIsLeftOutWithoutWaiting() throws Exception {
        Path alloc = dir.resolve("old");
        Files.createDirectories(alloc.resolve("web/local"));
        Files.writeString(alloc.resolve("web/local/file"), "kept");
        Process mkfifo =
                new ProcessBuilder("mkfifo", alloc.resolve("web/local/fifo").toString()).start();
        assertThat(mkfifo.waitFor()).isZero();

        ByteArrayOutputStream tar = new ByteArrayOutputStream();
        Snapshots.pack(alloc, List.of("web"), tar);
        Path into = staging();
        Snapshots.unpack(new ByteArrayInputStream(tar.toByteArray()), into, Set.of("web"), MB);

        assertThat(Files.readString(into.resolve("web/local/file"))).isEqualTo("kept");
        assertThat(into.resolve("web/local/fifo")).doesNotExist();
    }

    /** A task may name its files with any bytes: one whose name is not valid UTF-8 still carries its content. */
    @Test
    void aFileWhoseNameIsNotUtf8IsPacked() throws Exception {
        Path alloc = dir.resolve("old");
        Path local = Files.createDirectories(alloc.resolve("web/local"));
        Process write = new ProcessBuilder(
                        "sh", "-c", "mkdir \"$(printf 'd\\377')\" && echo kept > \"$(printf 'd\\377/f')\"")
                .directory(local.toFile())
                .start();
        assertThat(write.waitFor()).isZero();

        ByteArrayOutputStream tar = new ByteArrayOutputStream();
        Snapshots.pack(alloc, List.of("web"), tar);

        assertThat(tar.toString(StandardCharsets.ISO_8859_1)).contains("kept\n");
    }

    @Test
    void tasksTheNewAllocationDoesNotHaveAreSkipped() throws Exception {
        Path alloc = dir.resolve("old");
        Files.createDirectories(alloc.resolve("gone/local"));
        Files.writeString(alloc.resolve("gone/local/x"), "x");
        ByteArrayOutputStream tar = new ByteArrayOutputStream();
        Snapshots.pack(alloc, List.of("gone"), tar);
        Path into = staging();
        Snapshots.unpack(new ByteArrayInputStream(tar.toByteArray()), into, Set.of("web"), MB);
        assertThat(into.resolve("gone")).doesNotExist();
    }

    @Test
    void namesThatClimbOutAreRefused() {
        for (String name : List.of("../escape", "alloc/data/../../escape", "/etc/passwd", "alloc/data/../../../x")) {
            assertThatThrownBy(() -> unpack(tar(file(name, "x"))), name)
                    .isInstanceOf(SnapshotException.class)
                    .hasMessageContaining(name);
        }
        assertThat(dir.resolve("escape")).doesNotExist();
    }

    @Test
    void entriesOutsideDataAndLocalAreRefused() {
        for (String name : List.of("alloc/logs/x", "web/secrets/token", "etc/passwd", "Web/local/x")) {
            assertThatThrownBy(() -> unpack(tar(file(name, "x"))), name)
                    .isInstanceOf(SnapshotException.class)
                    .hasMessageContaining("outside alloc/data");
        }
    }

    @Test
    void linksOutOfTheDirectoryAreRefused() {
        assertThatThrownBy(() -> unpack(tar(entry("alloc/data/l", 0, '2', "/etc/passwd"))))
                .hasMessageContaining("points out of the directory");
        assertThatThrownBy(() -> unpack(tar(entry("alloc/data/l", 0, '2', "../../../etc"))))
                .hasMessageContaining("points out of the directory");
        assertThatThrownBy(() -> unpack(tar(entry("alloc/data/h", 0, '1', "../outside"))))
                .hasMessageContaining("climbs out");
    }

    @Test
    void writingThroughALinkIsRefused() throws Exception {
        Path outside = Files.createDirectories(dir.resolve("outside"));
        // a link to "." inside is harmless in itself; an entry through it is not
        byte[] tar = tar(entry("alloc/data/l", 0, '2', "."), file("alloc/data/l/x", "x"));
        assertThatThrownBy(() -> unpack(tar)).hasMessageContaining("goes through the link");
        byte[] twoStep = tar(entry("alloc/data/up", 0, '2', ".."), file("alloc/data/up/data/x", "x"));
        assertThatThrownBy(() -> unpack(twoStep)).hasMessageContaining("goes through the link");
        try (var files = Files.list(outside)) {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void moreBytesThanTheDiskAllowsAreRefusedBeforeTheyAreWritten() throws Exception {
        byte[] tar = tar(file("alloc/data/a", "x".repeat(600)), file("alloc/data/b", "y".repeat(600)));
        Path into = staging();
        assertThatThrownBy(() -> Snapshots.unpack(new ByteArrayInputStream(tar), into, Set.of(), 1000))
                .hasMessageContaining("\"alloc/data/b\" would take the snapshot over");
        assertThat(into.resolve("alloc/data/b")).doesNotExist();
    }

    @Test
    void specialFilesDuplicatesAndBrokenStreamsAreRefused() throws Exception {
        assertThatThrownBy(() -> unpack(tar(entry("alloc/data/dev", 0, '3', ""))))
                .hasMessageContaining("character device");
        assertThatThrownBy(() -> unpack(tar(entry("alloc/data/fifo", 0, '6', ""))))
                .hasMessageContaining("fifo");
        assertThatThrownBy(() -> unpack(tar(file("alloc/data/a", "1"), file("alloc/data/a", "2"))))
                .hasMessageContaining("appears twice");
        byte[] whole = tar(file("alloc/data/a", "x".repeat(2000)));
        assertThatThrownBy(() -> unpack(Arrays.copyOf(whole, 1024))).hasMessageContaining("ends in the middle");
        assertThatThrownBy(() -> unpack("this is not a tar stream".repeat(40).getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("not a tar stream");
        assertThatThrownBy(() -> unpack(new byte[0])).hasMessageContaining("cut short");
    }

    @Test
    void snapshotsAndTarUnderstandEachOther() throws Exception {
        Path alloc = dir.resolve("old");
        String longName = "l".repeat(120) + "/" + "m".repeat(120);
        Files.createDirectories(alloc.resolve("alloc/data/" + longName).getParent());
        Files.writeString(alloc.resolve("alloc/data/" + longName), "deep");
        Files.writeString(alloc.resolve("alloc/data/ünïcode"), "u");
        ByteArrayOutputStream packed = new ByteArrayOutputStream();
        Snapshots.pack(alloc, List.of(), packed);
        Process list =
                new ProcessBuilder("tar", "-tf", "-").redirectErrorStream(true).start();
        list.getOutputStream().write(packed.toByteArray());
        list.getOutputStream().close();
        String listed = new String(list.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(list.waitFor()).as(listed).isZero();
        assertThat(listed).contains("alloc/data/" + longName, "alloc/data/ünïcode");

        // and the other way: GNU tar's PAX output, with a hard link, unpacks
        Files.createLink(alloc.resolve("alloc/data/again"), alloc.resolve("alloc/data/ünïcode"));
        Process write = new ProcessBuilder("tar", "--format=pax", "-cf", "-", "alloc/data")
                .directory(alloc.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        byte[] fromTar = write.getInputStream().readAllBytes();
        assertThat(write.waitFor()).isZero();
        Path into = staging();
        Snapshots.unpack(new ByteArrayInputStream(fromTar), into, Set.of(), MB);
        assertThat(Files.readString(into.resolve("alloc/data/" + longName))).isEqualTo("deep");
        assertThat(Files.isSameFile(into.resolve("alloc/data/again"), into.resolve("alloc/data/ünïcode")))
                .isTrue();
    }

    @Test
    void aSmallFileTakesOneHeaderAndOneBlock() throws Exception {
        Path alloc = dir.resolve("old");
        Files.createDirectories(alloc.resolve("alloc/data"));
        for (int i = 0; i < 100; i++) {
            Files.writeString(alloc.resolve("alloc/data/f" + i), "small");
        }
        ByteArrayOutputStream tar = new ByteArrayOutputStream();
        Snapshots.pack(alloc, List.of(), tar);
        // the directory's header, 100 × (header + one block of content), the end: no PAX header per entry
        assertThat(tar.size()).isEqualTo(512 + 100 * 1024 + 1024);
    }

    long unpack(byte[] tar) throws IOException {
        Path into = Files.createDirectories(dir.resolve("u" + System.nanoTime()));
        return Snapshots.unpack(new ByteArrayInputStream(tar), into, Set.of("web"), MB);
    }

    /** A hand-made archive: what a hostile node could send. */
    static byte[] tar(byte[]... entries) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] e : entries) {
            out.write(e);
        }
        out.write(new byte[1024]);
        return out.toByteArray();
    }

    static byte[] file(String name, String content) throws IOException {
        byte[] data = content.getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(entry(name, data.length, '0', ""));
        out.write(data);
        out.write(new byte[(512 - data.length % 512) % 512]);
        return out.toByteArray();
    }

    static byte[] entry(String name, long size, char type, String link) {
        byte[] h = new byte[512];
        put(h, 0, name);
        put(h, 100, "0000644");
        put(h, 124, String.format("%011o", size));
        put(h, 136, "00000000000");
        Arrays.fill(h, 148, 156, (byte) ' ');
        h[156] = (byte) type;
        put(h, 157, link);
        put(h, 257, "ustar");
        put(h, 263, "00");
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        put(h, 148, String.format("%06o", sum));
        h[154] = 0;
        h[155] = ' ';
        return h;
    }

    static void put(byte[] h, int at, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(b, 0, h, at, b.length);
    }
}
