package dev.drover.driver.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A copy of an image's root filesystem is the same tree: owners, modes, times and links, nothing followed. */
class RootfsCopyTest {

    private static final FileTime THEN = FileTime.from(Instant.parse("2020-01-02T03:04:05Z"));

    @TempDir
    Path dir;

    private Path image;
    private Path copy;

    @BeforeEach
    void anImageTree() throws IOException {
        image = Files.createDirectory(dir.resolve("image"));
        copy = Files.createDirectory(dir.resolve("copy"));
        Files.createDirectories(image.resolve("srv/deep/er"));
        Files.writeString(image.resolve("srv/data"), "pristine");
        set(image.resolve("srv/data"), 1234, 2345, 0640);
        Files.createLink(image.resolve("srv/data-link"), image.resolve("srv/data"));
        Files.writeString(image.resolve("srv/su"), "#!/bin/sh\n");
        set(image.resolve("srv/su"), 0, 0, 04755);
        Files.writeString(image.resolve("srv/deep/er/file"), "x");
        Files.createSymbolicLink(image.resolve("srv/host"), Path.of("/etc/hostname"));
        Files.createSymbolicLink(image.resolve("srv/up"), Path.of(".."));
        Files.setAttribute(image.resolve("srv/host"), "unix:uid", 77, LinkOption.NOFOLLOW_LINKS);
        Files.createDirectory(image.resolve("ro"));
        Files.writeString(image.resolve("ro/kept"), "in a read-only directory");
        set(image.resolve("ro"), 1234, 2345, 0555);
        set(image.resolve("srv"), 0, 0, 02775);
        set(image, 1234, 2345, 0700);
    }

    private static void set(Path p, int uid, int gid, int mode) throws IOException {
        Files.setAttribute(p, "unix:uid", uid);
        Files.setAttribute(p, "unix:gid", gid);
        Files.setAttribute(p, "unix:mode", mode);
        Files.setLastModifiedTime(p, THEN);
    }

    private static Object attr(Path p, String name) throws IOException {
        return Files.getAttribute(p, "unix:" + name, LinkOption.NOFOLLOW_LINKS);
    }

    @Test
    void theCopyKeepsOwnersModesSetIdBitsTimesAndLinks() throws Exception {
        RootfsCopy.copy(image, 1 << 20, copy);

        Path data = copy.resolve("srv/data");
        assertThat(data).hasContent("pristine");
        assertThat(attr(data, "uid")).isEqualTo(1234);
        assertThat(attr(data, "gid")).isEqualTo(2345);
        assertThat((Integer) attr(data, "mode") & 07777).isEqualTo(0640);
        assertThat(Files.getLastModifiedTime(data)).isEqualTo(THEN);
        assertThat((Integer) attr(copy.resolve("srv/su"), "mode") & 07777).isEqualTo(04755);
        assertThat((Integer) attr(copy.resolve("srv"), "mode") & 07777).isEqualTo(02775);
        assertThat(Files.getLastModifiedTime(copy.resolve("srv")))
                .as("set after its entries")
                .isEqualTo(THEN);
        assertThat((Integer) attr(copy.resolve("ro"), "mode") & 07777).isEqualTo(0555);
        assertThat(copy.resolve("ro/kept")).hasContent("in a read-only directory");
        assertThat(copy.resolve("srv/deep/er/file")).hasContent("x");

        assertThat(attr(copy.resolve("srv/data-link"), "ino"))
                .as("hard links stay one inode")
                .isEqualTo(attr(data, "ino"))
                .isNotEqualTo(attr(image.resolve("srv/data"), "ino"));
        Files.writeString(copy.resolve("srv/data-link"), "changed");
        assertThat(data).hasContent("changed");
        assertThat(image.resolve("srv/data")).as("the image is never written").hasContent("pristine");

        assertThat(Files.isSymbolicLink(copy.resolve("srv/host"))).isTrue();
        assertThat(Files.readSymbolicLink(copy.resolve("srv/host"))).isEqualTo(Path.of("/etc/hostname"));
        assertThat(attr(copy.resolve("srv/host"), "uid")).isEqualTo(77);
        assertThat(Files.readSymbolicLink(copy.resolve("srv/up"))).isEqualTo(Path.of(".."));
        assertThat((Integer) attr(copy, "mode") & 07777)
                .as("the root stays Drover's, as an overlay's upper directory is")
                .isEqualTo(0755);
        assertThat(attr(copy, "uid")).isEqualTo(0);
    }

    @Test
    void aTreeHoldingMoreThanItsPullNotedOrMoreThanTheDiskHasIsRefused() {
        assertThatThrownBy(() -> RootfsCopy.copy(image, 10, copy))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith("the image's root filesystem holds more than its pull noted (");
        assertThatThrownBy(() -> RootfsCopy.copy(image, Long.MAX_VALUE / 2, copy))
                .isInstanceOf(IOException.class)
                .hasMessageStartingWith(
                        "copying the image's root filesystem (4398046511104 MiB) would need more than" + " the ")
                .hasMessageContaining(" MiB free on the disk of " + copy);
    }

    @Test
    void anInterruptedCopyStops() throws Exception {
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> RootfsCopy.copy(image, 1 << 20, copy))
                    .isInstanceOf(java.io.InterruptedIOException.class)
                    .hasMessage("the copy of the image's root filesystem was interrupted");
        } finally {
            Thread.interrupted();
        }
    }
}
