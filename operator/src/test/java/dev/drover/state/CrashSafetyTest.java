package dev.drover.state;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.api.v1alpha1.TaskState;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills a writing child JVM with SIGKILL at random moments, then checks that
 * every write it acknowledged is in the store, intact. Rounds: 10, or
 * {@code -Ddrover.crash.rounds=N}; {@code -Ddrover.crash.seed=S} replays a run.
 */
class CrashSafetyTest {

    @TempDir
    Path dir;

    @Test
    void everyAcknowledgedWriteSurvivesSigkill() throws Exception {
        int rounds = Integer.getInteger("drover.crash.rounds", 10);
        long seed = Long.getLong("drover.crash.seed", new Random().nextLong());
        Random random = new Random(seed);
        Path dataDir = dir.resolve("data");
        Map<String, Long> acknowledged = new ConcurrentHashMap<>();
        long totalAcks = 0;

        for (int round = 1; round <= rounds; round++) {
            int killAfterAcks = 1 + random.nextInt(300);
            String context = "round " + round + " of seed " + seed + " (rerun with -Ddrover.crash.seed=" + seed + ")";
            totalAcks += runAndKill(dataDir, killAfterAcks, acknowledged, context);

            try (StateDB db = StateStores.open(dataDir)) {
                for (Map.Entry<String, Long> ack : acknowledged.entrySet()) {
                    String task = ack.getKey();
                    TaskState stored = db.getTaskState(CrashWriter.ALLOC, task).orElse(null);
                    assertThat(stored)
                            .as("%s: %s acknowledged seq %d but nothing is stored", context, task, ack.getValue())
                            .isNotNull();
                    long seq = CrashWriter.seq(stored);
                    assertThat(seq).as("%s: stored seq of %s", context, task).isGreaterThanOrEqualTo(ack.getValue());
                    assertThat(CrashWriter.payload(stored))
                            .as("%s: payload of %s seq %d", context, task, seq)
                            .isEqualTo(CrashWriter.payload(task, seq));
                }
            }
        }
        assertThat(totalAcks).as("acknowledged writes over all rounds").isGreaterThanOrEqualTo(rounds);
    }

    /** Runs a child until it has acknowledged {@code killAfterAcks} writes, then SIGKILLs it. */
    private long runAndKill(Path dataDir, int killAfterAcks, Map<String, Long> acknowledged, String context)
            throws Exception {
        Path stderr = dir.resolve("child-stderr.txt");
        Path nativeDir = Files.createDirectories(dir.resolve("native"));
        Process child = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "--enable-native-access=ALL-UNNAMED",
                        "-XX:TieredStopAtLevel=1",
                        // SIGKILL skips sqlite-jdbc's clean-up of its extracted library: keep it inside the temp dir.
                        "-Dorg.sqlite.tmpdir=" + nativeDir,
                        "-cp",
                        System.getProperty("java.class.path"),
                        CrashWriter.class.getName(),
                        dataDir.toString())
                .redirectError(stderr.toFile())
                .start();
        AtomicInteger acks = new AtomicInteger();
        try (BufferedReader lines =
                new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = lines.readLine()) != null) {
                String[] f = line.split(" ");
                // A line cut by the kill lacks its "end" and proves nothing.
                if (f.length == 4 && f[0].equals("ack") && f[3].equals("end")) {
                    acknowledged.merge(f[1], Long.parseLong(f[2]), Math::max);
                    if (acks.incrementAndGet() == killAfterAcks) {
                        // SIGKILL through the handle, which (unlike Process.destroyForcibly) leaves our end of
                        // the pipe open: acknowledgements already in it are read and checked too.
                        child.toHandle().destroyForcibly();
                    }
                }
            }
        } finally {
            child.destroyForcibly();
            assertThat(child.waitFor(30, TimeUnit.SECONDS))
                    .as("%s: child exited", context)
                    .isTrue();
        }
        assertThat(acks.get())
                .as("%s: child acknowledged writes before the kill; its stderr: %s", context, readQuietly(stderr))
                .isGreaterThanOrEqualTo(killAfterAcks);
        assertThat(child.exitValue()).as("%s: killed by SIGKILL", context).isEqualTo(137);
        return acks.get();
    }

    private static List<String> readQuietly(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            return List.of("(unreadable: " + e + ")");
        }
    }
}
