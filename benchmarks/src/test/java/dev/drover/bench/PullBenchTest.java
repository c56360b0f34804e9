package dev.drover.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drover.cli.flags.UsageError;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PullBenchTest {

    @TempDir
    Path dir;

    @Test
    void pullTakesOneImageRunsAndACa() throws Exception {
        Path ca = Files.writeString(dir.resolve("ca.pem"), "PEM");
        assertThat(PullBench.parse(List.of("--runs", "5", "--registry-ca-file", ca.toString(), "127.0.0.1:5000/big:1")))
                .isEqualTo(new PullBench.Options("127.0.0.1:5000/big:1", 5, ca.toAbsolutePath(), false));
        assertThat(PullBench.parse(List.of("busybox:1"))).isEqualTo(new PullBench.Options("busybox:1", 3, null, false));
    }

    @Test
    void whatPullCannotUseIsRefusedSayingWhy() {
        assertThatThrownBy(() -> PullBench.parse(List.of()))
                .isInstanceOf(UsageError.class)
                .hasMessage("pull takes one image, not 0 arguments");
        assertThatThrownBy(() -> PullBench.parse(List.of("a:1", "b:1")))
                .isInstanceOf(UsageError.class)
                .hasMessage("pull takes one image, not 2 arguments");
        for (String runs : List.of("0", "101", "many")) {
            assertThatThrownBy(() -> PullBench.parse(List.of("--runs", runs, "busybox:1")))
                    .isInstanceOf(UsageError.class)
                    .hasMessage("--runs needs a whole number from 1 to 100, not \"" + runs + "\"");
        }
        assertThatThrownBy(() -> PullBench.parse(List.of("Not An Image")))
                .isInstanceOf(UsageError.class)
                .hasMessageContaining("\"Not An Image\"");
        assertThatThrownBy(() -> PullBench.parse(List.of("--registry-ca-file", "none\n.pem", "busybox:1")))
                .isInstanceOf(UsageError.class)
                .hasMessage("--registry-ca-file names no file: \"none\\u000a.pem\"");
    }

    @Test
    void theSubcommandPrintsItsUsageOnHelpAndOnAMistake() {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        int exit = BenchMain.run(
                new String[] {"pull", "--help"},
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(exit).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8))
                .startsWith("usage: java -jar drover-bench.jar pull")
                .contains("--runs", "--registry-ca-file");
        exit = BenchMain.run(
                new String[] {"pull"},
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(exit).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .startsWith("drover-bench pull: pull takes one image, not 0 arguments")
                .contains("usage:");
    }

    @Test
    void theMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo() {
        assertThat(PullBench.median(List.of(3.0, 1.0, 2.0))).isEqualTo(2.0);
        assertThat(PullBench.median(List.of(4.0, 1.0, 2.0, 3.0))).isEqualTo(2.5);
    }
}
