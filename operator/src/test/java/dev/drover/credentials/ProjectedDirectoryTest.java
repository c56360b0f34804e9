package dev.drover.credentials;

import static dev.drover.credentials.TaskFileWriterTest.attribute;
import static dev.drover.credentials.TaskFileWriterTest.bytes;
import static dev.drover.credentials.TaskFileWriterTest.chown;
import static dev.drover.credentials.TaskFileWriterTest.isRoot;
import static dev.drover.credentials.TaskFileWriterTest.mkfifo;
import static dev.drover.credentials.TaskFileWriterTest.mode;
import static dev.drover.credentials.TaskFileWriterTest.names;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.drover.fs.DirectoryHandle;
import dev.drover.fs.TreeRemover;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Projected Secrets and ConfigMaps: kubelet's layout, atomic swaps, and a task that attacks the directory. */
@Timeout(30)
class ProjectedDirectoryTest {

    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-25T18:30:00Z"), ZoneOffset.UTC);

    @TempDir
    Path root;

    private Path taskDir;
    private Path secrets;
    private Path db;
    private Path outside;

    @BeforeEach
    void layout() throws IOException {
        taskDir = Files.createDirectory(root.resolve("task"));
        secrets = Files.createDirectory(taskDir.resolve("secrets"));
        db = secrets.resolve("db");
        outside = Files.createDirectory(root.resolve("outside"));
        Files.writeString(outside.resolve("shadow"), "root:secret-hash");
    }

    @Test
    void projectsFilesAsKubeletDoesWithModesAndTheDirectorysOwner() throws IOException {
        assumeTrue(isRoot(), "giving files to another user needs root");
        chown(secrets, 65534);

        assertTrue(update(Map.of("password", file("hunter2", 0400), "conf/app.yaml", file("a: 1", 0644))));

        String data = Files.readSymbolicLink(db.resolve("..data")).toString();
        assertTrue(data.startsWith("..2026_11_25_18_30_00."), data);
        assertEquals(Path.of("..data/password"), Files.readSymbolicLink(db.resolve("password")));
        assertEquals(Path.of("..data/conf"), Files.readSymbolicLink(db.resolve("conf")));
        assertEquals("hunter2", Files.readString(db.resolve("password")));
        assertEquals("a: 1", Files.readString(db.resolve("conf/app.yaml")));
        assertEquals(List.of(data, "..data", "conf", "password"), names(db));
        Path dataDir = db.resolve(data);
        assertEquals(0400, mode(dataDir.resolve("password")));
        assertEquals(0644, mode(dataDir.resolve("conf/app.yaml")));
        for (Path p : List.of(db, dataDir, dataDir.resolve("conf"))) {
            assertEquals(0700, mode(p), p.toString());
        }
        for (Path p : List.of(
                db, dataDir, dataDir.resolve("conf"), dataDir.resolve("password"), dataDir.resolve("conf/app.yaml"))) {
            assertEquals(65534, attribute(p, "uid"), p.toString());
            assertEquals(65534, attribute(p, "gid"), p.toString());
        }
    }

    @Test
    void theSameContentAgainChangesNothingAndNewContentReplacesTheOldDataDirectory() throws IOException {
        Map<String, ProjectedFile> v1 = Map.of("user", file("admin", 0600), "conf/x", file("1", 0600));
        update(v1);
        Path before = Files.readSymbolicLink(db.resolve("..data"));

        assertFalse(update(v1));
        assertEquals(before, Files.readSymbolicLink(db.resolve("..data")));

        assertTrue(update(Map.of("user", file("admin", 0600), "conf/x", file("2", 0600))));
        Path after = Files.readSymbolicLink(db.resolve("..data"));
        assertNotEquals(before, after);
        assertEquals("2", Files.readString(db.resolve("conf/x")));
        assertEquals(List.of(after.toString(), "..data", "conf", "user"), names(db), "the old data directory is gone");

        assertTrue(update(Map.of("user", file("admin", 0400), "conf/x", file("2", 0600))), "a new mode is a change");
    }

