package dev.drover.driver.mock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.drover.driver.DriverException;
import dev.drover.driver.DriverStartException;
import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskNotRunningException;
import dev.drover.driver.host.LogRotator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MockDriverTest {

    @TempDir
    Path dir;

    final MockDriver driver = new MockDriver(Clock.systemUTC());

    @AfterEach
    void close() {
        driver.close();
    }

    TaskConfig task(String name, Map<String, Object> config) {
        return new TaskConfig(
                "default",
                "alloc",
                name,
                config,
                Map.of(),
                dir,
                dir.resolve(name),
                dir.resolve("logs"),
                dir.resolve(name).resolve("secrets"));
    }

    long logBytes(String task) throws Exception {
        long total = 0;
        try (var files = Files.list(dir.resolve("logs"))) {
            for (Path f : files.filter(f -> f.getFileName().toString().startsWith(task + ".stdout."))
                    .toList()) {
                total += Files.size(f);
            }
        }
        return total;
    }

    /**
     * A repeat every nanosecond of a 1000-byte line is slowed to the driver's bound, 64 KiB a second per task (it
     * wrote as fast as the shared scheduler thread could, megabytes a second).
     */
    @Test
    void aHostileRepeatWritesABoundedAmountPerSecond() throws Exception {
        TaskHandle h = driver.start(task(
                "t",
                Map.of("stdoutString", "x".repeat(999), "stdoutRepeat", 1_000_000_000, "stdoutRepeatDuration", "1ns")));
        long begin = System.nanoTime();
        Thread.sleep(1000); // a rate is measured over time: there is nothing to await
        long written = logBytes("t");
        long seconds = Math.max(1, (System.nanoTime() - begin + 999_999_999) / 1_000_000_000);
        assertThat(written).isPositive().isLessThanOrEqualTo(1000 + seconds * MockDriver.MAX_BYTES_PER_SECOND);
        driver.destroy(h);
    }

    /** Mock logs are rotated like raw_exec's: a bounded number of bounded files. */
    @Test
    void repeatedOutputIsRotated() throws Exception {
        Path logs = dir.resolve("logs");
        try (LogRotator small = new LogRotator(1024, 3, Duration.ofMillis(20));
                MockDriver d = new MockDriver(Clock.systemUTC(), small)) {
            TaskHandle h = d.start(task(
                    "t",
                    Map.of("stdoutString", "y".repeat(99), "stdoutRepeat", 100_000, "stdoutRepeatDuration", "10ms")));
            await().atMost(Duration.ofSeconds(20)).until(() -> Files.exists(logs.resolve("t.stdout.2")));
            d.destroy(h);
        } // the rotator has stopped: the files hold still (mid-rotation t.stdout.1 is briefly absent)
        assertThat(logs.resolve("t.stdout.3")).doesNotExist();
        for (String f : List.of("t.stdout.0", "t.stdout.1", "t.stdout.2")) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(logs.resolve(f))))
                    .as(f)
                    .isEqualTo("rw-r-----");
        }
        for (String f : List.of("t.stdout.1", "t.stdout.2")) {
            assertThat(Files.size(logs.resolve(f))).as(f).isLessThan(4096);
        }
    }

    @Test
    void runsForItsTimeThenExitsWithItsCode() throws Exception {
        TaskHandle h = driver.start(task("t", Map.of("runFor", "100ms", "exitCode", 3)));
        long start = System.nanoTime();
        ExitResult r = driver.exit(h).get(5, TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(80));
        assertThat(r).isEqualTo(ExitResult.code(3));
    }

    @Test
    void withoutRunForItRunsUntilStoppedAndReportsTheSignal() throws Exception {
        TaskHandle h = driver.start(task("t", Map.of()));
        assertThat(driver.exit(h)).isNotDone();
        driver.stop(h, Duration.ofSeconds(5), "SIGINT");
        assertThat(driver.exit(h).get(1, TimeUnit.SECONDS)).isEqualTo(new ExitResult(130, "SIGINT", null));
    }

    @Test
    void killAfterLongerThanTheTimeoutEndsInSigkillAtTheTimeout() throws Exception {
        TaskHandle h = driver.start(task("t", Map.of("killAfter", "10s")));
        long start = System.nanoTime();
        driver.stop(h, Duration.ofMillis(100), "SIGTERM");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        assertThat(driver.exit(h).get().signal()).isEqualTo("SIGKILL");
    }

    @Test
    void killAfterShorterThanTheTimeoutExitsOnTheSignal() throws Exception {
        TaskHandle h = driver.start(task("t", Map.of("killAfter", "50ms")));
        driver.stop(h, Duration.ofSeconds(5), "SIGTERM");
        assertThat(driver.exit(h).get().signal()).isEqualTo("SIGTERM");
    }

    @Test
    void exitOnSignalEndsTheTaskAsThatSignalAndOtherSignalsPassUnnoticed() throws Exception {
        TaskHandle h = driver.start(task("t", Map.of("exitOnSignal", "hup")));
        driver.signal(h, "SIGUSR1");
        assertThat(driver.exit(h)).isNotDone();
        driver.signal(h, "SIGHUP");
        assertThat(driver.exit(h).get(1, TimeUnit.SECONDS)).isEqualTo(ExitResult.signalled("SIGHUP"));
    }

    @Test
    void aTaskThatExitedCannotBeSignalled() throws Exception {
        TaskHandle h = driver.start(task("t", Map.of("runFor", "0s")));
        driver.exit(h).get(1, TimeUnit.SECONDS);
        assertThatThrownBy(() -> driver.signal(h, "SIGHUP"))
                .isInstanceOf(TaskNotRunningException.class)
                .hasMessage("mock task default/alloc/t is not running");
    }

    @Test
    void signalErrorFailsEverySignalAndTheTaskRunsOn() throws Exception {
        TaskHandle h = driver.start(task("t", Map.of("signalError", "permission denied", "exitOnSignal", "SIGHUP")));
        assertThatThrownBy(() -> driver.signal(h, "SIGHUP"))
                .isInstanceOf(DriverException.class)
                .isNotInstanceOf(TaskNotRunningException.class)
                .hasMessage("permission denied");
        assertThat(driver.exit(h)).isNotDone();
    }

    @Test
    void aRecoveredTaskStillExitsOnItsSignal() throws Exception {
        TaskHandle h = driver.start(task("t", Map.of("exitOnSignal", "SIGUSR2")));
        try (MockDriver restarted = new MockDriver(Clock.systemUTC())) {
            TaskHandle again = restarted.recover(h);
            restarted.signal(again, "SIGUSR2");
            assertThat(restarted.exit(again).get(1, TimeUnit.SECONDS)).isEqualTo(ExitResult.signalled("SIGUSR2"));
        }
    }

    @Test
    void exitOnSignalMustNameASignal() {
        assertThat(driver.validate(Map.of("exitOnSignal", "SIGRELOAD")))
                .containsExactly("config.exitOnSignal: \"SIGRELOAD\" is not a signal (e.g. SIGHUP, SIGUSR1)");
        assertThat(driver.validate(Map.of("exitOnSignal", "usr1"))).isEmpty();
    }

    @Test
    void startErrorsCarryTheirRecoverability() {
        assertThatThrownBy(
                        () -> driver.start(task("t", Map.of("startError", "no disk", "startErrorRecoverable", true))))
                .isInstanceOfSatisfying(DriverStartException.class, e -> {
                    assertThat(e).hasMessage("no disk");
                    assertThat(e.recoverable()).isTrue();
                });
        assertThatThrownBy(() -> driver.start(task("t", Map.of("startError", "bad image"))))
                .isInstanceOfSatisfying(
                        DriverStartException.class,
                        e -> assertThat(e.recoverable()).isFalse());
    }

    @Test
    void startBlocksForStartBlockFor() throws Exception {
        long start = System.nanoTime();
        driver.start(task("t", Map.of("startBlockFor", "150ms")));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(150));
    }

    @Test
    void writesStdoutAndRepeatsIt() throws Exception {
        TaskHandle h = driver.start(task(
                "t",
                Map.of("stdoutString", "hello", "stdoutRepeat", 2, "stdoutRepeatDuration", "20ms", "runFor", "200ms")));
        driver.exit(h).get(5, TimeUnit.SECONDS);
        assertThat(Files.readAllLines(dir.resolve("logs/t.stdout.0"))).containsExactly("hello", "hello", "hello");
    }

    @Test
    void aWriteFailingOnEveryRepeatIsLoggedOnceNotPerWrite() throws Exception {
        java.nio.file.Files.writeString(dir.resolve("logs"), "a file where the logs directory should be");
        ch.qos.logback.classic.Logger log =
                (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(MockDriver.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines =
                new ch.qos.logback.core.read.ListAppender<>();
        lines.start();
        log.addAppender(lines);
        try {
            TaskHandle h = driver.start(task(
                    "t",
                    Map.of(
                            "stdoutString",
                            "hello",
                            "stdoutRepeat",
                            100,
                            "stdoutRepeatDuration",
                            "1ms",
                            "runFor",
                            "500ms")));
            driver.exit(h).get(5, TimeUnit.SECONDS);
        } finally {
            log.detachAppender(lines);
        }
        // the log file cannot be created (one line), and then every write fails: one more line, not one per write
        assertThat(lines.list)
                .as("a full disk fails every write: one line, not one per write")
                .filteredOn(l -> l.getFormattedMessage().contains("could not write"))
                .hasSize(1);
        assertThat(lines.list).hasSizeLessThanOrEqualTo(2);
    }

    @Test
    void validationIsStrictAndNamesEveryKey() {
        assertThat(driver.validate(Map.of("runFor", "soon", "exitCode", "one", "runfor", "1s")))
                .containsExactlyInAnyOrder(
                        "config.runFor: \"soon\" is not a duration (use a number with a unit: ns, us, ms, s, m, h; e.g. 250ms, 15s, 1h30m)",
                        "config.exitCode: \"one\" is not a whole number",
                        "config.runfor: unknown key (known: runFor, exitCode, startError, startErrorRecoverable,"
                                + " startBlockFor, killAfter, stdoutString, stdoutRepeat, stdoutRepeatDuration, exitOnSignal, signalError, exec)");
        assertThat(driver.validate(Map.of("runFor", "1h", "exitCode", 2))).isEmpty();
    }

    @Test
    void recoveredTaskRunsOnlyTheTimeItHasLeft() throws Exception {
        TaskHandle h = driver.start(task("t", Map.of("runFor", "400ms", "exitCode", 4)));
        try (MockDriver restarted = new MockDriver(Clock.systemUTC())) {
            TaskHandle again = restarted.recover(h);
            ExitResult r = restarted.exit(again).get(5, TimeUnit.SECONDS);
            assertThat(r).isEqualTo(ExitResult.code(4));
            assertThat(Duration.between(h.startedAt(), Instant.now())).isLessThan(Duration.ofMillis(2000));
        }
    }

    @Test
    void recoveredTaskPastItsTimeReportsItsExitAtOnce() throws Exception {
        TaskHandle old = new TaskHandle(
                "mock",
                "default/a/t",
                Instant.now().minusSeconds(60),
                Map.of("runForNanos", Long.toString(Duration.ofSeconds(1).toNanos()), "exitCode", "0"));
        driver.recover(old);
        assertThat(driver.exit(old).get(1, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(0));
    }

    @Test
    void thousandsOfTasksNeedNoThreads() throws Exception {
        int before = Thread.activeCount();
        List<TaskHandle> handles = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            handles.add(driver.start(task("t" + i, Map.of("runFor", "1h"))));
        }
        assertThat(Thread.activeCount()).isLessThanOrEqualTo(before + 1);
        for (TaskHandle h : handles) {
            driver.stop(h, Duration.ofSeconds(1), "SIGTERM");
        }
        assertThat(handles).allSatisfy(h -> assertThat(driver.exit(h)).isDone());
    }

    @Test
    void closeStopsTheSchedulerThread() throws Exception {
        long before = schedulerThreads();
        MockDriver d = new MockDriver(Clock.systemUTC());
        d.start(task("t", Map.of("runFor", "1h")));
        assertThat(schedulerThreads()).isEqualTo(before + 1);
        d.close();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> schedulerThreads() == before);
    }

    private static long schedulerThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("drover-mock-driver") && t.isAlive())
                .count();
    }
}
