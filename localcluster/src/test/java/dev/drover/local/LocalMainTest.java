package dev.drover.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.cli.flags.Flag;
import dev.drover.cli.flags.Subcommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * drover-local's help lists every command and every flag its parser takes: the expectations come from the table the
 * parser reads, so a flag added without help fails here.
 */
class LocalMainTest {

    record Run(int exit, String out, String err) {}

    static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = LocalMain.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void theHelpListsEveryCommandAndEveryFlag() {
        for (String ask : new String[] {"--help", "-h", "help"}) {
            Run r = run(ask);
            assertThat(r.exit()).isZero();
            for (Subcommand c : LocalCommandLine.COMMANDS) {
                assertThat(r.out())
                        .containsPattern(
                                "(?m)^  " + Pattern.quote(c.synopsis()) + " +" + Pattern.quote(c.summary()) + "$");
                LocalCommandLine.flags(c).forEach(f -> assertThat(r.out()).contains(line(f)));
            }
        }
    }

    @Test
    void eachCommandsHelpListsItsFlags() {
        for (Subcommand c : LocalCommandLine.COMMANDS) {
            for (String ask : new String[] {"--help", "-h"}) {
                Run r = run(c.name(), ask);
                assertThat(r.exit()).as(c.name() + " " + ask).isZero();
                assertThat(r.err()).isEmpty();
                assertThat(r.out())
                        .startsWith("usage: drover-local " + c.name())
                        .contains(c.summary());
                LocalCommandLine.flags(c).forEach(f -> assertThat(r.out()).contains(line(f)));
            }
        }
    }

    @Test
    void benchGivenToTheJarSaysWhereTheLoadHarnessIs() {
        Run bench = run("bench", "--allocs", "10");
        assertThat(bench.exit()).isEqualTo(2);
        assertThat(bench.err())
                .isEqualTo("drover-local: the load harness is benchmarks/target/drover-bench.jar: run it with"
                        + " bin/drover-local bench, or java -jar benchmarks/target/drover-bench.jar"
                        + System.lineSeparator());
    }

    @Test
    void aBadFlagOrCommandIsOneSentenceThenTheUsageAndExitTwo() {
        Run flag = run("up", "--kubeconfg", "x");
        assertThat(flag.exit()).isEqualTo(2);
        assertThat(flag.err().lines().findFirst().orElseThrow())
                .isEqualTo("drover-local: unknown flag \"--kubeconfg\"");
        assertThat(flag.err()).contains("usage: drover-local up");
        Run command = run("down");
        assertThat(command.exit()).isEqualTo(2);
        assertThat(command.err()).startsWith("drover-local: unknown command \"down\" (commands: apiserver, up)");
        assertThat(run("apiserver").err()).startsWith("drover-local: apiserver needs --kubeconfig FILE");
        assertThat(run("apiserver", "--kubeconfig", "k", "--port", "99999").err())
                .startsWith("drover-local: --port \"99999\" is not a port number");
        assertThat(run("up", "stray").err()).startsWith("drover-local: up takes flags only, not \"stray\"");
        assertThat(run("up", "--kubeconfig", "k", "--bind-address", "localhost").err())
                .startsWith("drover-local: --bind-address \"localhost\" is not an IP address");
        assertThat(run().exit()).isEqualTo(2);
    }

    private static String line(Flag f) {
        return f.synopsis() + "  ";
    }
}
