package dev.drover.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class ExecRequestTest {

    @Test
    void describeNamesTheProgramButNeverItsArguments() {
        ExecRequest r = new ExecRequest(List.of("curl", "-H", "Authorization: Bearer s3cret"), false, false);
        assertThat(r.describe()).contains("curl").doesNotContain("s3cret");
    }

    @Test
    void refusesNoCommandAndAnEmptyProgram() {
        assertThatThrownBy(() -> new ExecRequest(List.of(), false, false)).hasMessageContaining("a command to run");
        assertThatThrownBy(() -> new ExecRequest(List.of(""), false, false)).hasMessageContaining("a command to run");
    }

    @Test
    void boundsWordsCharactersAndRefusesNul() {
        assertThatThrownBy(() -> new ExecRequest(Collections.nCopies(257, "x"), false, false))
                .hasMessageContaining("257 words, more than 256");
        assertThatThrownBy(() -> new ExecRequest(List.of("sh", "x".repeat(512 * 1024)), false, false))
                .hasMessageContaining("more than 524288");
        assertThatThrownBy(() -> new ExecRequest(List.of("sh", "a\0b"), false, false))
                .hasMessageContaining("NUL");
    }
}
