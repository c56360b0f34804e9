package dev.drover.driver.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.driver.DriverStartException;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.host.TaskUser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NamespacesTest {

    private static final Path DATA = Path.of("/var/lib/drover");
    private static final Path ALLOC = DATA.resolve("allocs/default/web");

    @TempDir
    Path dir;

    private static TaskConfig task(Path alloc, String user) {
        return new TaskConfig(
                "default",
                "web",
                "api",
                Map.of("command", "/bin/server", "args", List.of("--port", "8080")),
                Map.of(),
                alloc.resolve("alloc"),
                alloc.resolve("api"),
                alloc.resolve("alloc/logs"),
                alloc.resolve("api/secrets"),
                null,
                user);
    }

    private Namespaces namespaces(Path data) {
        return new Namespaces(data, dir.resolve("passwd"), new GpuNodes(dir, dir, false));
    }

    @Test
    void theTaskRunsInFourNewNamespacesBehindTheSetupShellThenAsItsUserWithNoWayBackToRoot() throws Exception {
        List<String> argv = namespaces(DATA)
                .argv(
                        task(ALLOC, null),
                        ALLOC.resolve("api/.drover-raw-exec"),
                        new TaskUser("nobody", 65534, 65534),
                        Set.of(Path.of("/dev/nvidia1"), Path.of("/dev/nvidia0")),
                        List.of("/bin/server", "--port", "8080"));

        assertThat(argv)
                .containsExactly(
                        "unshare",
                        "--pid",
                        "--fork",
                        "--kill-child",
                        "--mount",
                        "--ipc",
                        "--uts",
                        "--mount-proc",
                        "--propagation",
                        "private",
                        "--",
                        "/bin/sh",
                        "-c",
                        Namespaces.SETUP,
                        "drover-exec",
                        "/var/lib/drover",
                        "/var/lib/drover/allocs/default/web",
                        "/var/lib/drover/allocs/default/web/api",
                        "/var/lib/drover/allocs/default/web/api/.drover-raw-exec/task-env",
                        "0",
                        "2",
                        "/dev/nvidia0",
                        "/dev/nvidia1",
                        "setpriv",
                        "--reuid=65534",
                        "--regid=65534",
                        "--clear-groups",
                        "--inh-caps=-all",
                        "--no-new-privs",
                        "--",
                        "/bin/sh",
                        "-c",
                        "eval \"$(cat <&3)\" && exec 3<&- && exec \"$@\"",
                        "drover-task",
                        "/bin/server",
                        "--port",
                        "8080");
        assertThat(Namespaces.SETUP)
                .as("the data dir is covered, the allocation mounted again, /tmp the task's own")
                .contains("mount -t tmpfs -o mode=0711,nosuid,nodev,size=1m tmpfs \"$data\"")
                .contains("mount --no-canonicalize --bind /proc/self/fd/4 \"$alloc\"")
                .contains("mount --bind \"$task/tmp\" /tmp")
                .contains("mount --bind /dev/null \"$1\"");
    }

    @Test
    void aDataDirBelowTmpOrAnAllocationOutsideItIsRefused() {
        Path tmpData = Path.of("/tmp/drover");
        assertThatThrownBy(() -> namespaces(tmpData)
                        .argv(
                                task(tmpData.resolve("allocs/default/web"), null),
                                dir,
                                new TaskUser("n", 1, 1),
                                Set.of(),
                                List.of("/bin/true")))
                .isInstanceOf(DriverStartException.class)
                .hasMessageContaining("below /tmp");
        assertThatThrownBy(() -> namespaces(DATA)
                        .argv(
                                task(Path.of("/srv/elsewhere/web"), null),
                                dir,
                                new TaskUser("n", 1, 1),
                                Set.of(),
                                List.of("/bin/true")))
                .isInstanceOf(DriverStartException.class)
                .hasMessageContaining("not inside the agent's data dir");
    }

    @Test
    void anExecTaskIsNeverRunAsRootWhateverItsUserIsCalled() {
        for (TaskUser root : List.of(new TaskUser("root", 0, 0), new TaskUser("toor", 0, 1000))) {
            assertThatThrownBy(
                            () -> namespaces(DATA).argv(task(ALLOC, null), dir, root, Set.of(), List.of("/bin/true")))
                    .isInstanceOf(DriverStartException.class)
                    .hasMessageContaining("does not run tasks as root")
                    .hasMessageContaining("user " + root.name() + " is uid 0");
        }
        // as operator and sync are on some distributions: group root opens what the host gives that group
        assertThatThrownBy(() -> namespaces(DATA)
                        .argv(task(ALLOC, null), dir, new TaskUser("operator", 11, 0), Set.of(), List.of("/bin/true")))
                .isInstanceOf(DriverStartException.class)
                .hasMessageContaining("user operator has group 0");
    }

    @Test
    void usersAreFoundByNameOrUidAndAnUnknownNameIsRefused() throws Exception {
        Path passwd = Files.writeString(
                dir.resolve("passwd"),
                "root:x:0:0:root:/root:/bin/bash\nbroken:x:zz:1::/:/bin/sh\n"
                        + "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\nsvc:x:1001:2002::/:/bin/sh\n");
        assertThat(TaskUser.resolve("nobody", passwd)).isEqualTo(new TaskUser("nobody", 65534, 65534));
        assertThat(TaskUser.resolve("1001", passwd)).isEqualTo(new TaskUser("svc", 1001, 2002));
        assertThat(TaskUser.resolve("4242", passwd))
                .as("a uid no one has runs with the same gid")
                .isEqualTo(new TaskUser("4242", 4242, 4242));
        assertThatThrownBy(() -> TaskUser.resolve("broken", passwd))
                .isInstanceOf(DriverStartException.class)
                .hasMessageContaining("does not exist");
    }

    @Test
    void gpuNodesTheTaskWasNotGivenAreHiddenAndItsOwnEnvCannotClaimOthers() throws Exception {
        Path dev = Files.createDirectories(dir.resolve("dev"));
        for (String n : List.of("nvidia0", "nvidia1", "nvidia2", "nvidiactl", "nvidia-uvm", "null")) {
            Files.createFile(dev.resolve(n));
        }
        Path gpus = Files.createDirectories(dir.resolve("gpus"));
        Files.createDirectories(gpus.resolve("0000:01:00.0"));
        Files.writeString(
                gpus.resolve("0000:01:00.0/information"), "Model: X\nGPU UUID: \t GPU-aaa-1\nDevice Minor: \t 1\n");
        Files.createDirectories(gpus.resolve("0000:02:00.0"));
        Files.writeString(gpus.resolve("0000:02:00.0/information"), "GPU UUID: GPU-bbb-2\nDevice Minor: 2\n");

        GpuNodes managed = new GpuNodes(dev, gpus, true);
        assertThat(managed.hidden(Map.of(GpuNodes.VISIBLE_DEVICES, "GPU-aaa-1")))
                .containsExactlyInAnyOrder(dev.resolve("nvidia0"), dev.resolve("nvidia2"));
        assertThat(managed.hidden(Map.of(GpuNodes.VISIBLE_DEVICES, "void")))
                .containsExactlyInAnyOrder(dev.resolve("nvidia0"), dev.resolve("nvidia1"), dev.resolve("nvidia2"));
        assertThat(new GpuNodes(dev, gpus, false).hidden(Map.of(GpuNodes.VISIBLE_DEVICES, "GPU-aaa-1,0,2")))
                .as("no device plugin reserved anything: a task's own variable gives it nothing")
                .containsExactlyInAnyOrder(dev.resolve("nvidia0"), dev.resolve("nvidia1"), dev.resolve("nvidia2"));
    }

    @Test
    void whereTasksCannotBeConfinedEveryTaskFailsValidationSayingWhatIsMissing() {
        try (ExecDriver exec = new ExecDriver(
                Clock.systemUTC(),
                null,
                List.of(),
                dev.drover.driver.host.TaskCgroups.none(),
                namespaces(DATA),
                Optional.of("the setpriv command (util-linux) is not installed"),
                Optional.empty())) {
            assertThat(exec.validate(Map.of("command", "/bin/true")))
                    .containsExactly("the exec driver cannot run tasks on this node:"
                            + " the setpriv command (util-linux) is not installed");
            assertThatThrownBy(() -> exec.start(task(ALLOC, null)))
                    .isInstanceOf(DriverStartException.class)
                    .hasMessageContaining("setpriv");
        }
    }
}
