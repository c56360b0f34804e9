package dev.drover.allocwatcher;

import static dev.drover.allocwatcher.SnapshotsTest.entry;
import static dev.drover.allocwatcher.SnapshotsTest.file;
import static dev.drover.allocwatcher.SnapshotsTest.tar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 16: a snapshot as a hostile peer would send it. Each case is refused with a message naming the entry (or,
 * for what has no name yet, where it lies), and nothing outside the staging directory changes: the whole temp tree,
 * with a victim file and directory beside the staging directory, is listed before and after (kind, size, link
 * count, link target) and must be the same.
 */
class HostilePeerSnapshotsTest {

    static final long MB = 1024 * 1024;

    @TempDir
    Path dir;

    /** Each unpacking gets a new staging directory under this one. */
    Path stagings;

    Path staging;
    Path victim;
    TreeMap<String, String> before;

    @BeforeEach
    void plantVictims() throws IOException {
        // dir/victim (a file) and dir/victims/ (a directory), beside the staging directories under dir/s: what an
        // escape would reach
        victim = Files.writeString(dir.resolve("victim"), "host file");
        Files.createDirectories(dir.resolve("victims"));
        stagings = Files.createDirectories(dir.resolve("s"));
        staging = Files.createDirectories(stagings.resolve("first"));
        before = outsideStaging();
    }

    @AfterEach
    void nothingOutsideTheStagingDirectoryChanged() throws IOException {
        assertThat(outsideStaging()).isEqualTo(before);
        assertThat(Files.readString(victim)).isEqualTo("host file");
    }

    /** Unpacks {@code tar} for task {@code web} with a 1 MB disk, expecting a refusal whose message holds {@code what}. */
    void refused(byte[] tar, String what) throws IOException {
        Path staging = Files.createTempDirectory(stagings, "staging");
        assertThatThrownBy(() -> Snapshots.unpack(new ByteArrayInputStream(tar), staging, Set.of("web"), MB))
                .isInstanceOf(SnapshotException.class)
                .hasMessageContaining(what);
    }

    // --- symbolic links ---

    @Test
    void linkChainThroughEarlierLinkIsRefused() throws Exception {
        // x resolves to the staging root (inside); e reads as inside lexically, but the kernel goes through x:
        // dir/victim
        refused(
                tar(entry("alloc/data/a/x", 0, '2', "../../.."), entry("alloc/data/e", 0, '2', "a/x/../../victim")),
                "\"alloc/data/e\" -> \"a/x/../../victim\" points out");
    }

    @Test
    void aLaterLinkThatChangesWhereAnEarlierOneLeadsIsRefused() throws Exception {
        // when l is made, "future" does not exist and l stays inside; then future -> .. makes l climb three levels out
        refused(
                tar(entry("alloc/data/l", 0, '2', "future/../../../victims"), entry("alloc/data/future", 0, '2', "..")),
                "\"alloc/data/l\" -> \"future/../../../victims\" points out");
    }

    @Test
    void absoluteAndClimbingLinksAreRefused() throws Exception {
        refused(tar(entry("alloc/data/abs", 0, '2', victim.toString())), "\"alloc/data/abs\"");
        refused(tar(entry("alloc/data/up", 0, '2', "../../../victim")), "\"alloc/data/up\" -> \"../../../victim\"");
        refused(tar(entry("web/local/a/b/c/deep", 0, '2', "../../../../../../victims")), "\"web/local/a/b/c/deep\"");
    }

    @Test
    void aLinkLoopIsRefused() throws Exception {
        refused(
                tar(
                        entry("alloc/data/a", 0, '2', "b"),
                        entry("alloc/data/b", 0, '2', "a"),
                        entry("alloc/data/c", 0, '2', "a/x")),
                "\"alloc/data/c\" -> \"a/x\" points out");
    }

    @Test
    void writingThroughAnyLinkIsRefusedEvenOneThatStaysInside() throws Exception {
        refused(
                tar(entry("alloc/data/in", 0, '2', "."), file("alloc/data/in/x", "x")),
                "\"alloc/data/in/x\" goes through the link alloc/data/in");
        refused(
                tar(
                        entry("alloc/data/d", 0, '2', "sub"),
                        entry("alloc/data/sub/", 0, '5', ""),
                        entry("alloc/data/d/", 0, '5', "")),
                "\"alloc/data/d\" collides with an earlier entry");
    }

    // --- hard links ---

