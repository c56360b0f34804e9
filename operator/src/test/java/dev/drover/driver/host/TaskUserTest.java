package dev.drover.driver.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.drover.driver.DriverStartException;
import dev.drover.driver.TaskConfig;
import dev.drover.fs.LinkSwapper;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Giving a task its directories ({@link TaskUser#own}), run as root as the agent is. */
class TaskUserTest {

    private static final TaskUser NOBODY = new TaskUser("nobody", 65534, 65534);

    @TempDir
    Path dir;

    @BeforeEach
    void asRoot() throws Exception {
        assumeTrue(
                (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid") == 0, "giving files away takes root");
    }

    private TaskConfig task() {
        Path taskDir = dir.resolve("alloc/web");
        return new TaskConfig(
                "default",
                "alloc",
                "web",
                Map.of("command", "/bin/true"),
                Map.of(),
                dir.resolve("alloc"),
                taskDir,
                dir.resolve("alloc/alloc/logs"),
                taskDir.resolve("secrets"),
                null,
                "nobody");
    }

    private static Object uid(Path p) throws Exception {
        return Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
    }

    @Test
    void theTasksDirectoriesAndWhatTheyHoldBecomeItsUsersLinksIncludedNeverWhatTheyPointAt() throws Exception {
        TaskConfig t = task();
        Path sub = Files.createDirectories(t.taskDir().resolve("local/sub"));
        Files.writeString(sub.resolve("file"), "the task's");
        Path node = Files.writeString(dir.resolve("node-file"), "root's");
        Files.createSymbolicLink(sub.resolve("link"), node);

        NOBODY.own(t);

        for (Path p : List.of(t.taskDir().resolve("local"), sub, sub.resolve("file"), sub.resolve("link"))) {
            assertThat(uid(p)).as(p.toString()).isEqualTo(65534);
        }
        assertThat(uid(node)).isEqualTo(0);
        assertThat(uid(t.taskDir())).as("the task directory stays the agent's").isEqualTo(0);
    }

    /**
     * A process of the task's user (another task of the allocation, or one its task left) swaps a directory of its
     * {@code local/} for a link to {@code /etc} while the agent gives the directory to the user at a restart: the walk
     * reached each entry by its whole path, which follows a link put in the middle of it, so root could give the
     * task's user a file of the node's ({@code /etc/shadow}).
     */
    @Test
    void aDirectorySwappedForALinkWhileItIsGivenAwayNeverGivesWhatTheLinkPointsAt() throws Exception {
        TaskConfig t = task();
        Path decoy = Files.createDirectories(t.taskDir().resolve("local/sub"));
        for (int i = 0; i < 20; i++) {
            Files.writeString(decoy.resolve("shadow" + i), "the task's");
        }
        Path etc = Files.createDirectories(dir.resolve("etc"));
        for (int i = 0; i < 20; i++) {
            Files.writeString(etc.resolve("shadow" + i), "root's");
        }

        List<DriverStartException> failed = new ArrayList<>();
        try (LinkSwapper swapper = LinkSwapper.start(decoy, etc)) {
            for (int i = 0; i < 1_000; i++) {
                try {
                    NOBODY.own(t);
                } catch (DriverStartException e) {
                    failed.add(e);
                }
            }
            assertThat(swapper.swaps()).as("the task's swaps").isPositive();
        }

        assertThat(uid(etc)).isEqualTo(0);
        for (int i = 0; i < 20; i++) {
            assertThat(uid(etc.resolve("shadow" + i))).as("shadow" + i).isEqualTo(0);
        }
        assertThat(failed).as("starts the swaps made fail").isEmpty();
    }
}
