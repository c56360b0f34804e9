package dev.drover.network;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.common.MountTable;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NetNsTest {

    @TempDir
    Path tmp;

    @Test
    void aCreatedNamespaceExistsUntilRemovedAndASecondRemovalIsHarmless() throws Exception {
        NetNs netns = NetNs.in(tmp.resolve("netns"));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(netns.dir())))
                .isEqualTo("rwx------");
        Path f = netns.create("alloc-1");

        assertThat(f).isEqualTo(netns.dir().resolve("alloc-1"));
        assertThat(netns.exists(f)).isTrue();
        assertThat(Nodes.run(null, "nsenter", "--net=" + f, "ip", "-o", "link").strip())
                .as("a new namespace has its loopback only")
                .startsWith("1: lo:")
                .doesNotContain("\n");

        netns.remove(f);
        assertThat(netns.exists(f)).isFalse();
        assertThat(f).doesNotExist();
        netns.remove(f);
        assertThat(Files.readString(Path.of("/proc/self/mountinfo"))).doesNotContain(tmp.toString());
    }

    @Test
    void aNamespaceIsNotMadeTwiceAndAPlainFileIsNone() throws Exception {
        NetNs netns = NetNs.in(tmp.resolve("netns"));
        Path leftover = Files.createFile(netns.dir().resolve("crashed"));
        assertThat(netns.exists(leftover))
                .as("a file without a mount is no namespace")
                .isFalse();
        Path f = netns.create("crashed");
        try {
            assertThat(netns.exists(f)).isTrue();
            assertThatThrownBy(() -> netns.create("crashed")).isInstanceOf(FileAlreadyExistsException.class);
        } finally {
            netns.remove(f);
        }
        assertThat(Files.readString(Path.of("/proc/self/mountinfo"))).doesNotContain(tmp.toString());
    }

    @Test
    void aLinkIsRefusedNeverFollowed() throws Exception {
        NetNs netns = NetNs.in(tmp.resolve("netns"));
        Path target = Files.createFile(tmp.resolve("elsewhere"));
        Path link = Files.createSymbolicLink(netns.dir().resolve("evil"), target);

        assertThatThrownBy(() -> netns.exists(link)).hasMessageContaining("symbolic link");
        assertThatThrownBy(() -> netns.create("evil")).hasMessageContaining("symbolic link");
        assertThatThrownBy(() -> netns.remove(link)).hasMessageContaining("symbolic link");
        assertThat(target).exists();
        assertThatThrownBy(() -> NetNs.in(link)).hasMessageContaining("symbolic link");
    }

    @Test
    void namesThatAreNoPlainFileNamesAreRefused() throws Exception {
        NetNs netns = NetNs.in(tmp.resolve("netns"));
        for (String bad : new String[] {"../x", "a/b", "..", ".", "", "-rf", "x".repeat(200)}) {
            assertThatThrownBy(() -> netns.path(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> netns.remove(tmp.resolve("other"))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void mountPointsAreReadAsTheMountTableEscapesThem() {
        assertThat(MountTable.unescape("/a\\040b\\011c\\134d")).isEqualTo("/a b\tc\\d");
        assertThat(MountTable.unescape("/plain")).isEqualTo("/plain");
        assertThat(MountTable.unescape("/x\\09")).isEqualTo("/x\\09");
    }
}
