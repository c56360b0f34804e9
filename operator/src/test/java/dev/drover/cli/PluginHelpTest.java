package dev.drover.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drover.cli.flags.Flag;
import dev.drover.cli.flags.Subcommand;
import org.junit.jupiter.api.Test;

/**
 * Every command and flag the parser accepts is in {@code --help}, one line each: the expectations come from the same
 * table the parser reads, so a flag added without help fails here.
 */
class PluginHelpTest {

    @Test
    void theHelpListsEveryCommandAndEveryFlagOnALineOfItsOwn() {
        for (String ask : new String[] {"--help", "-h", "help"}) {
            KubectlDroverTest.Run r = KubectlDroverTest.run(ask);
            assertThat(r.exit()).as(ask).isZero();
            assertThat(r.err()).as("help is on stdout").isEmpty();
            for (Subcommand c : PluginCommandLine.COMMANDS) {
                assertThat(r.out())
                        .containsPattern("(?m)^  " + java.util.regex.Pattern.quote(c.synopsis()) + " +"
                                + java.util.regex.Pattern.quote(c.summary()) + "$");
                c.flags().forEach(f -> assertThat(r.out()).contains(line(f)));
            }
            PluginCommandLine.COMMON.forEach(f -> assertThat(r.out()).contains(line(f)));
        }
    }

    @Test
    void eachCommandsHelpListsItsOwnFlagsAndTheCommonOnes() {
        for (Subcommand c : PluginCommandLine.COMMANDS) {
            for (String ask : new String[] {"--help", "-h"}) {
                KubectlDroverTest.Run r = KubectlDroverTest.run(c.name(), ask);
                assertThat(r.exit()).as(c.name() + " " + ask).isZero();
                assertThat(r.out()).startsWith("usage: kubectl drover " + c.name());
                assertThat(r.out()).contains(c.summary(), "needs " + PluginCommandLine.ACCESS.get(c.name()));
                PluginCommandLine.flags(c).forEach(f -> assertThat(r.out()).contains(line(f)));
                PluginCommandLine.COMMANDS.stream()
                        .filter(other -> other != c)
                        .flatMap(other -> other.flags().stream())
                        .filter(f -> !c.flags().contains(f))
                        .forEach(f -> assertThat(r.out())
                                .as("%s's help leaves out %s", c.name(), f.name())
                                .doesNotContain(f.synopsis()));
            }
        }
        assertThat(KubectlDroverTest.run("logs", "web", "--help").out())
                .as("help wins over missing arguments")
                .startsWith("usage: kubectl drover logs ALLOC TASK");
    }

    @Test
    void aBadFlagOrCommandIsOneSentenceThenTheUsageOnStderrAndExitTwo() {
        KubectlDroverTest.Run flag = KubectlDroverTest.run("status", "web", "--colour");
        assertThat(flag.exit()).isEqualTo(2);
        assertThat(flag.out()).isEmpty();
        assertThat(flag.err().lines().findFirst().orElseThrow()).isEqualTo("kubectl drover: unknown flag \"--colour\"");
        assertThat(flag.err()).contains("usage: kubectl drover status ALLOC");
        KubectlDroverTest.Run command = KubectlDroverTest.run("attach", "web");
        assertThat(command.exit()).isEqualTo(2);
        assertThat(command.err().lines().findFirst().orElseThrow())
                .isEqualTo("kubectl drover: unknown command \"attach\" (commands: logs, stats, status, restart,"
                        + " signal, exec, version, completion)");
        assertThat(command.err()).contains("commands:");
        KubectlDroverTest.Run leading = KubectlDroverTest.run("--colour");
        assertThat(leading.exit()).isEqualTo(2);
        assertThat(leading.err()).startsWith("kubectl drover: unknown flag \"--colour\"");
        assertThat(KubectlDroverTest.run().exit()).isEqualTo(2);
    }

    @Test
    void flagsReadAsKubectlReadsThem() throws Exception {
        PluginCommand exec = PluginCommandLine.parse(
                new String[] {"exec", "-it", "web", "main", "-v", "--", "sh", "-c", "echo --help"});
        assertThat(exec.stdin()).isTrue();
        assertThat(exec.tty()).isTrue();
        assertThat(exec.verbose()).isTrue();
        assertThat(exec.command()).containsExactly("sh", "-c", "echo --help");
        assertThat(KubectlDroverTest.run("logs", "web", "main", "--follow=yes").err())
                .contains("--follow takes no value");
        assertThat(KubectlDroverTest.run("exec", "web", "main").err()).contains("exec needs the command after `--`");
    }

    private static String line(Flag f) {
        return f.synopsis() + "  ";
    }
}
