package dev.drover.allocrunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.fs.LinkSwapper;
import dev.drover.state.AllocId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AllocDirTest {

    @TempDir
    Path data;

    @TempDir
    Path elsewhere;

    @Test
    void buildsTheSharedAndTaskLayout() throws Exception {
        AllocDir d = AllocDir.of(data, new AllocId("default", "web"));
        d.build();
        d.buildTask("app");
        Path root = data.resolve("allocs/default/web");
        for (String p : List.of("alloc/data", "alloc/logs", "alloc/tmp", "app/local", "app/secrets", "app/tmp")) {
            assertThat(root.resolve(p)).isDirectory();
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(root.resolve("app/secrets"))))
                .isEqualTo("rwx------");
    }

    @Test
    void buildingAgainKeepsWhatIsThereAndTightensALoosenedSecretsDirectory() throws Exception {
        AllocDir d = AllocDir.of(data, new AllocId("default", "web"));
        d.build();
        d.buildTask("app");
        Path secrets = data.resolve("allocs/default/web/app/secrets");
        Files.writeString(secrets.resolve("token"), "s3cret");
        Files.setPosixFilePermissions(secrets, PosixFilePermissions.fromString("rwxr-xr-x"));
        d.build();
        d.buildTask("app");
        assertThat(secrets.resolve("token")).hasContent("s3cret");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(secrets)))
                .isEqualTo("rwx------");
    }

    @Test
    void aLinkOrAFileInPlaceOfADirectoryBelowTheTaskIsRefused() throws Exception {
        AllocDir d = AllocDir.of(data, new AllocId("default", "web"));
        d.build();
        d.buildTask("app");
        Path local = d.taskLocal("app");
        Files.delete(local);
        Files.createSymbolicLink(local, elsewhere);
        assertThatThrownBy(() -> d.buildTask("app"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is a link");
        Path logs = d.logs();
        Files.delete(logs);
        Files.writeString(logs, "not a directory");
        assertThatThrownBy(d::build).isInstanceOf(IOException.class).hasMessageContaining("not a directory");
        assertThat(elsewhere).isEmptyDirectory();
    }

    @Test
    void pathEscapesAreRejected() {
        AllocDir d = AllocDir.of(data, new AllocId("default", "web"));
        for (String bad : List.of("..", "../other", "a/b", "/etc", "Upper", "alloc", "")) {
            assertThatThrownBy(() -> d.taskDir(bad))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cannot name a directory");
        }
        assertThatThrownBy(() -> AllocDir.of(data, new AllocId("default", "..")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aLinkPlantedInsideIsNeitherFollowedWhenBuildingNorWhenDestroying() throws Exception {
        Path outside = elsewhere;
        Files.writeString(outside.resolve("precious"), "keep me");
        AllocDir d = AllocDir.of(data, new AllocId("default", "web"));
        d.build();
        Files.createSymbolicLink(d.root().resolve("app"), outside);
        assertThatThrownBy(() -> d.buildTask("app"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("is a link");
        assertThat(outside.resolve("local")).doesNotExist();
        d.destroy();
        assertThat(d.root()).doesNotExist();
        assertThat(outside.resolve("precious")).hasContent("keep me");
    }

    /**
     * A process of the task's user, left running, that swaps a directory of the task's {@code local/} for a link to
     * {@code /etc} while the allocation is destroyed: the removal reached each entry by its whole path, which follows
     * a link put in the middle of it, so it could delete files of the node's as root.
     */
    @Test
    void aDirectorySwappedForALinkWhileTheAllocationIsDestroyedLosesOnlyTheLink() throws Exception {
        Path outside = elsewhere;
        List<String> names = new ArrayList<>();
        for (int f = 0; f < 200; f++) {
            names.add("file" + f);
            Files.writeString(outside.resolve("file" + f), "the node's");
        }
        for (int i = 0; i < 300 && names.stream().allMatch(n -> Files.exists(outside.resolve(n))); i++) {
            AllocDir d = AllocDir.of(data, new AllocId("default", "web"));
            d.build();
            d.buildTask("app");
            Path decoy = Files.createDirectories(d.taskLocal("app").resolve("d"));
            for (String n : names) {
                Files.writeString(decoy.resolve(n), "the task's");
            }
            try (LinkSwapper swapper = LinkSwapper.start(decoy, outside)) {
                Thread.sleep(0, 100_000);
                d.destroy();
            } catch (IOException raced) {
                // the swapper added back what was being removed: the next destroy finishes it
            }
            d.destroy();
            assertThat(d.root()).doesNotExist();
        }
        for (String n : names) {
            assertThat(outside.resolve(n)).hasContent("the node's");
        }
    }

    /** A task may name its files with any bytes: one that is not valid UTF-8 is removed too, not left forever. */
    @Test
    void aNameThatIsNotUtf8IsRemovedWithTheRest() throws Exception {
        AllocDir d = AllocDir.of(data, new AllocId("default", "web"));
        d.build();
        d.buildTask("app");
        Process touch = new ProcessBuilder(
                        "sh", "-c", "mkdir \"$(printf 'd\\377')\" && touch \"$(printf 'd\\377/f\\377')\"")
                .directory(d.taskLocal("app").toFile())
                .start();
        assertThat(touch.waitFor()).isZero();
        assertThat(d.taskLocal("app").toFile().list()).hasSize(1);

        d.destroy();

        assertThat(d.root()).doesNotExist();
    }

    @Test
    void concurrentTaskDirectoriesAreAllBuilt() throws Exception {
        AllocDir d = AllocDir.of(data, new AllocId("default", "many"));
        List<Callable<Void>> jobs = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
            String task = "t" + i;
            jobs.add(() -> {
                d.build();
                d.buildTask(task);
                Files.writeString(d.taskLocal(task).resolve("f"), task);
                return null;
            });
        }
        try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Future<Void> f : pool.invokeAll(jobs)) {
                f.get();
            }
        }
        for (int i = 0; i < 32; i++) {
            assertThat(d.taskLocal("t" + i).resolve("f")).hasContent("t" + i);
        }
    }

    @Test
    void migrationMovesDataAndTaskLocalDirectories() throws Exception {
        AllocDir old = AllocDir.of(data, new AllocId("default", "web-1"));
        old.build();
        old.buildTask("app");
        Files.writeString(old.data().resolve("db"), "rows");
        Files.writeString(old.taskLocal("app").resolve("cache"), "warm");
        AllocDir next = AllocDir.of(data, new AllocId("default", "web-2"));
        next.build();
        next.buildTask("app");
        next.migrateFrom(old, List.of("app", "gone"));
        assertThat(next.data().resolve("db")).hasContent("rows");
        assertThat(next.taskLocal("app").resolve("cache")).hasContent("warm");
        assertThat(old.data()).doesNotExist();
    }

    @Test
    void destroyOfADirectoryNeverBuiltIsFine() throws Exception {
        AllocDir.of(data, new AllocId("default", "never")).destroy();
    }
}
