package dev.drover.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class BenchMainTest {

    record Run(int exit, String out, String err) {}

    private static Run run(String... args) {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        int exit = BenchMain.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void helpListsTheBenchFlagsAndExitsZero() {
        Run help = run("--help");
        assertThat(help.exit()).isZero();
        assertThat(help.out()).startsWith("usage: java -jar drover-bench.jar").contains("--allocs", "--aot-out");
    }

    @Test
    void anUnknownFlagIsAUsageErrorWithoutStartingAnything() {
        Run bad = run("--allocz", "5");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).startsWith("drover-bench: ").contains("--allocz").contains("usage:");
    }
}
