package dev.drover.credentials;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.drover.fs.DirectoryHandle;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The token writer against a task that plants links, hard links and FIFOs where the agent writes. */
@Timeout(30)
class TaskFileWriterTest {

    @TempDir
    Path root;

    private Path taskDir;
    private Path secrets;
    private Path outside;

    @BeforeEach
    void layout() throws IOException {
        taskDir = Files.createDirectory(root.resolve("task"));
        secrets = Files.createDirectory(taskDir.resolve("secrets"));
        outside = Files.writeString(root.resolve("shadow"), "root:secret-hash");
        Files.setPosixFilePermissions(outside, DirectoryHandle.permissions(0640));
    }

    @Test
    void writesTheContentOwnerOnlyAsTheDirectorysOwner() throws IOException {
        assumeTrue(isRoot(), "giving files to another user needs root");
        chown(secrets, 65534);

        new TaskFileWriter().write(taskDir, "secrets", "token", bytes("first"));
        new TaskFileWriter().write(taskDir, "secrets", "token", bytes("second"));

        Path token = secrets.resolve("token");
        assertEquals("second", Files.readString(token));
        assertEquals(0600, mode(token));
        assertEquals(65534, attribute(token, "uid"));
        assertEquals(65534, attribute(token, "gid"));
        assertEquals(List.of("token"), names(secrets), "no temporary file is left");
    }

    @Test
    void theModeGivenIsTheModeSet() throws IOException {
        new TaskFileWriter().write(taskDir, "secrets", "ca.crt", bytes("cert"), 0644);

        assertEquals(0644, mode(secrets.resolve("ca.crt")));
    }

    @Test
    void aLinkAtTheTargetIsReplacedNeverFollowed() throws IOException {
        Files.createSymbolicLink(secrets.resolve("token"), outside);

        new TaskFileWriter().write(taskDir, "secrets", "token", bytes("jwt"));

        assertFalse(Files.isSymbolicLink(secrets.resolve("token")));
        assertEquals("jwt", Files.readString(secrets.resolve("token")));
        assertOutsideUntouched();
    }

    @Test
    void aHardLinkAtTheTargetIsReplacedAndTheLinkedFileKeepsItsOwner() throws IOException {
        assumeTrue(isRoot(), "giving files to another user needs root");
        chown(secrets, 65534);
        Files.createLink(secrets.resolve("token"), outside);

        new TaskFileWriter().write(taskDir, "secrets", "token", bytes("jwt"));

        assertEquals("jwt", Files.readString(secrets.resolve("token")));
        assertOutsideUntouched();
        assertEquals(0, attribute(outside, "uid"));
    }

    @Test
    void aLinkPlantedAtTheTemporaryNameIsLeftAloneAndAnotherNameIsUsed() throws IOException {
        Iterator<String> names = List.of("planted", "free").iterator();
        Files.createSymbolicLink(secrets.resolve("..tmp.planted"), outside);

        new TaskFileWriter(names::next).write(taskDir, "secrets", "token", bytes("jwt"));

        assertEquals("jwt", Files.readString(secrets.resolve("token")));
        assertTrue(Files.isSymbolicLink(secrets.resolve("..tmp.planted")), "the planted link is not touched");
        assertOutsideUntouched();
    }

    @Test
    void aHardLinkPlantedAtTheTemporaryNameIsNeitherWrittenNorChowned() throws IOException {
        assumeTrue(isRoot(), "giving files to another user needs root");
        chown(secrets, 65534);
        Iterator<String> names = List.of("planted", "free").iterator();
        Files.createLink(secrets.resolve("..tmp.planted"), outside);

        new TaskFileWriter(names::next).write(taskDir, "secrets", "token", bytes("jwt"));

        assertEquals("jwt", Files.readString(secrets.resolve("token")));
        assertOutsideUntouched();
        assertEquals(0, attribute(outside, "uid"));
    }

    @Test
    void secretsBeingALinkIsRefused() throws IOException {
        Path elsewhere = Files.createDirectory(root.resolve("elsewhere"));
        Files.delete(secrets);
        Files.createSymbolicLink(secrets, elsewhere);

        IOException e = assertThrows(
                IOException.class, () -> new TaskFileWriter().write(taskDir, "secrets", "token", bytes("jwt")));

        assertTrue(e.getMessage().contains("is a symbolic link, not a directory"), e.getMessage());
        assertEquals(List.of(), names(elsewhere));
    }

    @Test
    void aFifoAtTheTargetIsReplacedWithoutWaiting() throws Exception {
        mkfifo(secrets.resolve("token"));

        new TaskFileWriter().write(taskDir, "secrets", "token", bytes("jwt"));

        assertEquals("jwt", Files.readString(secrets.resolve("token")));
    }

    @Test
    void aFifoInsteadOfTheDirectoryIsRefusedWithoutWaiting() throws Exception {
        Files.delete(secrets);
        mkfifo(secrets);

        IOException e = assertThrows(
                IOException.class, () -> new TaskFileWriter().write(taskDir, "secrets", "token", bytes("jwt")));

        assertTrue(e.getMessage().contains("FIFO"), e.getMessage());
    }

    @Test
    void namesThatLeaveTheDirectoryOrAreTooBigAreRefused() {
        TaskFileWriter writer = new TaskFileWriter();
        for (String name : List.of("../token", "a/b", "..", ".", "", "..tmp.x", "x".repeat(256))) {
            assertThrows(
                    IllegalArgumentException.class, () -> writer.write(taskDir, "secrets", name, bytes("x")), name);
        }
        assertThrows(IllegalArgumentException.class, () -> writer.write(taskDir, "../task/secrets", "t", bytes("x")));
        IllegalArgumentException big = assertThrows(
                IllegalArgumentException.class,
                () -> writer.write(taskDir, "secrets", "t", new byte[TaskFileWriter.MAX_BYTES + 1]));
        assertTrue(big.getMessage().contains("more than " + TaskFileWriter.MAX_BYTES), big.getMessage());
        assertThrows(IllegalArgumentException.class, () -> writer.write(taskDir, "secrets", "t", bytes("x"), 04755));
    }

    @Test
    void removeTakesTheNameOnlyNeverWhatALinkNames() throws IOException {
        Files.createSymbolicLink(secrets.resolve("token"), outside);

        new TaskFileWriter().remove(taskDir, "secrets", "token");

        assertFalse(Files.exists(secrets.resolve("token"), LinkOption.NOFOLLOW_LINKS));
        assertOutsideUntouched();
    }

    private void assertOutsideUntouched() throws IOException {
        assertEquals("root:secret-hash", Files.readString(outside));
        assertEquals(0640, mode(outside));
    }

    static byte[] bytes(String s) {
        return s.getBytes(UTF_8);
    }

    static boolean isRoot() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid") == 0;
        } catch (IOException e) {
            return false;
        }
    }

    static void chown(Path p, int id) throws IOException {
        Files.setAttribute(p, "unix:uid", id, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(p, "unix:gid", id, LinkOption.NOFOLLOW_LINKS);
    }

    static int mode(Path p) throws IOException {
        return attribute(p, "mode") & 07777;
    }

    static int attribute(Path p, String name) throws IOException {
        return (Integer) Files.getAttribute(p, "unix:" + name, LinkOption.NOFOLLOW_LINKS);
    }

    static List<String> names(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    static void mkfifo(Path p) throws IOException, InterruptedException {
        Process mkfifo = new ProcessBuilder("mkfifo", p.toString()).inheritIO().start();
        assertEquals(0, mkfifo.waitFor());
    }
}
