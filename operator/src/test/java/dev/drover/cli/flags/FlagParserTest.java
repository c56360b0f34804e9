package dev.drover.cli.flags;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class FlagParserTest {

    static final Flag PORT = Flag.valued("--port", "-p", "N", "the port");
    static final Flag QUIET = Flag.on("--quiet", "-q", "says less");
    static final Flag ALL = Flag.on("--all", "-a", "all of them");
    static final List<Flag> TABLE = List.of(PORT, QUIET, ALL);

    @Test
    void valuesComeApartOrAfterAnEqualsSignAndRepeatInOrder() throws Exception {
        ParsedArgs p = FlagParser.parse(TABLE, List.of("x", "--port", "1", "-p", "2", "--port=3", "-qa", "y"), false);
        assertThat(p.values("--port")).containsExactly("1", "2", "3");
        assertThat(p.value("--port")).isEqualTo("3");
        assertThat(p.has("--quiet")).isTrue();
        assertThat(p.has("--all")).isTrue();
        assertThat(p.positional()).containsExactly("x", "y");
    }

    @Test
    void dashDashEndsTheFlagsOneWayOrTheOther() throws Exception {
        ParsedArgs rest = FlagParser.parse(TABLE, List.of("x", "--", "-q", "--help"), true);
        assertThat(rest.rest()).containsExactly("-q", "--help");
        assertThat(rest.dashDash()).isTrue();
        assertThat(rest.has("--quiet")).isFalse();
        ParsedArgs positional = FlagParser.parse(TABLE, List.of("--", "-q"), false);
        assertThat(positional.positional()).containsExactly("-q");
    }

    @Test
    void helpIsTakenAnywhereBeforeDashDash() throws Exception {
        assertThat(FlagParser.parse(TABLE, List.of("x", "-h"), false).help()).isTrue();
        assertThat(FlagParser.parse(TABLE, List.of("--help", "--nope"), false).help())
                .isTrue();
    }

    @Test
    void faultsAreNamedInOneSentence() {
        assertThatThrownBy(() -> FlagParser.parse(TABLE, List.of("--nope=1"), false))
                .isInstanceOf(UsageError.class)
                .hasMessage("unknown flag \"--nope\"")
                .extracting(e -> ((UsageError) e).flag())
                .isEqualTo("--nope");
        assertThatThrownBy(() -> FlagParser.parse(TABLE, List.of("-qz"), false))
                .hasMessage("unknown flag \"-z\" (in \"-qz\")");
        assertThatThrownBy(() -> FlagParser.parse(TABLE, List.of("--port"), false))
                .hasMessage("--port needs a value (--port N)");
        assertThatThrownBy(() -> FlagParser.parse(TABLE, List.of("-qp"), false))
                .hasMessage("-p takes a value: give it apart (-p N)");
        assertThatThrownBy(() -> FlagParser.parse(TABLE, List.of("--quiet=yes"), false))
                .hasMessage("--quiet takes no value, not \"yes\"");
        assertThatThrownBy(() -> FlagParser.parse(TABLE, List.of("--port\u001b[2J"), false))
                .hasMessageNotContaining("\u001b");
    }

    @Test
    void aFlagWithoutOneLineOfHelpIsNotATableEntry() {
        assertThatThrownBy(() -> Flag.on("--x", null, "")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Flag.on("--x", null, "two\nlines")).isInstanceOf(IllegalArgumentException.class);
    }
}