    @Test
    void hardLinkToAnOutsideFileThroughALinkIsRefused() throws Exception {
        // d reads as alloc/data lexically, resolves to dir (outside); a hard link "through" it would reach dir/victim
        refused(
                tar(
                        entry("alloc/data/a/x", 0, '2', "../../.."),
                        entry("alloc/data/d", 0, '2', "a/x/../.."),
                        entry("alloc/data/h", 0, '1', "alloc/data/d/victim")),
                "\"alloc/data/d\" -> \"a/x/../..\" points out");
        assertThat((int) Files.getAttribute(victim, "unix:nlink")).isEqualTo(1);
    }

    @Test
    void hardLinksNameOnlyFilesUnpackedEarlierInTheStream() throws Exception {
        refused(
                tar(entry("alloc/data/h", 0, '1', "alloc/data/never")),
                "hard link \"alloc/data/h\" -> \"alloc/data/never\" does not name a file unpacked before it");
        refused(
                tar(
                        file("alloc/data/f", "x"),
                        entry("alloc/data/in", 0, '2', "."),
                        entry("alloc/data/h", 0, '1', "alloc/data/in/f")),
                "hard link \"alloc/data/h\"");
        refused(
                tar(entry("alloc/data/sub/", 0, '5', ""), entry("alloc/data/h", 0, '1', "alloc/data/sub")),
                "hard link \"alloc/data/h\"");
        refused(
                tar(
                        entry("alloc/data/l", 0, '2', "f"),
                        file("alloc/data/f", "x"),
                        entry("alloc/data/h", 0, '1', "alloc/data/l")),
                "hard link \"alloc/data/h\"");
        refused(tar(entry("alloc/data/h", 0, '1', "../../victim")), "climbs out");
    }

    @Test
    void aHardLinkToAFileUnpackedBeforeIsKept() throws Exception {
        Snapshots.unpack(
                new ByteArrayInputStream(
                        tar(file("alloc/data/f", "shared"), entry("web/local/h", 0, '1', "alloc/data/f"))),
                staging,
                Set.of("web"),
                MB);
        assertThat(Files.isSameFile(staging.resolve("alloc/data/f"), staging.resolve("web/local/h")))
                .isTrue();
    }

    // --- PAX and long-name floods ---

    @Test
    void aFloodOfPaxHeadersBeforeOneEntryIsRefused() throws Exception {
        ByteArrayOutputStream flood = new ByteArrayOutputStream();
        for (int i = 0; i < 500; i++) {
            flood.write(pax("drover.flood" + i, "v".repeat(900)));
        }
        flood.write(file("alloc/data/x", "x"));
        refused(tar(flood.toByteArray()), "the headers of one entry take more than 64 KiB");
    }

    @Test
    void oneHugePaxHeaderIsRefusedBeforeItIsRead() throws Exception {
        refused(
                tar(pax("path", "alloc/data/" + "n".repeat(2_000_000)), file("alloc/data/x", "x")),
                "the headers of one entry take more than 64 KiB");
    }

    @Test
    void paxHeadersSpreadOverManyEntriesCountAgainstTheByteLimit() throws Exception {
        ByteArrayOutputStream many = new ByteArrayOutputStream();
        for (int i = 0; i < 40; i++) {
            many.write(pax("drover.pad", "p".repeat(60_000)));
            many.write(entry("alloc/data/d" + i + "/", 0, '5', ""));
        }
        refused(tar(many.toByteArray()), "larger than the ephemeral disk's 1 MB allow");
    }

    @Test
    void entriesOfOtherTasksCountAgainstTheByteLimit() throws Exception {
        refused(tar(file("gone/local/big", "b".repeat(2 * (int) MB))), "larger than the ephemeral disk's 1 MB allow");
    }

    @Test
    void globalPaxHeadersAreRefused() throws Exception {
        byte[] data = record("drover.global", "g");
        ByteArrayOutputStream g = new ByteArrayOutputStream();
        g.write(entry("pax_global_header", data.length, 'g', ""));
        g.write(padded(data));
        g.write(file("alloc/data/x", "x"));
        refused(tar(g.toByteArray()), "global PAX header");
    }

