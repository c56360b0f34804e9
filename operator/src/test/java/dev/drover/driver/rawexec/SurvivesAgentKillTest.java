package dev.drover.driver.rawexec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.driver.ExitResult;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.host.LogRotator;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's JVM dies by SIGKILL; the raw_exec task lives on and its exit code is still learned. */
class SurvivesAgentKillTest {

    @TempDir
    Path dir;

    @Test
    void taskOutlivesASigkilledAgentAndIsRecovered() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process agent = new ProcessBuilder(
                        java,
                        "-cp",
                        System.getProperty("java.class.path"),
                        AgentProcess.class.getName(),
                        dir.toString())
                .redirectErrorStream(true)
                .start();
        TaskHandle handle;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(agent.getInputStream()))) {
            String line;
            do {
                line = out.readLine();
            } while (line != null && !line.startsWith("HANDLE "));
            assertThat(line).as("the child agent started a task").isNotNull();
            String[] parts = line.split(" ");
            Map<String, String> state = new HashMap<>();
            for (int i = 2; i < parts.length; i++) {
                int eq = parts[i].indexOf('=');
                state.put(parts[i].substring(0, eq), parts[i].substring(eq + 1));
            }
            handle = new TaskHandle("raw_exec", "default/a/t", Instant.parse(parts[1]), state);
            agent.destroyForcibly(); // SIGKILL
            assertThat(agent.waitFor(10, TimeUnit.SECONDS)).isTrue();
        }
        long pid = handle.longState("pid", -1);
        try {
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive))
                    .as("task alive after the agent died")
                    .contains(true);
            try (LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
                    RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator)) {
                TaskHandle recovered = driver.recover(handle);
                Files.writeString(dir.resolve("t/release"), "");
                assertThat(driver.exit(recovered).get(10, TimeUnit.SECONDS)).isEqualTo(ExitResult.code(6));
            }
        } finally {
            new ProcessBuilder(List.of("kill", "-KILL", "--", "-" + pid))
                    .start()
                    .waitFor(5, TimeUnit.SECONDS);
        }
    }
}
