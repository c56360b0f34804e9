package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent opens its state store and begins reading it before it waits for the API server (a restart's read of
 * thousands of allocations then overlaps the wait), so a data dir that cannot hold a store is told at once, not once
 * the API server answers. The agent runs as a child JVM: it installs its own TERM and INT handlers.
 */
class MainStoreFirstTest {

    @TempDir
    Path dir;

    @Test
    void anUnusableDataDirIsToldAtOnceWhileTheApiServerIsUnreachable() throws Exception {
        Path notADirectory = Files.writeString(dir.resolve("data"), "a file where the data dir should be");
        // a port nothing listens on: the wait for the API server would retry for as long as the agent runs
        Path kubeconfig = Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters:
                - name: c
                  cluster:
                    server: https://127.0.0.1:1
                    insecure-skip-tls-verify: true
                users:
                - name: u
                  user:
                    token: t
                contexts:
                - name: x
                  context:
                    cluster: c
                    user: u
                current-context: x
                """);
        Path stderr = dir.resolve("stderr.txt");
        Process agent = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "--enable-native-access=ALL-UNNAMED",
                        "-XX:TieredStopAtLevel=1",
                        "-cp",
                        System.getProperty("java.class.path"),
                        Main.class.getName(),
                        "--node",
                        "n1",
                        "--data-dir",
                        notADirectory.toString(),
                        "--kubeconfig",
                        kubeconfig.toString())
                .redirectErrorStream(true)
                .redirectOutput(stderr.toFile())
                .start();
        try {
            assertThat(agent.waitFor(60, TimeUnit.SECONDS))
                    .as("the agent exited without waiting for the API server: %s", Files.readString(stderr))
                    .isTrue();
            assertThat(agent.exitValue()).isEqualTo(Main.EXIT_FAILED);
            assertThat(Files.readString(stderr, StandardCharsets.UTF_8))
                    .contains("drover-agent: the data dir " + notADirectory + " cannot be used");
        } finally {
            agent.destroyForcibly();
            agent.waitFor(30, TimeUnit.SECONDS);
        }
    }
}
