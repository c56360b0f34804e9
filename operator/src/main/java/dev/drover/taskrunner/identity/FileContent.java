package dev.drover.taskrunner.identity;

import java.util.Arrays;

/** One projected file: its bytes and mode bits. {@link #toString()} never shows the bytes. */
record FileContent(byte[] bytes, int mode) {

    FileContent {
        bytes = bytes.clone();
    }

    @Override
    public byte[] bytes() {
        return bytes.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof FileContent f && mode == f.mode && Arrays.equals(bytes, f.bytes);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(bytes) + mode;
    }

    @Override
    public String toString() {
        return "FileContent[" + bytes.length + " bytes, mode " + Integer.toOctalString(mode) + "]";
    }
}
