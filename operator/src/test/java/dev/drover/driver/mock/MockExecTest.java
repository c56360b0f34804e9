package dev.drover.driver.mock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.driver.ExecProcess;
import dev.drover.driver.ExecRequest;
import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.TaskNotRunningException;
import dev.drover.testing.LiveThreads;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The mock driver's scripted commands, as a transport or an exec check would run them. */
class MockExecTest {

    private static final Map<String, Object> SCRIPTS = Map.of(
            "cat", Map.of("echoStdin", true),
            "check", Map.of("stdout", "ok\n", "stderr", "warned\n", "exitCode", 3),
            "top", Map.of("stdout", "running\n", "runFor", "1h", "printSize", true));

    @TempDir
    Path dir;

    final MockDriver driver = new MockDriver(Clock.systemUTC());

    @AfterEach
    void close() {
        driver.close();
    }

    private TaskHandle start(Map<String, Object> config) throws Exception {
        return driver.start(new TaskConfig(
                "default",
                "alloc",
                "web",
                config,
                Map.of(),
                dir,
                dir.resolve("web"),
                dir.resolve("logs"),
                dir.resolve("web/secrets")));
    }

    private static String read(InputStream in) throws IOException {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }

    private static int exitOf(ExecProcess p) throws Exception {
        return p.exit().get(10, TimeUnit.SECONDS);
    }

    @Test
    void aScriptedCommandWritesItsOutputAndErrorsAndExitsWithItsCode() throws Exception {
        TaskHandle h = start(Map.of("exec", SCRIPTS));

        try (ExecProcess p = driver.exec(h, new ExecRequest(List.of("check", "--deep"), false, false))) {
            assertThat(read(p.stdout())).isEqualTo("ok\n");
            assertThat(read(p.stderr())).isEqualTo("warned\n");
            assertThat(exitOf(p)).isEqualTo(3);
            assertThatThrownBy(() -> p.stdin().write(1))
                    .as("no input was asked for")
                    .isInstanceOf(IOException.class);
        }
    }

    @Test
    void anUnknownCommandIsNotFoundAsInAShell() throws Exception {
        TaskHandle h = start(Map.of());

        try (ExecProcess p = driver.exec(h, new ExecRequest(List.of("ls", "/"), false, false))) {
            assertThat(read(p.stderr())).isEqualTo("drover-mock: ls: command not found\n");
            assertThat(read(p.stdout())).isEmpty();
            assertThat(exitOf(p)).isEqualTo(127);
        }
    }

    @Test
    void catEchoesItsInputUntilItEnds() throws Exception {
        TaskHandle h = start(Map.of("exec", SCRIPTS));

        try (ExecProcess p = driver.exec(h, new ExecRequest(List.of("cat"), true, false))) {
            byte[] big = "0123456789abcdef".repeat(10_000).getBytes(StandardCharsets.UTF_8); // more than the pipe holds
            Thread writer = Thread.ofVirtual().start(() -> {
                try (var in = p.stdin()) {
                    in.write(big);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(p.stdout().readAllBytes()).isEqualTo(big);
            writer.join();
            assertThat(exitOf(p)).isZero();
        }
    }

    @Test
    void onATerminalErrorsComeOnStdoutAndEachResizeIsShownByACommandThatPrintsIt() throws Exception {
        TaskHandle h = start(Map.of("exec", SCRIPTS));

        try (ExecProcess check = driver.exec(h, new ExecRequest(List.of("check"), false, true))) {
            assertThat(read(check.stdout())).isEqualTo("ok\nwarned\n");
            assertThat(check.stderr().read()).isEqualTo(-1);
        }
        try (ExecProcess top = driver.exec(h, new ExecRequest(List.of("top"), true, true))) {
            top.resize(120, 40);
            top.resize(120, 40); // the same size again is no change
            top.resize(80, 24);
            byte[] shown = top.stdout().readNBytes("running\n40 120\n24 80\n".length());
            assertThat(new String(shown, StandardCharsets.UTF_8)).isEqualTo("running\n40 120\n24 80\n");
            assertThat(top.exit()).as("it runs for an hour").isNotDone();

            top.close();

            assertThat(exitOf(top)).as("killed, as by SIGKILL").isEqualTo(137);
            assertThat(top.stdout().read()).isEqualTo(-1);
        }
    }

    @Test
    void aCommandInATaskThatEndedIsRefused() throws Exception {
        TaskHandle h = start(Map.of("exec", SCRIPTS));
        driver.stop(h, Duration.ofSeconds(1), "SIGTERM");

        assertThatThrownBy(() -> driver.exec(h, new ExecRequest(List.of("check"), false, false)))
                .isInstanceOf(TaskNotRunningException.class);
    }

    @Test
    void aCommandEndsWithItsTaskAndNoThreadOfItOutlivesTheDriver() throws Exception {
        TaskHandle h = start(Map.of("exec", SCRIPTS));
        ExecProcess top = driver.exec(h, new ExecRequest(List.of("top"), true, false));
        ExecProcess cat = driver.exec(h, new ExecRequest(List.of("cat"), true, false));

        driver.stop(h, Duration.ofSeconds(1), "SIGTERM");

        assertThat(exitOf(top)).isEqualTo(137);
        assertThat(exitOf(cat)).isEqualTo(137);
        MockDriver closing = new MockDriver(Clock.systemUTC());
        TaskHandle other = closing.start(new TaskConfig(
                "default",
                "alloc",
                "api",
                Map.of("exec", SCRIPTS),
                Map.of(),
                dir,
                dir.resolve("api"),
                dir.resolve("logs"),
                dir.resolve("api/secrets")));
        ExecProcess left = closing.exec(other, new ExecRequest(List.of("top"), false, false));

        closing.close();

        assertThat(exitOf(left)).isEqualTo(137);
        assertThat(LiveThreads.now()).noneMatch(t -> t.name().equals("drover-mock-exec"));
    }

    @Test
    void aReattachedTaskStillRunsItsScripts() throws Exception {
        TaskHandle h = start(Map.of("exec", SCRIPTS));

        try (MockDriver after = new MockDriver(Clock.systemUTC())) {
            after.recover(h);
            try (ExecProcess p = after.exec(h, new ExecRequest(List.of("check"), false, false))) {
                assertThat(read(p.stdout())).isEqualTo("ok\n");
                assertThat(exitOf(p)).isEqualTo(3);
            }
        }
    }

    @Test
    void scriptsAreValidatedStrictlyNamingTheCommandAndKey() {
        assertThat(driver.validate(
                        Map.of("exec", Map.of("check", Map.of("exitCode", 300, "stdot", "x"), "cat", "yes"))))
                .containsExactlyInAnyOrder(
                        "config.exec.check.exitCode: 300 is not an exit code (0 to 255)",
                        "config.exec.check.stdot: unknown key (known: stdout, stderr, exitCode, echoStdin, runFor,"
                                + " printSize)",
                        "config.exec.cat: \"yes\" is not a map (stdout, stderr, exitCode, echoStdin, runFor, printSize)");
        assertThat(driver.validate(Map.of("exec", List.of("cat"))))
                .containsExactly("config.exec: [cat] is not a map of names to values");
    }
}
