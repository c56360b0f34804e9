package dev.drover.driver.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tasks under drover-monitor report exactly how they ended; skipped where the build had no C compiler. */
class TaskMonitorTest {

    @TempDir
    Path dir;

    final LogRotator rotator = new LogRotator(1 << 20, 3, Duration.ofMillis(50));
    final List<TaskHandle> started = new ArrayList<>();
    HostProcessDriver driver;
    Path monitor;

    @BeforeEach
    void install() throws Exception {
        assumeTrue(TaskMonitor.class.getResource(TaskMonitor.RESOURCE) != null, "drover-monitor was not built");
        monitor = TaskMonitor.install(dir.resolve("data")).orElseThrow();
        driver = HostDrivers.monitored(rotator, monitor);
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (TaskHandle h : started) {
            new ProcessBuilder("kill", "-KILL", "--", "-" + h.longState("pid", -1))
                    .start()
                    .waitFor(5, TimeUnit.SECONDS);
            long supervisor = h.longState("supervisorPid", -1);
            await().atMost(Duration.ofSeconds(10))
                    .until(() ->
                            ProcessHandle.of(supervisor).map(p -> !p.isAlive()).orElse(true));
        }
        if (driver != null) {
            driver.close();
        }
        rotator.close();
    }

    TaskHandle start(String name, String script) throws Exception {
        Files.createDirectories(dir.resolve(name));
        TaskHandle h = driver.start(new TaskConfig(
                "default",
                "alloc",
                name,
                Map.of("command", "/bin/sh", "args", List.of("-c", script)),
                Map.of(),
                dir.resolve("alloc"),
                dir.resolve(name),
                dir.resolve("alloc/logs"),
                dir.resolve(name + "/secrets")));
        started.add(h);
        return h;
    }

    ExitResult exit(TaskHandle h) throws Exception {
        return driver.exit(h).get(10, TimeUnit.SECONDS);
    }

    @Test
    void aTaskThatExits130IsExitCode130WithNoSignal() throws Exception {
        assertThat(exit(start("t", "exit 130"))).isEqualTo(new ExitResult(130, null, null));
    }

    @Test
    void aTaskEndedBySigintIsSignal2() throws Exception {
        assertThat(exit(start("t", "kill -INT $$"))).isEqualTo(new ExitResult(130, "SIGINT", null));
    }

    @Test
    void sigintSentToTheTaskFromOutsideIsReportedAsSuch() throws Exception {
        TaskHandle h = start("t", "exec sleep 30");
        new ProcessBuilder("kill", "-INT", Long.toString(h.longState("pid", -1)))
                .start()
                .waitFor(5, TimeUnit.SECONDS);
        assertThat(exit(h).signal()).isEqualTo("SIGINT");
    }

    /** The signals an operator or a group kill sends are the task's: the monitor lives on to record its end. */
    @Test
    void theMonitorIgnoresInterruptsAndTerminationAndStillRecords() throws Exception {
        TaskHandle h = start("t", "trap 'exit 7' USR1; sleep 30 & wait");
        long monitorPid = h.longState("supervisorPid", -1);
        assertThat(Procs.commandLine(monitorPid)).contains(monitor.toString());
        for (String sig : List.of("-INT", "-TERM", "-HUP")) {
            new ProcessBuilder("kill", sig, Long.toString(monitorPid)).start().waitFor(5, TimeUnit.SECONDS);
        }
        assertThat(ProcessHandle.of(monitorPid).map(ProcessHandle::isAlive)).contains(true);
        new ProcessBuilder("kill", "-USR1", Long.toString(h.longState("pid", -1)))
                .start()
                .waitFor(5, TimeUnit.SECONDS);
        assertThat(exit(h)).isEqualTo(ExitResult.code(7));
    }

    @Test
    void installReplacesALinkWithoutWritingThroughIt() throws Exception {
        Path data = dir.resolve("other");
        Path victim = Files.writeString(dir.resolve("victim"), "keep me");
        Files.createDirectories(data.resolve("bin"));
        Files.createSymbolicLink(data.resolve("bin/drover-monitor"), victim);

        Path installed = TaskMonitor.install(data).orElseThrow();

        assertThat(Files.readString(victim)).isEqualTo("keep me");
        assertThat(Files.isSymbolicLink(installed)).isFalse();
        assertThat(Files.readAllBytes(installed)).isEqualTo(Files.readAllBytes(monitor));
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(installed)))
                .isEqualTo("r-x------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(data.resolve("bin"))))
                .isEqualTo("rwx------");
    }

    @Test
    void installReplacesATamperedCopy() throws Exception {
        Files.setPosixFilePermissions(monitor, PosixFilePermissions.fromString("rwx------"));
        Files.writeString(monitor, "#!/bin/sh\nexit 0\n");
        Optional<Path> again = TaskMonitor.install(dir.resolve("data"));
        assertThat(again).contains(monitor);
        assertThat(Files.size(monitor)).isGreaterThan(1000);
        assertThat(exit(start("t", "exit 3"))).isEqualTo(ExitResult.code(3));
    }

    /** The next agent finds the task by its monitor (started, or never recorded) and still learns exactly how it ended. */
    @Test
    void aNextAgentTakesOverAMonitoredTaskAndReadsItsExactEnd() throws Exception {
        Path go = dir.resolve("go");
        TaskHandle h = start("t", "while [ ! -e " + go + " ]; do sleep 0.05; done; kill -INT $$");
        try (HostProcessDriver nextAgent = HostDrivers.monitored(rotator, monitor)) {
            TaskHandle recovered = nextAgent.recover(h);
            Files.writeString(go, "");
            assertThat(nextAgent.exit(recovered).get(10, TimeUnit.SECONDS))
                    .isEqualTo(new ExitResult(130, "SIGINT", null));
        }
    }
}