    @Test
    void hugeNamesAreRefusedNamingTheEntry() throws Exception {
        String longName = "alloc/data/" + "d/".repeat(2100) + "f";
        refused(tar(pax("path", longName), file("alloc/data/placeholder", "x")), "has a name longer than 4096 bytes");
        refused(
                tar(pax("path", "alloc/data/" + "c".repeat(300)), file("alloc/data/placeholder", "x")),
                "has a name part longer than 255 bytes");
        byte[] gnu = "alloc/data/".concat("g".repeat(200_000)).getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream longLink = new ByteArrayOutputStream();
        longLink.write(entry("././@LongLink", gnu.length, 'L', ""));
        longLink.write(padded(gnu));
        longLink.write(file("alloc/data/placeholder", "x"));
        refused(tar(longLink.toByteArray()), "the headers of one entry take more than 64 KiB");
    }

    @Test
    void aRefusedNameIsShownCutInTheMessage() {
        String longName = "alloc/data/" + "x".repeat(100) + "/" + "y".repeat(5000);
        assertThatThrownBy(() -> Snapshots.unpack(
                        new ByteArrayInputStream(tar(pax("path", longName), file("alloc/data/p", "x"))),
                        staging,
                        Set.of("web"),
                        MB))
                .hasMessageContaining("... (" + longName.length() + " characters)")
                .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(400));
    }

    // --- special files ---

    @Test
    void devicesFifosAndUnknownTypesAreRefusedNamingTheEntry() throws Exception {
        refused(tar(entry("alloc/data/null", 0, '3', "")), "entry \"alloc/data/null\" is a character device");
        refused(tar(entry("alloc/data/sda", 0, '4', "")), "entry \"alloc/data/sda\" is a block device");
        refused(tar(entry("web/local/fifo", 0, '6', "")), "entry \"web/local/fifo\" is a fifo");
        refused(tar(entry("alloc/data/vol", 0, 'V', "")), "entry \"alloc/data/vol\" is a entry of type 'V'");
    }

    // --- cut and broken streams ---

    @Test
    void streamsCutAnywhereAreRefused() throws Exception {
        byte[] whole = tar(
                pax("path", "alloc/data/" + "n".repeat(150)),
                file("alloc/data/a", "x".repeat(2000)),
                file("alloc/data/b", "y"));
        // inside the PAX data, inside a header, inside a file's content, after the last entry (no end blocks)
        refused(Arrays.copyOf(whole, 700), "the snapshot ends in the middle of a header (at its first entry)");
        refused(Arrays.copyOf(whole, 1024 + 300), "the snapshot ends in the middle of a header (at its first entry)");
        // a long name is shown cut, saying how long it was
        refused(
                Arrays.copyOf(whole, 1536 + 1000),
                "the snapshot ends in the middle of \"alloc/data/" + "n".repeat(89) + "\"... (161 characters)");
        refused(Arrays.copyOf(whole, whole.length - 1024), "ends without its end-of-archive blocks (cut short?)");
    }

    @Test
    void aHeaderWithABadChecksumIsRefused() throws Exception {
        byte[] t = tar(file("alloc/data/a", "x"));
        t[0] = 'b'; // the name changes, the checksum does not
        refused(t, "bad header checksum");
    }

    // --- helpers ---

    /** Every path under {@code dir} outside the staging directory, with what it is: kind, size, links, target. */
    TreeMap<String, String> outsideStaging() throws IOException {
        TreeMap<String, String> out = new TreeMap<>();
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes a) {
                if (d.equals(stagings)) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                out.put(dir.relativize(d) + "/", "dir");
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
                String what = a.isSymbolicLink()
                        ? "link -> " + Files.readSymbolicLink(f)
                        : (a.isRegularFile() ? "file " : "other ") + a.size() + " bytes, "
                                + Files.getAttribute(f, "unix:nlink", LinkOption.NOFOLLOW_LINKS) + " links";
                out.put(dir.relativize(f).toString(), what);
                return FileVisitResult.CONTINUE;
            }
        });
        return out;
    }

    static byte[] pax(String key, String value) throws IOException {
        byte[] data = record(key, value);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(entry("PaxHeaders/x", data.length, 'x', ""));
        out.write(padded(data));
        return out.toByteArray();
    }

    /** One PAX record, {@code "LEN key=value\n"}, LEN counting itself. */
    static byte[] record(String key, String value) {
        String body = " " + key + "=" + value + "\n";
        int length = body.getBytes(StandardCharsets.UTF_8).length;
        int total = length + Integer.toString(length).length();
        if (Integer.toString(total).length() > Integer.toString(length).length()) {
            total++;
        }
        return (total + body).getBytes(StandardCharsets.UTF_8);
    }

    static byte[] padded(byte[] data) {
        return Arrays.copyOf(data, (data.length + 511) / 512 * 512);
    }
}
