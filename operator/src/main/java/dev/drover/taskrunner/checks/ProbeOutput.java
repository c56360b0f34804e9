package dev.drover.taskrunner.checks;

import dev.drover.api.v1alpha1.CheckStatus;
import dev.drover.common.Durations;
import dev.drover.common.UserText;
import java.nio.ByteBuffer;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A probe's output as a check's status shows it. What a task answers is hostile: it may be binary, hold terminal
 * escapes or be megabytes long, so an output is decoded leniently, its line breaks and tabs become spaces, other
 * control characters become U+FFFD, and it is cut at {@link CheckStatus#MAX_OUTPUT} characters.
 */
final class ProbeOutput {

    /** The most bytes of a body or a command's output a probe keeps; what follows is not kept. */
    static final int KEPT_BYTES = 1024;

    private ProbeOutput() {}

    /** {@code length} bytes of {@code bytes} as UTF-8 (invalid sequences replaced), cleaned. */
    static String decode(byte[] bytes, int length) {
        try {
            return clean(StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPLACE)
                    .onUnmappableCharacter(CodingErrorAction.REPLACE)
                    .decode(ByteBuffer.wrap(bytes, 0, length))
                    .toString());
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new IllegalStateException("a replacing decoder cannot fail", e);
        }
    }

    /** {@code text} without control characters, trimmed, and cut at {@link CheckStatus#MAX_OUTPUT} characters. */
    static String clean(String text) {
        StringBuilder out = new StringBuilder(Math.min(text.length(), CheckStatus.MAX_OUTPUT + 64));
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\n' || c == '\r' || c == '\t') {
                out.append(' ');
            } else if (Character.isISOControl(c)) { // C0, DEL and C1
                out.append('\uFFFD');
            } else {
                out.append(c);
            }
        }
        return UserText.cut(out.toString().strip(), CheckStatus.MAX_OUTPUT);
    }

    /** The output of a probe that did not finish within its check's timeout. */
    static String timedOut(Duration timeout) {
        return "timed out after " + Durations.format(timeout);
    }
}