    @Test
    void namesThatGoLoseTheirLinksAndTheTasksOwnFilesStay() throws IOException {
        update(Map.of("a", file("1", 0600), "b", file("2", 0600)));
        Files.writeString(db.resolve("mine"), "the task's");

        update(Map.of("a", file("1", 0600)));

        assertEquals(
                List.of("a", "mine"),
                names(db).stream().filter(n -> !n.startsWith("..")).toList());
    }

    @Test
    void aReaderSeesTheWholeOldSetUntilTheSwapAndTheWholeNewSetAfter() throws IOException {
        update(Map.of("conf/x", file("old", 0600), "conf/y", file("old", 0600)));
        List<String> seen = new ArrayList<>();
        Consumer<String> reader = stage -> seen.add(stage + ": " + read("conf/x") + " " + read("conf/y") + " "
                + (Files.exists(db.resolve("z")) ? read("z") : "no z"));

        new ProjectedDirectory(CLOCK, reader)
                .update(
                        taskDir,
                        "secrets/db",
                        Map.of("conf/x", file("new", 0600), "conf/y", file("new", 0600), "z", file("new", 0600)),
                        ProjectedDirectory.OWNER_ONLY);

        assertEquals(List.of("written: old old no z", "swapped: new new new"), seen);
    }

    @Test
    void anOldDataDirectorySwappedForALinkToOutsideLosesOnlyItsLink() throws IOException {
        update(Map.of("user", file("admin", 0600)));
        String old = Files.readSymbolicLink(db.resolve("..data")).toString();
        Consumer<String> attacker = stage -> {
            if (stage.equals("swapped")) {
                try {
                    Files.move(db.resolve(old), secrets.resolve("moved-away"));
                    Files.createSymbolicLink(db.resolve(old), outside);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };

        new ProjectedDirectory(CLOCK, attacker)
                .update(taskDir, "secrets/db", Map.of("user", file("root", 0600)), ProjectedDirectory.OWNER_ONLY);

        assertFalse(Files.exists(db.resolve(old), LinkOption.NOFOLLOW_LINKS));
        assertEquals("root:secret-hash", Files.readString(outside.resolve("shadow")));
        assertEquals("root", Files.readString(db.resolve("user")));
    }

    @Test
    void anUpdateTheTaskBlocksLeavesNoDataDirectoryBehindHoweverOftenItIsRetried() throws IOException {
        update(Map.of("user", file("admin", 0600)));
        String live = Files.readSymbolicLink(db.resolve("..data")).toString();
        Files.createDirectories(db.resolve("extra/keep"));
        Files.writeString(db.resolve("extra/keep/mine"), "the task's");
        Map<String, ProjectedFile> next = Map.of("user", file("root", 0600), "extra", file("x", 0600));

        for (int poll = 0; poll < 5; poll++) {
            IOException e = assertThrows(IOException.class, () -> update(next));
            assertTrue(
                    e.getMessage()
                            .startsWith("cannot put a link at " + db.resolve("extra") + " (is a directory there?)"),
                    e.getMessage());
            assertFalse(e.getMessage().contains("/proc/"), e.getMessage());
            assertEquals(0, e.getSuppressed().length, "the data directory was removed");
        }

        System.err.println(
                "MSG " + assertThrows(IOException.class, () -> update(next)).getMessage());
        assertEquals(List.of(live, "..data", "extra", "user"), names(db), "no data directory but the live one");
        assertEquals("admin", Files.readString(db.resolve("user")), "the task keeps the old files");
        assertEquals("the task's", Files.readString(db.resolve("extra/keep/mine")));
        for (String name : List.of("extra/keep/mine", "extra/keep", "extra")) {
            Files.delete(db.resolve(name));
        }
        assertTrue(update(next), "once the name is free the update goes through");
        assertEquals(1, dataDirectories().size());
        assertEquals("root", Files.readString(db.resolve("user")));
    }

    @Test
    void aDataLinkToOutsideIsNeverFollowedWhenAFailedUpdateIsCleanedUp() throws IOException {
        update(Map.of("shadow", file("admin", 0600)));
        String live = Files.readSymbolicLink(db.resolve("..data")).toString();
        Files.delete(db.resolve("..data"));
        Files.createSymbolicLink(db.resolve("..data"), outside);
        Files.delete(db.resolve("shadow"));
        Files.createDirectory(db.resolve("shadow"));

        for (int poll = 0; poll < 3; poll++) {
            IOException e = assertThrows(IOException.class, () -> update(Map.of("shadow", file("new", 0600))));
            assertTrue(e.getMessage().startsWith("cannot put a link at " + db.resolve("shadow")), e.getMessage());
        }

        assertEquals(List.of(live), dataDirectories(), "the old one, which ..data no longer names, and no new one");
        assertEquals(outside, Files.readSymbolicLink(db.resolve("..data")));
        assertEquals("root:secret-hash", Files.readString(outside.resolve("shadow")));
        assertEquals(List.of("shadow"), names(outside));
    }

    @Test
    void aDataDirectoryThatFailedToGoLiveLosesOnlyNamesWhateverTheTaskPutThere() throws IOException {
        Path shadow = outside.resolve("shadow");
        update(Map.of("user", file("admin", 0600)));
        String live = Files.readSymbolicLink(db.resolve("..data")).toString();
        Consumer<String> attacker = stage -> {
            try {
                Path fresh = db.resolve(dataDirectories().stream()
                        .filter(n -> !n.equals(live))
                        .findFirst()
                        .orElseThrow());
                Files.move(fresh, secrets.resolve("moved-away"));
                Files.createDirectories(fresh.resolve("deep"));
                Files.createSymbolicLink(fresh.resolve("escape"), outside);
                Files.createSymbolicLink(fresh.resolve("deep/root"), Path.of("/"));
                Files.createLink(fresh.resolve("deep/hard"), shadow);
                Files.delete(db.resolve("..data"));
                Files.createDirectory(db.resolve("..data")); // the swap cannot rename a link over it
                Files.createSymbolicLink(db.resolve("..data/escape"), outside);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };

        IOException e = assertThrows(
                IOException.class,
                () -> new ProjectedDirectory(CLOCK, attacker)
                        .update(
                                taskDir,
                                "secrets/db",
                                Map.of("user", file("root", 0600)),
                                ProjectedDirectory.OWNER_ONLY));

        assertTrue(e.getMessage().startsWith("cannot put a link at " + db.resolve("..data")), e.getMessage());
        assertEquals(0, e.getSuppressed().length);
        assertEquals(List.of(live), dataDirectories());
        assertEquals(List.of("escape"), names(db.resolve("..data")));
        assertEquals("root:secret-hash", Files.readString(shadow));
        assertEquals(1, attribute(shadow, "nlink"));
        assertEquals(List.of("shadow"), names(outside));
    }

    @Test
    void aFailureBeforeTheSwapIsRethrownAsItWasWithAFailedCleanupAddedToIt() throws IOException {
        update(Map.of("user", file("admin", 0600)));
        String live = Files.readSymbolicLink(db.resolve("..data")).toString();
        UncheckedIOException planted = new UncheckedIOException(new IOException("the disk is full"));
        List<String> fresh = new ArrayList<>();
        Consumer<String> failing = stage -> {
            try {
                fresh.addAll(
                        dataDirectories().stream().filter(n -> !n.equals(live)).toList());
                Path at = db.resolve(fresh.getFirst());
                Files.move(at, secrets.resolve("moved-away"));
                Files.createDirectories(at.resolve("d/".repeat(TreeRemover.MAX_DEPTH + 2)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            throw planted;
        };

        UncheckedIOException e = assertThrows(
                UncheckedIOException.class,
                () -> new ProjectedDirectory(CLOCK, failing)
                        .update(
                                taskDir,
                                "secrets/db",
                                Map.of("user", file("root", 0600)),
                                ProjectedDirectory.OWNER_ONLY));

        assertEquals(planted, e, "the original error, not the cleanup's");
        assertEquals(1, e.getSuppressed().length);
        assertTrue(e.getSuppressed()[0].getMessage().contains("levels"), e.getSuppressed()[0].getMessage());
        assertEquals(live, Files.readSymbolicLink(db.resolve("..data")).toString());
        assertEquals("admin", Files.readString(db.resolve("user")));
    }

    @Test
    void removingAPreparedTreeFullOfLinksToOutsideRemovesOnlyNames() throws Exception {
        Path shadow = outside.resolve("shadow");
        Files.createDirectories(db.resolve("..old/deep/er"));
        Files.createSymbolicLink(db.resolve("..old/escape"), outside);
        Files.createSymbolicLink(db.resolve("..old/deep/er/root"), Path.of("/"));
        Files.createLink(db.resolve("..old/deep/hard"), shadow);
        Files.createSymbolicLink(db.resolve("..evil"), outside);
        Files.createSymbolicLink(db.resolve("..data"), Path.of("..evil"));
        Files.createSymbolicLink(db.resolve("user"), Path.of("..data/shadow"));
        mkfifo(db.resolve("..old/fifo"));

        new ProjectedDirectory(CLOCK).remove(taskDir, "secrets/db");

        assertFalse(Files.exists(db, LinkOption.NOFOLLOW_LINKS));
        assertEquals("root:secret-hash", Files.readString(shadow));
        assertEquals(List.of("shadow"), names(outside));
    }

    @Test
    void anUpdateOverADataLinkToOutsideRemovesTheLinkNotWhatItNames() throws IOException {
        Files.createDirectory(db);
        Files.createSymbolicLink(db.resolve("..evil"), outside);
        Files.createSymbolicLink(db.resolve("..data"), Path.of("..evil"));

        assertTrue(update(Map.of("shadow", file("mine", 0600))));

        assertEquals("root:secret-hash", Files.readString(outside.resolve("shadow")));
        assertFalse(Files.exists(db.resolve("..evil"), LinkOption.NOFOLLOW_LINKS));
        assertEquals("mine", Files.readString(db.resolve("shadow")));
    }

    @Test
    void aRemovedProjectionThatIsALinkLosesOnlyTheLink() throws IOException {
        Files.createSymbolicLink(db, outside);

        new ProjectedDirectory(CLOCK).remove(taskDir, "secrets/db");

        assertFalse(Files.exists(db, LinkOption.NOFOLLOW_LINKS));
        assertEquals(List.of("shadow"), names(outside));
    }

    @Test
    void aProjectionOrItsParentBeingALinkIsRefused() throws IOException {
        Files.createSymbolicLink(db, outside);
        IOException e = assertThrows(IOException.class, () -> update(Map.of("user", file("x", 0600))));
        assertTrue(e.getMessage().contains("is a symbolic link, not a directory"), e.getMessage());

        Files.delete(db);
        Files.delete(secrets);
        Files.createSymbolicLink(secrets, outside);
        e = assertThrows(IOException.class, () -> update(Map.of("user", file("x", 0600))));
        assertTrue(e.getMessage().contains("is a symbolic link, not a directory"), e.getMessage());
        assertEquals(List.of("shadow"), names(outside));
    }

    @Test
    void fifosWhereTheWriterLooksAreNeverWaitedOn() throws Exception {
        update(Map.of("user", file("admin", 0600)));
        Path data = db.resolve(Files.readSymbolicLink(db.resolve("..data")));
        Files.delete(data.resolve("user"));
        mkfifo(data.resolve("user"));

        assertTrue(update(Map.of("user", file("admin", 0600))), "a FIFO is not the content");
        assertEquals("admin", Files.readString(db.resolve("user")));

        new ProjectedDirectory(CLOCK).remove(taskDir, "secrets/db");
        mkfifo(db);
        IOException e = assertThrows(IOException.class, () -> update(Map.of("user", file("x", 0600))));
        assertTrue(e.getMessage().contains("FIFO"), e.getMessage());
    }

    @Test
    void aHardLinkToAnotherFileInTheDataDirectoryIsNotTakenForTheContent() throws IOException {
        Path shadow = outside.resolve("shadow");
        update(Map.of("shadow", file("root:secret-hash", 0644)));
        Path data = db.resolve(Files.readSymbolicLink(db.resolve("..data")));
        Files.delete(data.resolve("shadow"));
        Files.createLink(data.resolve("shadow"), shadow);
        Files.setPosixFilePermissions(shadow, DirectoryHandle.permissions(0644));

        assertTrue(update(Map.of("shadow", file("root:secret-hash", 0644))), "a file with two links is rewritten");

        assertEquals("root:secret-hash", Files.readString(shadow));
        assertEquals(1, attribute(shadow, "nlink"), "the old data directory lost its link to it");
    }

    @Test
    void pathsSizesAndCountsBeyondTheLimitsAreRefusedSayingWhy() {
        assertRefused(Map.of("a/".repeat(2100) + "x", file("x", 0600)), "longer than 4096 bytes");
        assertRefused(Map.of("x".repeat(256), file("x", 0600)), "longer than 255 bytes");
        assertRefused(Map.of("a/".repeat(20) + "x", file("x", 0600)), "levels deep");
        Map<String, ProjectedFile> many = new HashMap<>();
        for (int i = 0; i <= ProjectedPaths.MAX_FILES; i++) {
            many.put("f" + i, file("x", 0600));
        }
        assertRefused(many, "at most 1000 files");
        assertRefused(
                Map.of(
                        "a",
                        new ProjectedFile(new byte[5 << 20], 0600),
                        "b",
                        new ProjectedFile(new byte[5 << 20], 0600)),
                "at most 8388608 bytes");
        assertRefused(Map.of("../x", file("x", 0600)), "is . or ..");
        assertRefused(Map.of("a/../../x", file("x", 0600)), "is . or ..");
        assertRefused(Map.of("/etc/shadow", file("x", 0600)), "must be relative");
        assertRefused(Map.of("a//b", file("x", 0600)), "is empty");
        assertRefused(Map.of("./a", file("x", 0600)), "is . or ..");
        assertRefused(Map.of("..data/x", file("x", 0600)), "must not start with ..");
        assertRefused(Map.of("conf", file("x", 0600), "conf/x", file("x", 0600)), "both a file and a directory");
        assertFalse(Files.exists(db, LinkOption.NOFOLLOW_LINKS), "nothing was written");
        assertThrows(IllegalArgumentException.class, () -> file("x", 04755));
    }

    private void assertRefused(Map<String, ProjectedFile> files, String why) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> update(files));
        assertTrue(e.getMessage().contains(why), e.getMessage());
        assertTrue(
                e.getMessage().length() < 400,
                "the message is cut: " + e.getMessage().length());
    }

    private boolean update(Map<String, ProjectedFile> files) throws IOException {
        return new ProjectedDirectory(CLOCK).update(taskDir, "secrets/db", files, ProjectedDirectory.OWNER_ONLY);
    }

    /** The timestamped data directories in the projection, live or not. */
    private List<String> dataDirectories() {
        try {
            return names(db).stream().filter(n -> n.startsWith("..2")).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private String read(String name) {
        try {
            return Files.readString(db.resolve(name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ProjectedFile file(String content, int mode) {
        return new ProjectedFile(bytes(content), mode);
    }
}
