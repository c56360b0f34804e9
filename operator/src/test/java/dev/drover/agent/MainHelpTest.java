package dev.drover.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class MainHelpTest {

    private static String help() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(
                new String[] {"--help"},
                Map.of(),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isZero();
        assertThat(err.toString(StandardCharsets.UTF_8)).isEmpty();
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void helpListsEveryFlagTheAgentAccepts() {
        String help = help();
        TreeSet<String> accepted = new TreeSet<>(AgentFlags.WITH_VALUE);
        accepted.addAll(AgentFlags.SWITCHES);
        assertThat(accepted)
                .isNotEmpty()
                .allSatisfy(flag -> assertThat(Pattern.compile(Pattern.quote(flag) + "(?![A-Za-z0-9-])")
                                .matcher(help)
                                .find())
                        .as("--help names %s", flag)
                        .isTrue());
    }

    @Test
    void usageAfterABadFlagListsEveryFlagToo() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(
                new String[] {"--no-such-flag"},
                Map.of(),
                new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isEqualTo(Main.EXIT_USAGE);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("unknown argument \"--no-such-flag\"")
                .contains(help());
    }
}
