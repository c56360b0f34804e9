package dev.drover.driver.rawexec;

import dev.drover.driver.TaskConfig;
import dev.drover.driver.TaskHandle;
import dev.drover.driver.host.LogRotator;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Stands in for the agent in {@link SurvivesAgentKillTest}: starts one raw_exec
 * task, prints its handle, then waits to be killed.
 */
public final class AgentProcess {

    private AgentProcess() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        LogRotator rotator = new LogRotator(1 << 20, 2, Duration.ofSeconds(1));
        RawExecDriver driver = new RawExecDriver(Clock.systemUTC(), rotator);
        TaskConfig task = new TaskConfig(
                "default",
                "a",
                "t",
                Map.of(
                        "command",
                        "/bin/sh",
                        "args",
                        List.of("-c", "while [ ! -e release ]; do sleep 0.05; done; exit 6")),
                Map.of(),
                dir,
                dir.resolve("t"),
                dir.resolve("logs"),
                dir.resolve("t/secrets"));
        java.nio.file.Files.createDirectories(dir.resolve("t"));
        TaskHandle h = driver.start(task);
        StringBuilder line = new StringBuilder("HANDLE ").append(h.startedAt());
        h.state().forEach((k, v) -> line.append(' ').append(k).append('=').append(v));
        System.out.println(line);
        System.out.flush();
        Thread.sleep(Duration.ofMinutes(5));
    }
}
