package dev.drover.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class VisibleControlsTest {

    /** {@code bytes} through a {@link VisibleControls}, {@code chunk} bytes a write, then finished. */
    static String shown(byte[] bytes, int chunk) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        VisibleControls visible = new VisibleControls(out);
        for (int i = 0; i < bytes.length; i += chunk) {
            visible.write(bytes, i, Math.min(chunk, bytes.length - i));
            visible.flush();
        }
        visible.finish();
        return out.toString(StandardCharsets.UTF_8);
    }

    static String shown(String text) throws IOException {
        return shown(text.getBytes(StandardCharsets.UTF_8), 8192);
    }

    @Test
    void aTasksEscapeSequencesReachATerminalAsText() throws IOException {
        assertThat(shown("\u001b]0;pwned\u0007\u001b[2J\u001b[31mred\u001b[0m\n"))
                .isEqualTo("\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mred\\x1b[0m\n");
        assertThat(shown("a\u0000b\u007fc\u009b2Jd\n")).isEqualTo("a\\x00b\\x7fc\\u009b2Jd\n");
        assertThat(shown("rm -rf /\rls\n"))
                .as("a carriage return that would write over a line shows")
                .isEqualTo("rm -rf /\\rls\n");
    }

    @Test
    void textNewlinesTabsAndLineEndsPassAsTheyCame() throws IOException {
        String text = "héllo\twörld 世界 🎉 \\x1b\r\nnext\n";
        assertThat(shown(text)).isEqualTo(text);
    }

    @Test
    void aCharacterSplitAcrossWritesIsKeptWhole() throws IOException {
        byte[] bytes = "é世🎉\r\n\u001b".getBytes(StandardCharsets.UTF_8);
        for (int chunk = 1; chunk <= 4; chunk++) {
            assertThat(shown(bytes, chunk)).as("%d bytes a write", chunk).isEqualTo("é世🎉\r\n\\x1b");
        }
    }

    @Test
    void bytesThatAreNotUtf8ShowAsHex() throws IOException {
        byte[] bytes = {'a', (byte) 0xFF, (byte) 0xC0, (byte) 0xAF, (byte) 0xED, (byte) 0xA0, (byte) 0x80, '\n'};
        assertThat(shown(bytes, 3))
                .as("a byte no character starts with, an overlong form, a surrogate")
                .isEqualTo("a\\xff\\xc0\\xaf\\xed\\xa0\\x80\n");
        assertThat(shown(new byte[] {'a', (byte) 0xE4, (byte) 0xB8}, 1))
                .as("a stream that ends within a character, and one that ends with a carriage return")
                .isEqualTo("a\\xe4\\xb8");
        assertThat(shown("done\r")).isEqualTo("done\\r");
    }
}
