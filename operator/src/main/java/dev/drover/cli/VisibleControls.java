package dev.drover.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A task's output on its way to a terminal, with the bytes a terminal would take as commands written as text: a
 * task (anyone who may create an Allocation) could otherwise move the cursor, rewrite what the user read before,
 * set the window title or, on some terminals, have keys typed back. Control characters other than newline and tab
 * show as {@code \x1b} (C0 and DEL), {@code \u009b} (C1) or {@code \r} (a carriage return not ending a line), and a
 * byte that is not UTF-8 as {@code \xff}; UTF-8 text passes as it came. A character split across two writes is kept
 * whole: its first bytes wait for the rest, and {@link #finish} writes what a stream ended in the middle of.
 */
final class VisibleControls extends OutputStream {

    private final OutputStream out;
    /** The first bytes of a character whose rest has not come yet. */
    private final byte[] partial = new byte[4];

    private int partialLength;
    /** How many bytes the character in {@link #partial} has in all. */
    private int expected;
    /** A carriage return that shows as one unless a newline follows it. */
    private boolean carriageReturn;

    VisibleControls(OutputStream out) {
        this.out = out;
    }

    @Override
    public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        ByteArrayOutputStream shown = new ByteArrayOutputStream(len + 16);
        for (int i = off; i < off + len; i++) {
            take(b[i] & 0xFF, shown);
        }
        shown.writeTo(out);
    }

    @Override
    public void flush() throws IOException {
        out.flush(); // a partial character and a carriage return wait: the next write says what they are
    }

    /** At the end of the stream: a character cut short shows as its bytes, a last carriage return as one. */
    void finish() throws IOException {
        ByteArrayOutputStream shown = new ByteArrayOutputStream();
        flushPartial(shown);
        flushCarriageReturn(shown, false);
        shown.writeTo(out);
        out.flush();
    }

    private void take(int b, ByteArrayOutputStream shown) {
        if (partialLength > 0) {
            if (continues(b)) {
                partial[partialLength++] = (byte) b;
                if (partialLength == expected) {
                    character(shown);
                }
                return;
            }
            flushPartial(shown); // the lead byte and what followed it were no character: shown as bytes
        }
        flushCarriageReturn(shown, b == '\n');
        if (b == '\r') {
            carriageReturn = true;
        } else if (b < 0x80) {
            if (b == '\n' || b == '\t' || (b >= 0x20 && b < 0x7F)) {
                shown.write(b);
            } else {
                hex(b, shown);
            }
        } else {
            expected = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
            if (expected == 0) {
                hex(b, shown); // a continuation byte alone, an overlong lead (C0, C1) or past U+10FFFF (F5 to FF)
            } else {
                partial[0] = (byte) b;
                partialLength = 1;
            }
        }
    }

    /** Whether {@code b} may be the next byte of the character in {@link #partial} (RFC 3629's table). */
    private boolean continues(int b) {
        if (partialLength == 1) {
            return switch (partial[0] & 0xFF) {
                case 0xE0 -> b >= 0xA0 && b <= 0xBF; // no overlong form
                case 0xED -> b >= 0x80 && b <= 0x9F; // no surrogate
                case 0xF0 -> b >= 0x90 && b <= 0xBF;
                case 0xF4 -> b >= 0x80 && b <= 0x8F; // nothing past U+10FFFF
                default -> b >= 0x80 && b <= 0xBF;
            };
        }
        return b >= 0x80 && b <= 0xBF;
    }

    /** A whole character: as it came, unless it is a C1 control (U+0080 to U+009F; CSI is U+009B). */
    private void character(ByteArrayOutputStream shown) {
        int lead = partial[0] & 0xFF;
        int second = partial[1] & 0xFF;
        if (expected == 2 && lead == 0xC2 && second <= 0x9F) {
            shown.writeBytes(String.format("\\u%04x", second).getBytes(StandardCharsets.US_ASCII));
        } else {
            shown.write(partial, 0, expected);
        }
        partialLength = 0;
    }

    private void flushPartial(ByteArrayOutputStream shown) {
        for (int i = 0; i < partialLength; i++) {
            hex(partial[i] & 0xFF, shown);
        }
        partialLength = 0;
    }

    private void flushCarriageReturn(ByteArrayOutputStream shown, boolean endsALine) {
        if (carriageReturn) {
            if (endsALine) {
                shown.write('\r');
            } else {
                shown.writeBytes(new byte[] {'\\', 'r'});
            }
            carriageReturn = false;
        }
    }

    private static void hex(int b, ByteArrayOutputStream shown) {
        shown.writeBytes(String.format("\\x%02x", b).getBytes(StandardCharsets.US_ASCII));
    }
}
